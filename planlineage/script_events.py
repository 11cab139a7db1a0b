"""The OpenLineage events of a script, of many scripts, or of `extract`'s JSON document: the START
events `submit` would queue for the same job (emitter.events.build_events, one job per sink of a
statement set plus the parent, the same facets), so that `extract --events`, `ui`, `graph` and
`doctor` show a script's lineage exactly as the lifecycle would report it, without a backend.

What the lifecycle does to a run's SQL before it reaches an event is done here the same way: the
script is redacted with the options it writes (its passwords never reach a facet) and capped at
``lineage.sql-max-bytes`` (lifecycle.sql_facet), and so is each sink's own statement.

A job's name: the one given, else the script's ``SET 'pipeline.name'`` (what Flink names the job),
else the file's stem; its namespace: the settings' job namespace (``lineage.namespace``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from planlineage.document import JobLineage
    from planlineage.settings import Settings

#: The Flink option that names a job (what the SQL client and StreamPark name it by).
PIPELINE_NAME = "pipeline.name"


def job_name_of(sql: str | None, path: str | Path, given: str | None = None) -> str:
    """``given``, else the last ``SET 'pipeline.name'`` of ``sql``, else the stem of ``path``."""
    if given:
        return given
    if sql:
        from planlineage import script as sql_script

        try:
            statements = sql_script.split(sql)
        except sql_script.ScriptError:
            statements = []
        named = [s.set_pair[1] for s in statements if s.set_pair and s.set_pair[0] == PIPELINE_NAME and s.set_pair[1]]
        if named:
            return named[-1]
    stem = Path(str(path)).stem
    return stem if stem and stem != "-" else "stdin"


def start_events(
    lineage: JobLineage,
    *,
    job_name: str,
    namespace: str,
    sql: str | None,
    limit: int,
    run_id: str | None = None,
) -> list[dict[str, Any]]:
    """The START events of one job, as JSON objects (the file transport's lines, once dumped)."""
    from planlineage.emitter import events as ev
    from planlineage.lifecycle.sql_facet import cap_sql, cap_statements, redacted

    lineage = cap_statements(lineage.model_copy(deep=True), limit)
    facet_sql = cap_sql(redacted(sql, lineage.engine), limit)[0] if sql else None
    built = ev.build_events(
        lineage,
        job_name=job_name,
        job_namespace=namespace,
        run_id=run_id or ev.new_run_id(),
        event_type="START",
        sql=facet_sql,
    )
    return [ev.to_dict(event) for event in built]


def document_lineage(obj: Any) -> JobLineage | None:
    """The lineage of one `extract --format json` document (or of one `extract DIR` line's
    ``lineage``); None when ``obj`` is not one."""
    from pydantic import ValidationError

    from planlineage.document import JobLineage

    if not isinstance(obj, dict) or not isinstance(obj.get("sinks"), list):
        return None
    from planlineage import engines

    if not any(engine.version_field in obj for engine in engines.every()):  # no engine's document
        return None
    try:
        return JobLineage.model_validate(obj)
    except ValidationError:
        return None


@dataclass
class Compiled:
    """One script compiled: its lineage, or why it has none."""

    path: Path
    sql: str | None
    lineage: JobLineage | None = None
    error: str | None = None


def compile_scripts(
    scripts: list[Path],
    *,
    flink_version: str | None = None,
    jars: list[str] | None = None,
    identity=None,
    jobs: int = 2,
    err: IO[str] = sys.stderr,
    on_done: Callable[[Compiled], None] | None = None,
) -> list[Compiled]:
    """Every script compiled with the version's planner (column lineage included, as the lifecycle
    compiles), ``jobs`` at once as `extract DIR` does (planlineage.backfill); in the order given.
    Progress goes to ``err`` for more than one script (a counter on a terminal, a summary always)."""
    import threading

    from planlineage.backfill import each_on_a_planner
    from planlineage.errors import ExtractError, PlannerError
    from planlineage.planner.provision import ensure

    provisioned = ensure(flink_version)
    results: dict[Path, Compiled] = {}
    lock = threading.Lock()
    started = time.monotonic()
    many = len(scripts) > 1
    on_terminal = many and err.isatty()

    def rules() -> None:
        nonlocal identity
        if identity is None:
            from planlineage.registry import load_config

            identity = load_config(None)

    def one(script: Path, planner) -> None:
        from planlineage.pipeline import extract

        try:
            sql: str | None = script.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            done = Compiled(script, None, error=f"cannot read the script: {getattr(error, 'strerror', None) or error}")
        else:
            try:
                lineage = extract(sql or "", jars=jars, identity=identity, planner=planner, columns=True)
                done = Compiled(script, sql, lineage)
            except (ExtractError, PlannerError) as error:
                done = Compiled(script, sql, error=str(error))
        with lock:
            results[script] = done
            if on_done is not None:
                on_done(done)
            if on_terminal:
                failed = sum(1 for r in results.values() if r.error)
                err.write(f"\rcompiling: [{len(results)}/{len(scripts)}] {failed} failed")
                err.flush()

    each_on_a_planner(provisioned, scripts, jobs, None, one, before_jobs=rules)
    if on_terminal:
        err.write("\n")
    if many:
        failed = sum(1 for r in results.values() if r.error)
        err.write(
            f"planlineage: compiled {len(scripts)} scripts with Flink {provisioned.flink.version}: "
            f"{len(scripts) - failed} ok, {failed} failed, {time.monotonic() - started:.1f} s\n"
        )
        err.flush()
    return [results[script] for script in scripts]


def append_events(path: str, events: list[dict[str, Any]]) -> None:
    """``events`` appended to ``path`` as JSON lines, the lines the `file` transport writes (its
    folder created if needed). Raises InputError naming the file when it cannot be written."""
    import json

    from planlineage.errors import InputError

    try:
        target = Path(path).expanduser()
        if target.parent != Path():
            target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "a", encoding="utf-8") as handle:
            handle.write("".join(json.dumps(event, sort_keys=True) + "\n" for event in events))
    except OSError as error:
        raise InputError(
            f"cannot write the events to {path}: {error.strerror or error}; pass a file in a writable folder."
        ) from None


def send_events(runs: list[tuple[str, list[dict[str, Any]]]], settings: Settings, budget: float) -> tuple[int, int]:
    """Each run's events queued in the outbox (kept until delivered, as the lifecycle's are), then
    delivered through the configured transport within ``budget`` seconds: (delivered, still
    waiting). The caller has checked that lineage is configured."""
    from planlineage.emitter import outbox
    from planlineage.lifecycle import delivery
    from planlineage.store import open_store

    store = open_store()
    for run_id, events in runs:
        outbox.enqueue(store, run_id, events)
    report = delivery.flush(store, settings, deadline_seconds=budget)
    queued = sum(len(events) for _, events in runs)
    if report is None:
        return 0, queued
    return report.delivered, report.remaining + report.parked_total
