"""A run's row in the state store, and how one transition becomes queued events.

:mod:`planlineage.lifecycle.runs` decides transitions; this module reads a run's row, builds the
events of a transition outside any write transaction, and queues them only if the row did not
change meanwhile (:func:`until_unchanged` decides again when it did).
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any, NamedTuple

from planlineage.store.sqlite import Store

if TYPE_CHECKING:
    from planlineage.document import JobLineage


class RunRecord(NamedTuple):
    app_id: str
    run_id: str
    job_name: str
    namespace: str
    lineage: JobLineage | None
    sql: str | None
    platform_state: str | None
    last_event: str | None
    pending: list[dict[str, Any]]
    created: str
    updated: str


def load_event_models() -> None:
    """Imports openlineage-python and the lineage models (~0.4 s) before a write transaction.

    Only paths that build events pay for them (recording a pending submission does not), and
    never while holding the database's write lock, which other processes are waiting for.
    """
    import planlineage.document
    import planlineage.emitter.events
    import planlineage.emitter.outbox  # noqa: F401


def row_record(row: sqlite3.Row | None) -> RunRecord | None:
    if row is None:
        return None
    lineage = None
    if row["lineage"]:
        from planlineage.document import JobLineage

        lineage = JobLineage.stored(json.loads(row["lineage"]))
    return RunRecord(
        app_id=row["app_id"],
        run_id=row["run_id"],
        job_name=row["job_name"],
        namespace=row["namespace"],
        lineage=lineage,
        sql=row["sql"],
        platform_state=row["platform_state"],
        last_event=row["last_event"],
        pending=json.loads(row["pending"] or "[]"),
        created=row["created"],
        updated=row["updated"],
    )


def read_run(conn: sqlite3.Connection, app_id: str) -> RunRecord | None:
    return row_record(conn.execute("SELECT * FROM runs WHERE app_id = ?", (app_id,)).fetchone())


def build_events(
    run: RunRecord, lineage: JobLineage, event_type: str, event_time: str, error: str | None = None
) -> list[tuple[str, str, str]]:
    """The serialized events of one transition: ``(job name, event type, payload)``.

    Built outside any write transaction: under CPU contention, serializing events while holding
    the database's write lock would make every other process wait for it.
    """
    from planlineage.emitter import events as ev  # loaded by load_event_models()

    built = ev.build_events(
        lineage,
        job_name=run.job_name,
        job_namespace=run.namespace,
        run_id=run.run_id,
        event_type=event_type,
        sql=run.sql,
        error=error,
        event_time=event_time,
    )
    return [(e.job.name, event_type, json.dumps(ev.to_dict(e), sort_keys=True)) for e in built]


def queue_events(conn: sqlite3.Connection, run_id: str, built: list[tuple[str, str, str]]) -> int:
    if not built:
        return 0  # (a pending submission: the outbox is not even loaded)
    from planlineage.emitter import outbox  # loaded by load_event_models(), outside the write lock

    return sum(outbox.enqueue_in(conn, run_id, job, event_type, payload) for job, event_type, payload in built)


SNAPSHOT = "SELECT run_id, lineage IS NOT NULL AS known, last_event, pending FROM runs WHERE app_id = ?"


def snapshot(conn: sqlite3.Connection, app_id: str) -> tuple | None:
    """What decides a transition, compared inside the write to what it was decided on (no parsing)."""
    row = conn.execute(SNAPSHOT, (app_id,)).fetchone()
    return None if row is None else tuple(row)


def decided_on(run: RunRecord) -> tuple:
    return (run.run_id, int(run.lineage is not None), run.last_event, json.dumps(run.pending))


class RunChanged(Exception):
    """The run changed between deciding and writing: decide again."""


def until_unchanged(store: Store, app_id: str, attempt) -> Any:
    """Run ``attempt`` (read, build, write-if-unchanged) until the run did not change under it."""
    for _ in range(5):
        try:
            return attempt()
        except RunChanged:
            continue
    return attempt()
