"""The Spark engine's part of the pipeline (:func:`planlineage.pipeline.extract` composes it):
statements -> Spark's own parser in a child inside the version's venv -> logical plans -> walk
(targets <- sources) -> naming -> JobLineage.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from planlineage import script as sql_script
from planlineage.document import ColumnInput, ColumnTransformation, JobLineage, SinkLineage
from planlineage.engine import ExtractJob
from planlineage.errors import ExtractError
from planlineage.registry import IdentityConfig
from planlineage.registry.secrets import redact_sql, redact_text
from planlineage.spark.client import SparkParser
from planlineage.spark.columns import analyse
from planlineage.spark.naming import table_lineage, trimmed
from planlineage.spark.provision import ensure
from planlineage.spark.request import build_request
from planlineage.spark.trimmers import name_trimming
from planlineage.spark.walk import Target, walk


class ParsedScript:
    """A script Spark's parser answered for: its logical plans, and the statements sent."""

    def __init__(self, answer: dict, statements: list[sql_script.Statement], script: str) -> None:
        self.answer, self.statements, self.script = answer, statements, script


def compile_script(statements: list[sql_script.Statement], script: str, job: ExtractJob) -> ParsedScript:
    """The statements parsed (and analyzed where Spark can) by the version's Spark, in the
    caller's parser or one started for this script. Raises ProvisionError, PlannerError."""
    request = build_request(statements)
    if job.compiler is not None:
        answer = job.compiler.parse(request, timeout=job.timeout)
    else:
        with SparkParser(ensure(job.version)) as started:
            answer = started.parse(request, timeout=job.timeout)
    return ParsedScript(answer, statements, script)


def lineage_from(parsed: ParsedScript, job: ExtractJob) -> JobLineage:
    """The document of a parsed script (see :func:`lineage_of`)."""
    return lineage_of(parsed.answer, parsed.statements, parsed.script, job.identity, job.conf, job.columns)


def lineage_of(
    answer: dict,
    statements: list[sql_script.Statement],
    script: str,
    identity: IdentityConfig | None = None,
    conf: Mapping[str, str] | None = None,
    columns: bool = False,
) -> JobLineage:
    """The document of a parse answer: what the unit tests replay from recorded answers, no JVM."""
    secrets = spark_options(script)
    if not answer.get("ok"):
        raise _parse_error(answer.get("error") or {}, statements, secrets)
    conf = dict(conf or {})
    catalogs = frozenset(
        k.split(".")[3].lower() for k in conf if k.startswith("spark.sql.catalog.") and k.count(".") == 3
    )
    found = walk(answer["statements"], catalogs - {"spark_catalog"})
    warnings = list(found.warnings)
    trimming = name_trimming(conf)
    warnings += trimming.warnings
    warnings += _openlineage_sets(statements)
    sinks = []
    for target in found.targets:
        sink = trimmed(table_lineage(target.source, conf, identity, warnings), trimming)
        inputs = [trimmed(table_lineage(source, conf, identity, warnings), trimming) for source in target.inputs]
        sinks.append(
            SinkLineage(
                **sink.model_dump(by_alias=True),
                inputs=inputs,
                lifecycle_state_change=target.lifecycle,
                statement=_statement_of(target, statements, secrets),
            )
        )
        if columns:
            sinks[-1].columns = column_lineage(target, [c.name for c in sink.schema_])
    return JobLineage(
        spark_version=answer.get("spark_version"),
        runtime_mode="batch",
        sinks=sinks,
        warnings=[redact_text(w, secrets) for w in dict.fromkeys(warnings)],
    )


def _statement_of(target: Target, statements: list[sql_script.Statement], secrets: dict[str, str]) -> str | None:
    """The statement(s) writing ``target`` as the script has them (redacted): its job's SQL facet,
    as openlineage-spark's is the statement it executes."""
    by_line = {statement.line: statement.sql for statement in statements}
    found = [by_line[line] for line in target.lines if line in by_line]
    return redact_sql(";\n".join(found), secrets) if found else None


def _openlineage_sets(statements: list[sql_script.Statement]) -> list[str]:
    """openlineage-spark reads its settings from the application's Spark conf once, when the
    listener starts (ArgumentParser.parse(SparkConf)); a script's SET only changes the session's
    SQL conf, which it never reads. Such a SET changes nothing, for the producer nor here."""
    return [
        f"statement at line {statement.line}: SET {statement.set_pair[0]} does not reach openlineage-spark, "
        "which reads its settings from the application's Spark conf when the application starts; "
        "pass it there (--spark-conf, the app's properties): here it is ignored too"
        for statement in statements
        if statement.set_pair and statement.set_pair[0].strip().lower().startswith("spark.openlineage.")
    ]


def column_lineage(target: Target, target_columns: list[str]) -> dict[str, list[ColumnInput]] | None:
    """Per target column, its source columns; None unless the analyzer resolved every write.

    Columns are matched by position, as INSERT does; a target whose columns are known is named by
    them, else by the query's output names (CTAS).
    """
    plans = [plan for plan in target.query_plans if plan is not None]
    if not plans or len(plans) != len(target.query_plans):
        return None
    merged: dict[str, dict[tuple[str, str], set[tuple[str, str]]]] = {}
    for plan in plans:
        query = analyse(plan)
        names = target_columns if len(target_columns) == len(query.columns) else [n for n, _ in query.columns]
        for name, (_, exprid) in zip(names, query.columns):
            column = merged.setdefault(name, {})
            for source, kinds in query.direct.get(exprid, {}).items():
                column.setdefault(source, set()).update(kinds)
            for source, kinds in query.indirect.items():
                column.setdefault(source, set()).update(kinds)
    return {
        name: [
            ColumnInput(
                table=table,
                column=column,
                transformations=[ColumnTransformation(type=t, subtype=sub) for t, sub in sorted(kinds)],
            )
            for (table, column), kinds in sources.items()
        ]
        for name, sources in merged.items()
    }


# OPTIONS (key 'value', 'key' 'value', key = 'value') and TBLPROPERTIES ('k' = 'v'). Linear in time
# and memory for a long literal (see planlineage.pipeline._OPTION_PAIR): a quoted key is bounded, a
# value a run of plain characters between its escapes, and a bare key read once per word (from
# its first letter, as before), not again from each of the word's letters.
_OPTION_PAIR = re.compile(
    r"(?:'((?:[^'\\]|\\.){0,256})'|(?<![\w.])[\d.]*+([A-Za-z_][\w.]*+))\s*=?\s*'([^'\\]*(?:\\.[^'\\]*)*)'"
)


def spark_options(script: str) -> dict[str, str]:
    """Every option pair a script writes, so that error and warning text can be redacted."""
    found: dict[str, str] = {}
    for index, (quoted, bare, value) in enumerate(_OPTION_PAIR.findall(script)):
        key = quoted or bare
        found[key if key not in found else f"{key}#{index}"] = value
    return found


def _parse_error(error: dict, statements: list[sql_script.Statement], secrets: dict[str, str]) -> ExtractError:
    reason = redact_text(str(error.get("message") or "unknown error").strip(), secrets)
    index = error.get("statement")
    if index is None or not (0 <= index < len(statements)):
        return ExtractError(f"the script cannot be parsed by Spark: {reason}")
    statement = statements[index]
    line = error.get("line") or statement.line
    head = " ".join(redact_sql(statement.sql, secrets).split())
    head = head if len(head) <= 80 else head[:77] + "..."
    return ExtractError(f"statement at line {statement.line} ({head}) cannot be parsed: line {line}: {reason}", line)
