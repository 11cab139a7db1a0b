"""Dinky's past runs, read from its job instances: what ``watch --dinky-db … --history`` replays.

A run is a ``dinky_job_instance`` row of a FlinkSql task (neither soft-deleted), started at its
``create_time``.  It ended at ``finish_time`` as its status says (FINISHED → COMPLETE, FAILED →
FAIL with its ``error``, CANCELED → ABORT, UNKNOWN → ABORT as the live watcher ends it); an
instance not done that a newer instance of its task replaced ended with ABORT when that one was
created (as the live watcher closes a run that never ended); the newest instance of a task still
alive is still running (START and RUNNING are sent, and the live watcher continues that run).

The SQL is the instance's ``dinky_history.statement`` with Dinky's syntax resolved as the live
watcher does (:mod:`.sql`; global variables with their values of today: Dinky keeps no history of
them); the Flink version that of its cluster.  Times are Dinky's wall time, read in the watcher's
``zone``.  ``run_key`` ``dinky:instance=<id>`` names a run for the replay's ledger and the live
watcher alike.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime

from planlineage.dinky import reads, states
from planlineage.dinky import sql as dinky_sql
from planlineage.dinky.reads import Instance
from planlineage.history.records import PastRun

_END_EVENTS = {"FINISHED": "COMPLETE", "FAILED": "FAIL", "CANCELED": "ABORT", "UNKNOWN": "ABORT"}


def replay_history(watcher, since: date | None, timeout: float) -> None:
    """``watch --dinky-db … --history --once``: this Dinky's past runs replayed once, the outcome said."""
    from planlineage.history.replay import replay

    report = replay(watcher.store, watcher.settings, past_runs(watcher, since), say=watcher.say, timeout=timeout)
    for line in report.lines():
        watcher.say(line)


def past_runs(watcher, since: date | None = None) -> Iterator[PastRun]:
    """Every past run of the reported tasks that started on ``since`` or later, oldest first."""
    schema = watcher._schema()
    source = watcher.source
    tasks = reads.tasks(source, schema)
    after = datetime.combine(since, datetime.min.time(), watcher.options.zone) if since else None
    every = [i for i in reads.instances_after(source, schema, 0) if not i.deleted and i.task_id in tasks]
    successor: dict[int, Instance] = {}  # each instance's next one of the same task
    latest: dict[int | None, Instance] = {}
    for inst in reversed(every):
        if inst.task_id in latest:
            successor[inst.id] = latest[inst.task_id]
        latest[inst.task_id] = inst
    fragments = reads.fragments(source, schema)
    for inst in every:
        task = tasks[inst.task_id]  # type: ignore[index]
        began = watcher.started_at(inst.created)
        if watcher.excluded(task) is not None or (after is not None and began < after):
            continue
        ended, event = _end(watcher, inst, successor.get(inst.id))
        text = reads.history_statement(source, schema, inst.history_id)
        if text is None:
            watcher.verbose(f"{task.key} {task.name}: instance {inst.id} has no dinky_history row: not replayed")
            continue
        try:
            prepared = dinky_sql.prepare(text, fragments if task.fragment else None)
        except dinky_sql.Unsupported as problem:
            watcher.once(f"history:{task.key}:{problem}", f"WARN {task.key} {task.name}: not replayed: {problem}")
            continue
        compile_with = watcher._flink(task, inst)
        if compile_with is None or not prepared.sql.strip():
            continue
        yield PastRun(
            platform="dinky",
            run_key=inst.run_key,
            app_id=task.key,
            job_name=task.name,
            sql=prepared.sql,
            flink_version=compile_with[0],
            started_at=began,
            ended_at=ended,
            end_event=event,
            error=inst.error if event == "FAIL" else None,
            jars=tuple(prepared.jars),
        )


def _end(watcher, inst: Instance, successor: Instance | None) -> tuple[datetime | None, str | None]:
    """When and how a past instance ended: ``(None, None)`` while it still runs."""
    if inst.status in _END_EVENTS and (inst.finished is not None or inst.status != "UNKNOWN"):
        at = inst.finished or inst.created
        return watcher.started_at(at), _END_EVENTS[inst.status]
    if successor is not None:  # replaced by a newer submission without an end state
        return watcher.started_at(successor.created), "ABORT"
    if inst.status in states.DONE:  # UNKNOWN without a finish time and nothing after it: the live
        return datetime.now(UTC), "ABORT"  # watcher would never follow it (done), so it ends now
    return None, None
