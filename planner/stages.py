"""The Flink engine's part of the pipeline (:func:`planlineage.pipeline.extract` composes it):
statements -> the version's planner (a child in the version's venv, or its warm planner) ->
CompiledPlan JSON -> walk -> registry -> JobLineage.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal, Protocol, cast

from planlineage import script as sql_script
from planlineage.document import (
    ColumnInput,
    ColumnTransformation,
    JobLineage,
    SinkLineage,
    StandIn,
)
from planlineage.engine import ExtractJob
from planlineage.errors import ExtractError
from planlineage.pipeline import script_options
from planlineage.planner import warm_client
from planlineage.planner.compiler import Planner
from planlineage.planner.naming import static_table, table_lineage
from planlineage.planner.protocol import CompileAnswer, CompileRequest
from planlineage.planner.provision import ensure, without_compiled_plan
from planlineage.planner.provisioned import Provisioned
from planlineage.planner.request import build_request
from planlineage.planner.sink_statements import ScriptWrites, script_writes
from planlineage.planner.walk import sink_inputs
from planlineage.registry.secrets import redact_sql, redact_text


class JobCompiler(Protocol):
    """What compiles jobs for `extract`: a `Planner` (one JVM) or a self-healing warm one."""

    provisioned: Provisioned

    def compile(self, request: CompileRequest, timeout: float = ...) -> CompileAnswer: ...


@dataclass
class CompiledScript:
    """A script the planner compiled: its answer (plan, tables, stand-ins) and what was sent."""

    script: str
    statements: list[sql_script.Statement]
    provisioned: Provisioned
    mode: Literal["streaming", "batch"]
    answer: dict
    warnings: list[str] = field(default_factory=list)  # the script's own (EXECUTE PLAN)


def compile_script(statements: list[sql_script.Statement], script: str, job: ExtractJob) -> CompiledScript | JobLineage:
    """The script compiled by its version's planner; the document itself when nothing is left to
    walk: a Flink without CompiledPlan (read from the text), no statement writing a table, or a
    failure with stood-in catalogs that the text still answers. Raises ExtractError (the
    script's own failure), ProvisionError, PlannerError."""
    identity, planner = job.identity, job.compiler
    if without_compiled_plan(job.version):
        return _text_only(script, statements, str(job.version), identity)
    provisioned = planner.provisioned if planner else ensure(job.version)
    schemas = dict(identity.schemas) if identity else {}
    request, sent, mode = build_request(statements, provisioned, job.jars, table_schemas=schemas)
    script_warnings = [
        f"statement at line {s.line} runs a plan file compiled elsewhere (EXECUTE PLAN): the sinks of that "
        "plan are not in this lineage; analyse the script the plan was compiled from"
        for s in statements
        if s.kind is sql_script.Kind.PLAN_FILE
    ]
    if not any(s.kind in sql_script.SINKS for s in sent):
        return JobLineage(flink_version=provisioned.flink.version, runtime_mode=mode, warnings=script_warnings)

    with _planner_for(provisioned, planner) as compile_job:
        answer = compile_job(request, job.timeout)
        if (
            not answer.get("ok")
            and request["batch"]
            and answer.get("error", {}).get("statement") is not None
            and sent[answer["error"]["statement"]].kind in sql_script.SINKS
        ):
            # The batch planner could not put this job into a plan; the streaming re-plan reads
            # the same tables (see build_request).
            request, sent, mode = build_request(
                statements, provisioned, job.jars, replan_batch=True, table_schemas=schemas
            )
            answer = compile_job(request, job.timeout)
    if not answer.get("ok"):
        secrets = script_options(script)
        failure = _compile_error(answer.get("error") or {}, sent, secrets)
        degraded = _static_fallback(answer, statements, sent, identity, secrets, failure)
        if degraded is None:
            raise failure
        return JobLineage(
            flink_version=provisioned.flink.version,
            runtime_mode=mode,
            sinks=degraded[0],
            warnings=[*script_warnings, *degraded[1]],
        )
    return CompiledScript(script, statements, provisioned, mode, dict(answer), script_warnings)


def lineage_of(compiled: CompiledScript, job: ExtractJob) -> JobLineage:
    """The walk of the compiled plan (each sink's upstream), every table named, and the column
    lineage when ``job.columns``."""
    answer, script, identity = compiled.answer, compiled.script, job.identity
    tables = answer.get("tables") or {}
    warnings: list[str] = list(compiled.warnings)
    writes = script_writes(compiled.statements)
    sinks = []
    for pairing in sink_inputs(answer.get("plan") or {}):
        sink = table_lineage(pairing.sink, tables, identity, warnings, writes.catalog_types)
        inputs = [table_lineage(use, tables, identity, warnings, writes.catalog_types) for use in pairing.inputs]
        sinks.append(SinkLineage(**sink.model_dump(by_alias=True), inputs=inputs))
    # The script's options are read once, and only when there is text to redact: most jobs have no warning.
    options = script_options(script) if writes.sinks else None
    _attach_statements(sinks, writes, options or {})
    if job.columns:
        from planlineage.planner.columns import stand_in_functions  # a large module only --columns needs

        stood = frozenset(
            s["name"].rsplit(".", 1)[-1].upper() for s in answer.get("stand_ins") or [] if s.get("kind") == "function"
        )
        token = stand_in_functions.set(stood)
        try:
            warnings.extend(attach_columns(sinks, answer.get("plan") or {}, tables))
        finally:
            stand_in_functions.reset(token)
    return JobLineage(
        flink_version=compiled.provisioned.flink.version,
        runtime_mode=compiled.mode,
        sinks=sinks,
        warnings=_redacted(warnings, (script_options(script) if options is None else options) if warnings else {}),
        stand_ins=_stand_ins(answer.get("stand_ins") or [], tables),
    )


def _redacted(warnings: list[str], secrets: dict[str, str]) -> list[str]:
    """The warnings, once each, without any of the script's secret option values."""
    return [redact_text(w, secrets) for w in dict.fromkeys(warnings)]


def _static_fallback(answer: dict, statements, sent, identity, secrets, reason: ExtractError):
    """(sinks, warnings) read from the SQL text when a script with stood-in catalogs still does not
    compile (no schema makes its catalog tables fit); None for every other failure, which is the
    script's own and reported as such (a real catalog's refusal included, and a statement that
    used no undeclared catalog table or missed a column of a table the script declares: the
    planner says `guessed_tables` false)."""
    error = answer.get("error") or {}
    index = error.get("statement")
    catalogs = any(s.get("kind") == "catalog" for s in answer.get("stand_ins") or [])
    message = str(error.get("message") or "")
    if not catalogs or index is None or not (0 <= index < len(sent)) or sent[index].kind not in sql_script.SINKS:
        return None
    if error.get("guessed_tables") is False:
        return None
    if "SQL parse failed" in message:
        return None
    warnings = [
        redact_text(
            f'the plan could not be compiled ({reason}); sinks marked "method": "static" list the tables '
            "their SQL names, read from the text: columns of stood-in catalog tables could not be derived",
            secrets,
        )
    ]
    sinks = _static_sinks(statements, identity, warnings, secrets)
    return sinks, _redacted(warnings, secrets)


def _text_only(script: str, statements, version: str, identity) -> JobLineage:
    """A job of a Flink older than 1.15, whose planner has no CompiledPlan: the tables its SQL
    names, read from the text (another version's plan could differ from what the job runs)."""
    secrets = script_options(script)
    warnings = [
        f"Flink {version} has no CompiledPlan (it arrived in Flink 1.15), so no planner gives this job's "
        'lineage: sinks marked "method": "static" list the tables their SQL names, read from the text, '
        "without column lineage; Flink 1.15 or newer is compiled by its own planner"
    ]
    sinks = _static_sinks(statements, identity, warnings, secrets)
    return JobLineage(
        flink_version=version,
        runtime_mode=sql_script.runtime_mode(statements),
        sinks=sinks,
        warnings=_redacted(warnings, secrets),
    )


def _attach_statements(sinks: list[SinkLineage], writes: ScriptWrites, secrets: dict[str, str]) -> None:
    """Each sink's own statement(s) (redacted with the script's options) and the lifecycle state
    change they make: what its job's SQL facet and output facets say (see planner.sink_statements)."""
    for sink in sinks:
        found = writes.sinks.get(sink.table)
        if found is None or not found.statements:
            continue
        sink.statement = redact_sql(";\n".join(found.statements), secrets)
        if found.lifecycle in ("CREATE", "OVERWRITE") and sink.lifecycle_state_change is None:
            sink.lifecycle_state_change = cast(Literal["CREATE", "OVERWRITE"], found.lifecycle)


def _static_sinks(statements, identity, warnings: list[str], secrets: dict[str, str]) -> list[SinkLineage]:
    """The sinks the SQL text names, each with the tables its query names, marked static."""
    from planlineage.planner.static_lineage import static_lineage  # only a job not compiled reads the text

    writes = script_writes(statements)
    sinks = []
    for found in static_lineage(statements):
        sink = static_table(found.table, found.options, identity, warnings, writes.catalog_types)
        inputs = [
            static_table(name, options, identity, warnings, writes.catalog_types) for name, options in found.inputs
        ]
        sinks.append(SinkLineage(**sink.model_dump(by_alias=True), inputs=inputs, method="static"))
    _attach_statements(sinks, writes, secrets)
    return sinks


def _stand_ins(found: list[dict], tables: dict) -> list[StandIn]:
    """What was stood in; of a stand-in catalog's undeclared tables only those the plan uses (the
    planner also looks up prefixes of longer names, which are not tables of the job)."""
    return [StandIn.model_validate(s) for s in found if s.get("kind") != "table" or s.get("name") in tables]


def attach_columns(sinks: list[SinkLineage], plan: dict, tables: dict) -> list[str]:
    """Fills each sink's `columns` from the compiled plan; returns the warnings of the analysis.

    Each column lists its own sources and the dataset-wide ones (join keys, filters, grouping...)
    repeated, the columnLineage facet's per-field form that every consumer reads.
    """
    from planlineage.planner.columns import column_lineage  # a large module only --columns needs

    lineage, warnings = column_lineage(plan, tables)
    for sink in sinks:
        found = lineage.get(sink.table)
        if found is None:
            continue
        sink.columns = {
            name: [
                ColumnInput(
                    table=s.table,
                    column=s.column,
                    transformations=[
                        ColumnTransformation(
                            type=t.type, subtype=t.subtype, description=t.description, masking=t.masking
                        )
                        for t in s.transformations
                    ],
                )
                for s in sources
            ]
            for name, sources in found.merged().items()
        }
    return warnings


@contextmanager
def _planner_for(provisioned, planner: JobCompiler | None):
    """A compile function: the given planner, else the running warm planner, else a cold child.

    The cold child is started only when the warm planner cannot answer, and then serves the
    rest of this job (a batch job may be compiled twice).
    """
    if planner is not None:
        yield lambda request, timeout: planner.compile(request, timeout=timeout)
        return
    cold: list[Planner] = []

    def compile_job(request: CompileRequest, timeout: float) -> CompileAnswer:
        if not cold:
            answer = warm_client.compile_warm(provisioned.flink.minor, request, timeout)
            if answer is not None:
                return answer
            cold.append(Planner(provisioned))
        return cold[0].compile(request, timeout=timeout)

    try:
        yield compile_job
    finally:
        for running in cold:
            running.close()


_OUT_OF_MEMORY = re.compile(r"OutOfMemoryError|Java heap space|GC overhead limit exceeded")
_MISSING_CLASS = re.compile(r"(?:ClassNotFoundException|NoClassDefFoundError)[:\s]+([\w.$/]+)")
_MISSING_FACTORY = re.compile(r"Could not find any factory for identifier '([^']+)' that implements '([\w.]+)'")


#: The parser's list of every token it would have accepted (~2.7 KB): not one paragraph.
_EXPECTING = re.compile(r"\s*Was expecting(?: one of)?:.*?(?=\s*Caused by:|$)", re.DOTALL)
#: Classes whose absence means Python functions cannot run here, which no jar fixes.
_PYTHON_CLASS = re.compile(r"org\.apache\.flink\.(?:client\.)?python|pyflink", re.IGNORECASE)


def _one_paragraph(reason: str) -> str:
    """Flink's reason as one paragraph: without the parser's expected-token list, one space apart."""
    reason = _EXPECTING.sub(" (see Flink's SQL syntax)", reason, count=1)
    reason = _EXPECTING.sub("", reason)
    if "Caused by:" in reason:
        top, _, inner = reason.partition("Caused by:")
        # the parser repeats its message in the cause: keep it once
        if inner.split(":", 1)[-1].strip().split(" (see")[0] in top:
            reason = top
    return " ".join(reason.split())


def _compile_error(error: dict, sent: list[sql_script.Statement], secrets: dict[str, str]) -> ExtractError:
    reason = _one_paragraph(redact_text(str(error.get("message") or "unknown error").strip(), secrets))
    advice = ""
    missing = _MISSING_CLASS.search(reason)
    factory = _MISSING_FACTORY.search(reason)
    if missing and _PYTHON_CLASS.search(missing.group(1)):
        advice = (
            " Passing a jar will not help: the analyser runs no Python (it compiles Python functions"
            " through stand-ins), and this statement needs PyFlink's runtime; analyse the script without it."
        )
    elif missing:
        advice = (
            f" Class {missing.group(1).replace('/', '.')} is not available: pass the jar that contains it with --jar."
        )
    elif factory:
        kind = factory.group(2).rsplit(".", 1)[-1].replace("Factory", "").lower() or "factory"
        advice = f" No {kind} '{factory.group(1)}' is available: pass the jar that provides it with --jar."
    elif _OUT_OF_MEMORY.search(reason):
        from planlineage.planner.compiler import HEAP_ENV, heap

        reason = f"it needs more memory than the planner's heap of {heap()} (Java: {reason})"
        advice = f" Make the statement smaller (a huge literal?) or raise {HEAP_ENV}."
    if error.get("jar"):
        return ExtractError(f"jar {error['jar']} cannot be added: {reason}")
    index = error.get("statement")
    if index is None or not (0 <= index < len(sent)):
        return ExtractError(f"the job cannot be compiled: {reason}{advice}")
    statement = sent[index]
    head = " ".join(redact_sql(statement.sql, secrets).split())
    head = head if len(head) <= 80 else head[:77] + "..."
    return ExtractError(
        f"statement at line {statement.line} ({head}) cannot be compiled: {reason}{advice}", statement.line
    )
