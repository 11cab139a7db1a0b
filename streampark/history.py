"""StreamPark's past runs, read from its operation log: what ``watch --history`` replays.

A run is a successful START row of a Flink SQL app in the operation log (``t_app_log``, 2.1.x
``t_flink_log``), started at that row's time.  It ended at the app's next row that ends it: a
successful CANCEL (ABORT at its time) or another START, successful or not (the console starts only
an app whose job has ended: ABORT at that row's time, as the live watcher closes a run that never
ended).  The app's newest run ends as the app's state says now: an end state gives its event at
``t_flink_app.end_time``; an app still alive (or LOST, which the live watcher waits on) is still
running: START and RUNNING are sent, and the live watcher continues that run.

The SQL of a run is the version effective when it started: for the app's newest start, the row
``t_flink_effective`` points at (the console promotes the candidate at each start, so it is
exact while no later start happened); for an earlier start, the newest ``t_flink_sql`` row created
before that start.  The team's ``${variables}`` are substituted with their values of today (the
console keeps no history of them).  Times are the console's wall time, read in ``zone``.

``run_key`` (``streampark:app=<id>:log=<START row id>``) names a run for the replay's ledger and
for the live watcher alike (:mod:`planlineage.history.ledger`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import date, datetime, tzinfo

from planlineage.history.records import PastRun
from planlineage.streampark import compile_inputs, reads, shared_runs
from planlineage.streampark import sql as stored_text
from planlineage.streampark.reads import App, LogRow
from planlineage.streampark.schema import Schema
from planlineage.streampark.states import ALIVE, FLINK, OPERATION_START, SQL_JOB_TYPE, state_name
from planlineage.watch.connection import Source

OPERATION_CANCEL = 3  # OperationEnum.CANCEL (Flink)
_END_EVENTS = {"FINISHED": "COMPLETE", "SUCCEEDED": "COMPLETE", "CANCELED": "ABORT", "FAILED": "FAIL"}
_END_EVENTS |= {"KILLED": "FAIL", "TERMINATED": "FAIL"}


def run_key(app_id: int, log_id: int) -> str:
    """The name of the run a START row began (the replay's and the live watcher's)."""
    return f"streampark:app={app_id}:log={log_id}"


def started_at(at: datetime | None, zone: tzinfo) -> datetime | None:
    """A console time (naive, the console's wall time) as an aware time."""
    if at is None:
        return None
    return at.replace(tzinfo=zone) if at.tzinfo is None else at


def replay_history(watcher, since: date | None, timeout: float) -> None:
    """``watch --history --once``: this StreamPark's past runs replayed once, the outcome said."""
    from planlineage.history.replay import replay

    found = past_runs(
        watcher.source,
        watcher._schema(),
        watcher.excluded,
        watcher.options,
        watcher.say,
        since=since,
        zone=watcher.options.zone,
    )
    report = replay(watcher.store, watcher.settings, found, say=watcher.say, timeout=timeout)
    for line in report.lines():
        watcher.say(line)


def watched_run(
    source: Source,
    schema: Schema,
    app: App,
    how: str,
    row: LogRow | None,
    zone: tzinfo,
    starts: dict[str, LogRow] | None = None,
):
    """``(run key, start time)`` of a run the live watcher starts from the START ``row`` (adopted:
    the app's newest START row), as the replay names it; ``(None, None)`` without row or time.
    ``starts``: :func:`reads.last_starts` of the apps the poll starts, read once for all of them."""
    if app.engine != FLINK or how not in ("logged", "adopted"):
        return None, None
    if how == "adopted" and schema.log_readable:
        row = starts.get(app.key) if starts is not None else reads.last_start(source, schema, app)
    if row is None or row.at is None:
        return None, None
    return run_key(app.id, row.id), started_at(row.at, zone)


def past_runs(
    source: Source,
    schema: Schema,
    excluded: Callable[[App], str | None],
    options,
    say: Callable[[str], None],
    *,
    since: date | None = None,
    zone: tzinfo,
) -> Iterator[PastRun]:
    """Every past run of the selected Flink SQL apps (``excluded``: the watcher's rule), oldest
    first; ``since``: runs started that day or later.  ``options``: the watcher's (workspace,
    charset, verbose)."""
    if not schema.log_readable or reads.log_time_column(schema) is None:
        say(f"no history to replay: the operation log {schema.log_table} (with its times) is not readable")
        return
    apps = {}
    for app in reads.apps(source, schema):
        if app.engine != FLINK or app.job_type != SQL_JOB_TYPE:
            continue
        reason = excluded(app)
        if reason is None:
            apps[app.id] = app
        elif options.verbose:
            say(f"{app.key} {app.job_name}: history not replayed: {reason}")
    if not apps:
        return
    by_app: dict[int, list[LogRow]] = {}
    for row in reads.all_log_rows(source, schema):
        if row.engine == FLINK and row.app_id in apps and row.option in (OPERATION_START, OPERATION_CANCEL):
            by_app.setdefault(row.app_id, []).append(row)
    # The options the console gives each job (today's: it keeps no history of them), which may
    # name openlineage-flink's listener: the replay then names the run as the live watcher does.
    given = reads.flink_starts(source, schema, list(apps.values()))
    versions = _sql_versions(source, schema)
    effective = _effective(source)
    end_times = _end_times(source, schema)
    said: set[str] = set()

    def once(key: str, message: str) -> None:
        if key not in said:
            said.add(key)
            say(message)

    for app_id, rows in sorted(by_app.items()):
        app = apps[app_id]
        starts = [i for i, r in enumerate(rows) if r.option == OPERATION_START and r.success and r.at is not None]
        for number, index in enumerate(starts):
            start = rows[index]
            began = started_at(start.at, zone)
            assert began is not None
            if since is not None and began < datetime(since.year, since.month, since.day, tzinfo=zone):
                continue
            ended, event = _end(app, rows[index + 1 :], end_times, zone, began)
            newest = number == len(starts) - 1
            version = _version(versions.get(app_id, []), effective.get(app_id) if newest else None, began)
            if version is None:
                once(
                    f"nosql:{app.key}", f"{app.key} {app.job_name}: history not replayed: no SQL version before a start"
                )
                continue
            try:
                text = stored_text.decode(version["text"], options.charset) or ""
                text = stored_text.replace_variables(text, reads.variables(source, schema, app.team_id)) or ""
            except stored_text.DecodeError as error:
                once(f"decode:{version['id']}", f"WARN {app.key} {app.job_name}: a past run not replayed: {error}")
                continue
            fields, _ = compile_inputs.flink_job(source, schema, app, version, options, once)
            yield PastRun(
                platform="streampark",
                run_key=run_key(app.id, start.id),
                app_id=app.key,
                job_name=app.job_name,
                sql=text,
                flink_version=fields.get("flink_version"),
                started_at=began,
                ended_at=ended,
                end_event=event,
                jars=tuple(fields.get("jars") or ()),
                job_conf=tuple(sorted(shared_runs.platform_conf(given.get(app.key)).items())),
            )


def _end(app: App, after: list[LogRow], end_times: dict, zone: tzinfo, began: datetime):
    """``(ended_at, end event)`` of a run as recorded; ``(None, None)`` while it still runs.  An end
    recorded before its start is kept as is: the replay sends it at the start and says so."""
    for row in after:
        if row.option == OPERATION_START or (row.option == OPERATION_CANCEL and row.success):
            return started_at(row.at, zone) or began, "ABORT"
    name = state_name(FLINK, app.state)
    if name in ALIVE[FLINK] or name in ("LOST", "CANCELLING"):
        return None, None  # alive, or waited on by the live watcher: it continues this run
    ended = started_at(end_times.get(app.id), zone)
    return ended or began, _END_EVENTS.get(name, "ABORT")


def _version(rows: list[dict], effective: int | None, began: datetime) -> dict | None:
    """The SQL row effective at a start: the effective one for the newest start, else the newest
    row created at or before it (both times the console's)."""
    if effective is not None:
        for row in rows:
            if row["id"] == effective:
                return row
    at = began.replace(tzinfo=None)
    before = [r for r in rows if r["create_time"] is None or r["create_time"] <= at]
    return before[-1] if before else None


def _sql_versions(source: Source, schema: Schema) -> dict[int, list[dict]]:
    resource = ", team_resource" if schema.has("t_flink_sql", "team_resource") else ""
    created = "create_time" if schema.has("t_flink_sql", "create_time") else "NULL AS create_time"
    found: dict[int, list[dict]] = {}
    text = source.quote("sql")
    for row in source.rows(
        f"SELECT id, app_id, {text} AS text, dependency{resource}, {created} FROM t_flink_sql ORDER BY id"
    ):
        found.setdefault(int(row["app_id"] or 0), []).append(row)
    return found


def _effective(source: Source) -> dict[int, int]:
    rows = source.rows("SELECT app_id, target_id FROM t_flink_effective WHERE target_type = 2")
    return {int(r["app_id"]): int(r["target_id"]) for r in rows}


def _end_times(source: Source, schema: Schema) -> dict[int, datetime]:
    if not schema.has("t_flink_app", "end_time"):
        return {}
    rows = source.rows("SELECT id, end_time FROM t_flink_app WHERE end_time IS NOT NULL")
    return {int(r["id"]): r["end_time"] for r in rows if isinstance(r["end_time"], datetime)}
