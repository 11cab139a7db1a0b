"""The run state machine the CLI drives: submissions and the platform's state reports.

Flow
----
``record_submission`` (lineage known) or ``record_pending_submission`` (the compile runs in a
compile service) makes a new run id for the application and, once lineage is known, queues
START for each OpenLineage job of the run.  ``record_state`` maps a platform state to an event:

=========================================  ==========
FINISHED, SUCCEEDED                        COMPLETE
FAILED, LOST, KILLED, TERMINATED           FAIL
CANCELED                                   ABORT
RUNNING                                    RUNNING
anything else                              ignored
=========================================  ==========

Each transition is queued once: a repeated report, or any report after a terminal event, queues
nothing; an unknown application is a no-op (and creates no store).  While lineage is pending,
transitions are remembered in the run row; ``attach_lineage`` then queues START followed by those
transitions in the order they happened, with their original times, in one transaction.  Within a
run the outbox delivers strictly in queue order, so START always precedes later events.

Fail-open (:func:`fail_open`): every public function here catches its own problems, logs one line (no traceback, no
secret) and answers ``None``/``False``; a lineage problem never fails a submission.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from planlineage import lazylog
from planlineage.clock import utc_now
from planlineage.emitter.run_ids import TERMINAL_EVENT_TYPES, new_run_id
from planlineage.errors import StoreError
from planlineage.lifecycle import spool
from planlineage.lifecycle.fail_open import fail_open
from planlineage.lifecycle.run_rows import (
    RunChanged,
    RunRecord,
    build_events,
    decided_on,
    load_event_models,
    queue_events,
    read_run,
    snapshot,
    until_unchanged,
)
from planlineage.store.sqlite import Store

ATTACH_RETRY_PAUSES = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)  # seconds: a busy store, waited out in the background

# Recording a submission or a state report loads neither the models (pydantic, ~0.1 s) nor the
# outbox and transports: only the paths that build events do.
if TYPE_CHECKING:
    from planlineage.document import JobLineage
    from planlineage.lifecycle.job_files import CompileJob
    from planlineage.settings import Settings

log = lazylog.getLogger(__name__)  # logging loads only when something is logged

STATE_EVENTS: dict[str, str] = {
    "FINISHED": "COMPLETE",
    "SUCCEEDED": "COMPLETE",
    "FAILED": "FAIL",
    "LOST": "FAIL",
    "KILLED": "FAIL",
    "TERMINATED": "FAIL",
    "CANCELED": "ABORT",
    "CANCELLED": "ABORT",
    "RUNNING": "RUNNING",
}


def event_for_state(platform_state: str | None) -> str | None:
    """The OpenLineage event type a platform state stands for, or None (ignored state)."""
    return STATE_EVENTS.get((platform_state or "").strip().upper())


@fail_open("current run lookup")
def current_run(store: Store, app_id: str) -> RunRecord | None:
    return store.read(lambda c: read_run(c, app_id))


def _submit(
    store: Store,
    app_id: str,
    job_name: str,
    lineage: JobLineage | None,
    sql: str | None,
    settings: Settings,
    run_id: str | None,
    when: str | None = None,
    replay: bool = False,
    namespace: str | None = None,
    also: Callable[[sqlite3.Connection, str], Any] | None = None,
) -> str | None:
    config = settings.config()
    if not config.configured:
        return None  # nothing until configured: no event, no file, no database
    namespace = namespace or config.namespace
    run_id = run_id or new_run_id()
    now = when or utc_now()
    lineage_json = json.dumps(lineage.to_json_dict(), sort_keys=True) if lineage else None

    built: list[tuple[str, str, str]] = []
    if lineage is not None:
        load_event_models()
        record = RunRecord(app_id, run_id, job_name, namespace, None, sql, None, "START", [], now, now)
        built = build_events(record, lineage, "START", now)

    def submit(conn: sqlite3.Connection) -> str | None:
        previous = conn.execute(
            "SELECT run_id, job_name, namespace, lineage, sql, last_event, pending, created FROM runs WHERE app_id = ?",
            (app_id,),
        ).fetchone()
        if replay and previous is not None and (previous["run_id"] == run_id or previous["created"] > now):
            # A spooled submission: recorded already by another replay, or a later submission of
            # the application replaced it meanwhile (as a pending run it would be, unreported).
            return run_id if previous["run_id"] == run_id else None
        if previous is not None and previous["run_id"] == run_id:
            return None  # this very run is recorded already: told twice (a run id derived from its JobID)
        still_open = previous is not None and previous["last_event"] not in TERMINAL_EVENT_TYPES
        if previous is not None and previous["lineage"] and (still_open or previous["pending"] != "[]"):
            # The platform replaced the run: its recorded transitions, then ABORT if it was still
            # open, are queued by the next process that builds events (building them here would
            # cost submit ~0.4 s of imports).
            conn.execute(
                "INSERT OR IGNORE INTO closing (run_id, app_id, job_name, namespace, lineage, sql, pending, abort, "
                "created, closed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    previous["run_id"],
                    app_id,
                    previous["job_name"],
                    previous["namespace"],
                    previous["lineage"],
                    previous["sql"],
                    previous["pending"],
                    int(still_open),
                    previous["created"],
                    now,
                ),
            )
        conn.execute(
            "INSERT INTO runs (app_id, run_id, job_name, namespace, lineage, sql, platform_state, "
            "last_event, pending, created, updated) VALUES (?, ?, ?, ?, ?, ?, NULL, 'START', '[]', ?, ?) "
            "ON CONFLICT (app_id) DO UPDATE SET run_id = excluded.run_id, "
            "job_name = excluded.job_name, namespace = excluded.namespace, "
            "lineage = excluded.lineage, sql = excluded.sql, platform_state = NULL, "
            "last_event = 'START', pending = '[]', created = excluded.created, "
            "updated = excluded.updated",
            (app_id, run_id, job_name, namespace, lineage_json, sql, now, now),
        )
        queue_events(conn, run_id, built)
        if also is not None:
            also(conn, run_id)
        return run_id

    return store.write(submit)


@fail_open("lineage of the submission")
def record_submission(
    store: Store,
    app_id: str,
    job_name: str,
    lineage: JobLineage,
    sql: str | None,
    settings: Settings,
    *,
    run_id: str | None = None,
) -> str | None:
    """A new run of ``app_id`` with known lineage: queue START for each job; the run id.

    ``sql`` must already be redacted. ``None`` when lineage is not configured (nothing written).
    """
    return _submit(store, app_id, job_name, lineage, sql, settings, run_id)


@fail_open("lineage of the submission")
def record_pending_submission(
    store: Store,
    app_id: str,
    job_name: str,
    sql: str | None,
    settings: Settings,
    *,
    run_id: str | None = None,
    also: Callable[[sqlite3.Connection, str], Any] | None = None,
    namespace: str | None = None,
) -> str | None:
    """A new run whose lineage the compile service is still computing; the run id.

    Call it before queuing the compile; the compile service calls :func:`attach_lineage` (or
    :func:`abandon_lineage`) with the returned run id.  Nothing is sent until lineage arrives.
    ``also(conn, run_id)``: the caller's own rows of the run, written in the same transaction;
    ``namespace``: the job's, when not ``lineage.namespace`` (coexisting with openlineage-flink).
    """
    return _submit(store, app_id, job_name, None, sql, settings, run_id, namespace=namespace, also=also)


def submit_pending(
    store: Store,
    app_id: str,
    job_name: str,
    settings: Settings,
    run_id: str,
    when: str | None = None,
    namespace: str | None = None,
    also: Callable[[sqlite3.Connection, str], Any] | None = None,
) -> str | None:
    """:func:`record_pending_submission` for a caller that handles a :class:`StoreError` itself
    (``submit`` spools the submission when the shared store cannot be reached); ``namespace``: the
    job's, when not ``lineage.namespace`` (coexisting with openlineage-flink's listener)."""
    return _submit(store, app_id, job_name, None, None, settings, run_id, when, namespace=namespace, also=also)


@fail_open("closing of replaced runs", fallback=0)
def close_replaced(store: Store) -> int:
    """Queue the recorded transitions of every run a resubmission replaced (``closing``), then
    ABORT for those still open; how many runs."""
    if not store.exists():
        return 0
    waiting = store.read(lambda c: c.execute("SELECT COUNT(*) FROM closing").fetchone()[0], default=0)
    if not waiting:
        return 0
    load_event_models()
    from planlineage.document import JobLineage

    rows = store.read(lambda c: [dict(r) for r in c.execute("SELECT * FROM closing ORDER BY closed_at")], [])
    closed = 0
    for row in rows:
        run = RunRecord(
            app_id=row["app_id"],
            run_id=row["run_id"],
            job_name=row["job_name"],
            namespace=row["namespace"],
            lineage=None,
            sql=row["sql"],
            platform_state=None,
            last_event=None,
            pending=[],
            created=row["created"],
            updated=row["closed_at"],
        )
        lineage = JobLineage.stored(json.loads(row["lineage"]))
        built = []
        for item in json.loads(row["pending"] or "[]"):
            built += build_events(run, lineage, item["event"], item["time"], item.get("error"))
        if row["abort"]:
            built += build_events(run, lineage, "ABORT", row["closed_at"])

        def close(conn: sqlite3.Connection, run_id: str = row["run_id"], built=built) -> int:
            if not conn.execute("DELETE FROM closing WHERE run_id = ?", (run_id,)).rowcount:
                return 0  # another process closed it
            return int(bool(queue_events(conn, run_id, built)))

        closed += store.write(close)
    return closed


@fail_open("lineage of the submission", fallback=False)
def attach_lineage(store: Store, app_id: str, run_id: str, lineage: JobLineage) -> bool:
    """Give a pending run its lineage: queue START, then the states recorded meanwhile, in order.

    False (nothing done) if ``run_id`` is no longer the application's current run or already has
    its lineage.
    """
    if not store.exists():
        return False
    if not lineage.has_datasets():
        # An event without datasets would wipe the job's edges in a Marquez-like graph.
        abandon_lineage(
            store, app_id, run_id, "the job writes no table planlineage can name (no INSERT?): nothing is reported"
        )
        return False
    lineage_json = json.dumps(lineage.to_json_dict(), sort_keys=True)

    load_event_models()

    def attempt() -> bool:
        run = store.read(lambda c: read_run(c, app_id))
        if run is None or run.run_id != run_id or run.lineage is not None:
            return False
        built = build_events(run, lineage, "START", run.created)
        for item in run.pending:
            built += build_events(run, lineage, item["event"], item["time"], item.get("error"))

        def attach(conn: sqlite3.Connection) -> bool:
            if snapshot(conn, app_id) != decided_on(run):
                raise RunChanged
            queue_events(conn, run_id, built)
            conn.execute(
                "UPDATE runs SET lineage = ?, pending = '[]', updated = ? WHERE app_id = ?",
                (lineage_json, utc_now(), app_id),
            )
            return True

        return store.write(attach)

    # The compile is done and its record goes once this returns: a store busy past its timeout
    # (SQLite's lock under a burst of adoptions) is waited out, never taken for "superseded",
    # which would lose the run's every event.
    for pause in ATTACH_RETRY_PAUSES:
        try:
            return until_unchanged(store, app_id, attempt)
        except StoreError:
            time.sleep(pause)
    return until_unchanged(store, app_id, attempt)


@fail_open("lineage of the submission", fallback=False)
def abandon_lineage(store: Store, app_id: str, run_id: str, reason: str | None = None) -> bool:
    """The compile service could not compute lineage: forget the run, send nothing for it.

    Sending its states without datasets would wipe the job's edges a previous run drew.
    """
    if not store.exists():
        return False

    def abandon(conn: sqlite3.Connection) -> bool:
        run = read_run(conn, app_id)
        if run is None or run.run_id != run_id or run.lineage is not None:
            return False
        conn.execute("DELETE FROM runs WHERE app_id = ? AND run_id = ?", (app_id, run_id))
        if reason:  # for the watcher that submitted the run to say (it reads only the store)
            from planlineage.lifecycle import drop_reasons  # background work only: not on submit's path

            drop_reasons.record(conn, run_id, app_id, reason)
        return True

    done = store.write(abandon)
    if done and reason:
        from planlineage.emitter.transports.base import scrub, short

        log.warning("planlineage: no lineage for %s: %s", app_id, short(scrub(reason), 240))
    return done


@fail_open("lineage state report")
def record_state(
    store: Store,
    app_id: str,
    platform_state: str,
    error: str | None = None,
    *,
    event_time: str | None = None,
) -> str | None:
    """Record a platform state report; the event type it queued (or deferred), else None.

    Reports kept in the spool (the database was too busy for an earlier command) go first.  When
    the database stays busy past the store's busy timeout, this report is spooled too (``spool/``,
    replayed in order by the next command or the compile service) rather than lost.
    """
    when = event_time or utc_now()
    try:
        replay_spooled(store)
        return _record_state(store, app_id, platform_state, error, when)
    except StoreError as problem:
        # A busy SQLite file, or a shared store that cannot be reached (restart, network): spool.
        if not getattr(store, "shared", False) and "locked" not in str(problem) and "busy" not in str(problem):
            raise
        try:
            spool.put(store, app_id, platform_state, _scrub(error) if error else None, when)
        except spool.SpoolFull as full:
            log.warning("planlineage: %s", full)
            return DROPPED
        return event_for_state(platform_state)


#: What :func:`record_state` answers for a report the full spool could not keep (said on stderr).
DROPPED = "dropped"


SPOOL = spool.FOLDER


def _scrub(text: str) -> str:
    from planlineage.emitter.transports.base import scrub  # loaded only when there is an error text

    return scrub(text)


def replay_spooled(store: Store) -> int:
    """Record spooled submissions and state reports oldest first (see :mod:`.spool`); how many."""
    return spool.replay(store, _record_state, _replay_submission)


def _replay_submission(store: Store, job: dict[str, Any], when: str) -> None:
    """Record a submission the shared store could not take (with its run id and time) and queue
    its compile; recording it twice records it once (raises :class:`StoreError`: it stays)."""
    from planlineage.lifecycle import compile_queue
    from planlineage.settings import Settings

    settings = Settings(store)
    recorded = _submit(
        store,
        job["app_id"],
        job["job_name"],
        None,
        None,
        settings,
        job["run_id"],
        when,
        replay=True,
        namespace=job.get("job_namespace"),
    )
    if recorded is None:
        return  # lineage is off now, or a later submission replaced it
    waiting = store.read(
        lambda c: c.execute(
            "SELECT 1 FROM runs WHERE app_id = ? AND run_id = ? AND lineage IS NULL", (job["app_id"], job["run_id"])
        ).fetchone()
    )
    if waiting is not None:  # not compiled yet (queuing its compile again is harmless)
        compile_queue.start(store, cast("CompileJob", job))


def _record_state(store: Store, app_id: str, platform_state: str, error: str | None, when: str) -> str | None:
    """Record the transition in the run (one short write, no event built: no model import, so
    ``state`` stays cheap under load); :func:`materialize` turns it into events."""
    event_type = event_for_state(platform_state)
    if not store.exists():
        return None  # unknown application: no-op, nothing created
    state = (platform_state or "").strip().upper()
    error = _scrub(error) if error and event_type else None  # it may quote a connection string

    def report(conn: sqlite3.Connection) -> str | None:
        row = conn.execute("SELECT last_event, pending FROM runs WHERE app_id = ?", (app_id,)).fetchone()
        if row is None:
            return None
        if event_type is None or row["last_event"] in TERMINAL_EVENT_TYPES or event_type == row["last_event"]:
            conn.execute("UPDATE runs SET platform_state = ?, updated = ? WHERE app_id = ?", (state, utc_now(), app_id))
            return None
        pending = json.loads(row["pending"] or "[]") + [
            {"event": event_type, "time": when, "error": error, "state": state}
        ]
        conn.execute(
            "UPDATE runs SET platform_state = ?, last_event = ?, pending = ?, updated = ? WHERE app_id = ?",
            (state, event_type, json.dumps(pending), utc_now(), app_id),
        )
        return event_type

    if store.read(lambda c: c.execute("SELECT 1 FROM runs WHERE app_id = ?", (app_id,)).fetchone()) is None:
        return None  # unknown application: nothing written
    return store.write(report)


@fail_open("count of compiling runs", fallback=0)
def count_compiling(store: Store) -> int:
    """Runs whose lineage is still being computed: their events are not in the outbox yet."""
    if not store.exists():
        return 0
    return store.read(lambda c: c.execute("SELECT COUNT(*) FROM runs WHERE lineage IS NULL").fetchone()[0], 0)


@fail_open("lineage events of recorded states", fallback=0)
def materialize(store: Store) -> int:
    """Queue the events of the transitions recorded for runs whose lineage is known, in the order
    they happened, with their original times; how many transitions.  Called by the compile
    service and by ``flush`` (it loads the event models only when there is something to build)."""
    if not store.exists():
        return 0
    apps = store.read(
        lambda c: [r[0] for r in c.execute("SELECT app_id FROM runs WHERE lineage IS NOT NULL AND pending != '[]'")],
        default=[],
    )
    if not apps:
        return 0
    load_event_models()
    done = 0
    for app_id in apps:

        def attempt(app_id: str = app_id) -> int:
            run = store.read(lambda c: read_run(c, app_id))
            if run is None or run.lineage is None or not run.pending:
                return 0
            built: list[tuple[str, str, str]] = []
            for item in run.pending:
                built += build_events(run, run.lineage, item["event"], item["time"], item.get("error"))

            def queue(conn: sqlite3.Connection) -> int:
                if snapshot(conn, app_id) != decided_on(run):
                    raise RunChanged
                queue_events(conn, run.run_id, built)
                conn.execute("UPDATE runs SET pending = '[]', updated = ? WHERE app_id = ?", (utc_now(), app_id))
                return len(run.pending)

            return store.write(queue)

        done += until_unchanged(store, app_id, attempt)
    return done
