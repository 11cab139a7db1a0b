"""What producers reported, as runs to match a JobManager's jobs against (doctor --jobmanager).

A :class:`ReportedRun` is one run (a parent and its children are one) with what ties it to a
Flink job: the Flink JobIDs it names, the run ids it goes by, its job names and when it started.

- **Event files** (any producer): events are grouped by their root run (a child's ``parent``
  facet names it). openlineage-flink names the Flink job in the ``flink_job`` run facet
  (``FlinkJobDetailsFacet``: ``{"jobId": "<32 hex>"}``, both its Flink 1.x and 2.x listeners, and
  planlineage when it knows the JobID); its detached listener's run id is derived from the
  JobID and start time (:func:`planlineage.emitter.run_ids.listener_run_id`). The run started at
  its earliest ``eventTime``.
- **The state store** (read-only, as ``doctor --state`` reads it): each application's current
  run (``runs``), when it was recorded (``created``) and whether its lineage is known, with the
  Flink JobID the platform watchers keep for it (:func:`watched_job_ids`), the job ids the SQL
  Gateway proxy handed to the lineage side (``gateway_jobs_seen``; its runs are apps
  ``gateway:<JobID>``) and why a run was dropped (``dropped_runs``). Only small columns are
  read: never the lineage documents.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from planlineage.errors import UnreadableInput

from .sources import FileEvents, _connect_read_only, iter_events, unreadable_store

FLINK_JOB_FACET = "flink_job"  # openlineage-flink's FlinkJobDetailsFacet (FLINK_JOB_FACET_KEY)


@dataclass
class ReportedRun:
    source: str  # what reported it: an event file's path, or "state store"
    run_id: str
    job_names: set[str] = field(default_factory=set)
    run_ids: set[str] = field(default_factory=set)  # its own and its children's
    job_ids: set[str] = field(default_factory=set)  # Flink JobIDs it names
    started_ms: int | None = None
    lineage: bool = True  # False: planlineage recorded the run but has no lineage for it
    no_lineage_why: str = ""
    via: str = ""  # how the store ties it to a job id ("the StreamPark/Dinky watcher", ...)


@dataclass
class Reported:
    runs: list[ReportedRun] = field(default_factory=list)
    #: Flink JobIDs the SQL Gateway proxy took the submission of, with where (no run found for them)
    gateway_jobs: dict[str, str] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)


def millis(text: Any) -> int | None:
    """An ISO 8601 time (an eventTime, a stored time) as epoch milliseconds; None if it is none."""
    if not isinstance(text, str) or not text:
        return None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    if moment.tzinfo is None:  # planlineage's stored times are UTC; so is an event time without zone
        from datetime import UTC

        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def _job_id(value: Any) -> str | None:
    text = str(value or "").strip().lower()
    return text if len(text) == 32 and all(c in "0123456789abcdef" for c in text) else None


# -- event files --------------------------------------------------------------------------------------


def _object(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _add_event(runs: dict[str, ReportedRun], event: dict, source: str) -> None:
    run, job = _object(event.get("run")), _object(event.get("job"))
    run_id = str(run.get("runId") or "")
    if not run_id:
        return  # a dataset or job event: no run to match
    facets = _object(run.get("facets"))
    parent = _object(facets.get("parent"))
    root = str(_object(parent.get("run")).get("runId") or "") or run_id
    found = runs.get(root)
    if found is None:
        found = runs[root] = ReportedRun(source=source, run_id=root)
    found.run_ids.update(r.lower() for r in (root, run_id))
    for name in (job.get("name"), _object(parent.get("job")).get("name")):
        if isinstance(name, str):
            found.job_names.add(name)
    job_id = _job_id(_object(facets.get(FLINK_JOB_FACET)).get("jobId"))
    if job_id:
        found.job_ids.add(job_id)
    at = millis(event.get("eventTime"))
    if at is not None and (found.started_ms is None or at < found.started_ms):
        found.started_ms = at


def read_event_files(paths: Sequence[str], reported: Reported) -> None:
    """The runs of each file (read as a stream: one small record per run is kept)."""
    for path in paths:
        counts = FileEvents(path)
        runs: dict[str, ReportedRun] = {}
        for event in iter_events(path, counts):
            _add_event(runs, event, path)
        reported.runs.extend(runs.values())
        reported.sources.append(f"{counts.describe()}, {len(runs)} run(s)")


# -- the state store ----------------------------------------------------------------------------------

#: The platform watchers' snapshot: one row per watched job, with its current Flink JobID. Named
#: ``streampark_apps(app_key)`` before store step 9; a store no node has migrated yet keeps that name
#: (the doctor never migrates), so both are read.
_WATCH_TABLES = (("watch_jobs", "job_key"), ("streampark_apps", "app_key"))


def watched_job_ids(query: Callable[[str], list[dict]], tables: set[str]) -> dict[str, str]:
    """The Flink JobID of each job a platform watcher follows, by its key (the run's ``app_id``)."""
    for table, key in _WATCH_TABLES:
        if table in tables:
            rows = query(f"SELECT {key} AS job_key, job_id FROM {table} WHERE job_id <> ''")
            return {str(r["job_key"]): str(r["job_id"]) for r in rows}
    return {}


def _gateway_jobs(query: Callable[[str], list[dict]], tables: set[str]) -> dict[str, str]:
    """The job ids the SQL Gateway proxy handed to the lineage side (store step 10), with where."""
    if "gateway_jobs_seen" not in tables:
        return {}
    from planlineage.registry.secrets import redact_url

    rows = query("SELECT job_id, gateway, session FROM gateway_jobs_seen")
    return {
        found: f"the SQL Gateway proxy took its submission (gateway {redact_url(str(r['gateway']))}, "
        f"session {r['session']})"
        for r in rows
        if (found := _job_id(r["job_id"]))
    }


#: The app id the SQL Gateway proxy records a job's run under: ``gateway:<Flink JobID>``
#: (planlineage.gateway.jobmanager.JOB_KEY_PREFIX; not imported: the proxy's modules are not the doctor's).
GATEWAY_APP_PREFIX = "gateway:"

_RUNS = "SELECT app_id, run_id, job_name, created, last_event, lineage IS NOT NULL AS known FROM runs"


def _state_runs(query: Callable[[str], list[dict]], tables: set[str], reported: Reported, where: str) -> None:
    if "runs" not in tables:
        reported.sources.append(f"{where}: no recorded run")
        return
    watched = watched_job_ids(query, tables)
    gateway = _gateway_jobs(query, tables)
    dropped: dict[str, tuple[str, str]] = {}  # app_id -> (run id, reason) of its last dropped run
    if "dropped_runs" in tables:
        for r in query("SELECT app_id, run_id, reason FROM dropped_runs ORDER BY dropped"):
            dropped[str(r["app_id"])] = (str(r["run_id"]), str(r["reason"]))
    rows = query(_RUNS)
    for row in rows:
        app_id, run_id = str(row["app_id"]), str(row["run_id"])
        run = ReportedRun(source="state store", run_id=run_id, run_ids={run_id.lower()}, job_names={row["job_name"]})
        run.started_ms = millis(row["created"])
        if app_id in watched and (job_id := _job_id(watched[app_id])):
            run.job_ids.add(job_id)
            run.via = f"the platform watcher follows it as {app_id}"
        if app_id.startswith(GATEWAY_APP_PREFIX) and (job_id := _job_id(app_id[len(GATEWAY_APP_PREFIX) :])):
            run.job_ids.add(job_id)  # the SQL Gateway proxy's run of that very job
            run.via = gateway.get(job_id, "the SQL Gateway proxy recorded it")
        if not row["known"]:
            run.lineage = False
            run.no_lineage_why = (
                f"planlineage's run {run_id} ({app_id}) has no lineage yet: its compile is queued or running "
                "(look again in a minute; if it stays, see the compile service's log)"
            )
        reported.runs.append(run)
    # A dropped run leaves the runs table (nothing is sent for it); the watcher still follows its job.
    recorded = {str(row["app_id"]) for row in rows}
    for app_id, job_id in watched.items():
        if app_id in recorded or not (flink_id := _job_id(job_id)):
            continue
        run = ReportedRun(source="state store", run_id="", job_ids={flink_id}, lineage=False)
        run.via = f"the platform watcher follows it as {app_id}"
        if app_id in dropped:
            run.run_id, reason = dropped[app_id]
            run.no_lineage_why = f"planlineage dropped its run {run.run_id} ({app_id}): {reason}"
        else:
            run.no_lineage_why = (
                f"the platform watcher follows it as {app_id}, but planlineage holds no run of it: no start "
                "of it was recorded (is lineage enabled for it on the platform?)"
            )
        reported.runs.append(run)
    tied = {job_id for run in reported.runs for job_id in run.job_ids}
    reported.gateway_jobs.update({k: v for k, v in gateway.items() if k not in tied})
    reported.sources.append(f"{where}: {len(rows)} recorded run(s), {len(watched)} watched job id(s)")


def read_state(reported: Reported, store_path: Path | None = None) -> None:
    """The recorded runs, strictly read-only (the node's shared PostgreSQL store when configured)."""
    from planlineage.store.sqlite import DB_NAME, home_dir

    if store_path is None:
        from planlineage.store import store_url

        if store_url()[0]:
            _read_shared(reported)
            return
    path = store_path or home_dir() / DB_NAME
    if not path.is_file():
        reported.sources.append(f"{path}: no state store (nothing recorded)")
        return
    try:
        conn = _connect_read_only(path)
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

            def query(sql: str) -> list[dict]:
                return [dict(r) for r in conn.execute(sql)]

            _state_runs(query, tables, reported, str(path))
        finally:
            conn.close()
    except sqlite3.DatabaseError as error:
        raise unreadable_store(path, error) from None


def _read_shared(reported: Reported) -> None:
    from planlineage.store import open_store
    from planlineage.store.sqlite import StoreError

    try:
        store = open_store()

        def read(conn) -> None:
            listed = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
            tables = {str(r[0]) for r in conn.execute(listed)}

            def query(sql: str) -> list[dict]:
                return [dict(r) for r in conn.execute(sql)]

            _state_runs(query, tables, reported, store.describe())

        store.read(read)
    except StoreError as error:
        raise UnreadableInput(
            f"{error}; the doctor reads the state store named by lineage.store (or PLANLINEAGE_STORE): "
            "check that it is reachable, or leave --state out"
        ) from None
