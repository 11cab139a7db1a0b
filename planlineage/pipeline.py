"""From a SQL script to its lineage document, for any engine: split, compile, walk, name.

SQL -> the engine's statements -> its compiler (a child in the version's venv) -> the plan ->
walk -> registry -> JobLineage. The stages are the engine's (:class:`planlineage.engine.Engine`:
Flink's in ``planner/``, Spark's in ``spark/``); this is the only place they are composed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from planlineage import engines, script_size
from planlineage import script as sql_script
from planlineage.document import JobLineage
from planlineage.engine import Engine, ExtractJob
from planlineage.errors import ExtractError, PlannerError, ProvisionError
from planlineage.registry import IdentityConfig


def extract(
    script: str,
    flink_version: str | None = None,
    jars: list[str] | None = None,
    identity: IdentityConfig | None = None,
    planner=None,
    timeout: float = 300.0,
    columns: bool = False,
    max_bytes: int | None = None,
    *,
    engine: Engine | str | None = None,
    version: str | None = None,
    conf: Mapping[str, str] | None = None,
) -> JobLineage:
    """The lineage of one job (with column lineage per sink when `columns`); a script over
    `max_bytes` (None: :func:`planlineage.script_size.max_bytes`) is an ExtractError, never compiled.

    `engine`: an engine or its name (None: the default engine, Flink); `version`: the engine's
    version (None: its default; `flink_version` is the same for callers of the Flink engine);
    `planner`: a compiler the caller already runs (Flink: a Planner, a warm or head-start one;
    Spark: a started SparkParser); `conf`: the job's engine configuration (Spark conf: what names
    tables). Raises ExtractError (bad script) or ProvisionError/PlannerError.
    """
    chosen = engine if engine is not None and not isinstance(engine, str) else engines.get(engine)
    try:
        script_size.check_size(script, script_size.max_bytes() if max_bytes is None else max_bytes)
    except script_size.ScriptTooLarge as error:
        raise ExtractError(str(error)) from None
    job = ExtractJob(
        version=version if version is not None else flink_version,
        jars=list(jars or []),
        identity=identity,
        conf=dict(conf or {}),
        compiler=planner,
        timeout=timeout,
        columns=columns,
    )
    for jar in job.jars:
        if not Path(jar).is_file():
            raise ExtractError(f"jar {jar} does not exist: pass the path of a readable jar file with --jar.")
    try:
        statements = chosen.split(script)
    except sql_script.ScriptError as error:
        raise ExtractError(f"the script cannot be read: {error}", error.line) from None
    compiled = chosen.compile(statements, script, job)
    if isinstance(compiled, JobLineage):  # nothing left to walk (no sink, read from the text...)
        return compiled
    return chosen.lineage(compiled, job)


#: A key of at most 256 characters, a value as a run of plain characters between its '' escapes
#: ("unrolled"): the alternation `(?:[^']|'')*` kept a backtracking frame per character, ~190
#: bytes per byte of a long literal (a 24 MB literal took the compile service past 3 GB), and an
#: unbounded key was read to the end of a long literal from each of its '' escapes (quadratic).
_OPTION_PAIR = re.compile(r"'((?:[^']|''){0,256})'\s*=\s*'([^']*(?:''[^']*)*)'")


def script_options(script: str) -> dict[str, str]:
    """Every `'key' = 'value'` pair a script writes, so that error text can be redacted (what
    every engine's SQL writes this way: Flink's WITH, Spark's TBLPROPERTIES)."""
    found: dict[str, str] = {}
    for index, (key, value) in enumerate(_OPTION_PAIR.findall(script)):
        key = key.replace("''", "'")
        # Keys repeat across tables; keep each value (the redactor only needs values of secret keys).
        found[key if key not in found else f"{key}#{index}"] = value.replace("''", "'")
    return found


__all__ = ["ExtractError", "extract", "ProvisionError", "PlannerError", "script_options"]
