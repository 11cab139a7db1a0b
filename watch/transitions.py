"""Where an adapter's records become the lifecycle's calls, the same for every platform: a job
seen in a state is told to its current run (:func:`tell`), and a run that a history replay (or an
earlier poll) reported already is continued, never started twice (:func:`replayed`)."""

from __future__ import annotations

from planlineage.emitter.run_ids import TERMINAL_EVENT_TYPES
from planlineage.lifecycle import runs
from planlineage.store.sqlite import Store
from planlineage.watch.records import JobSeen


def tell(store: Store, seen: JobSeen) -> str | None:
    """The lifecycle told that the job's current run is in ``seen.state``: the event type it
    queued (or deferred), None when the state changes nothing."""
    return runs.record_state(store, seen.key, seen.state, seen.error, event_time=seen.at)


def open_run(store: Store, job_key: str) -> runs.RunRecord | None:
    """The job's current run if it never ended (None: no run, or its end was reported)."""
    current = runs.current_run(store, job_key)
    return current if current is not None and current.last_event not in TERMINAL_EVENT_TYPES else None


def replayed(store: Store, key: str, job_key: str, known: dict[str, str] | None = None) -> bool | None:
    """Whether the run ``key`` names (the platform's own ids: ``streampark:app=<id>:log=<row>``,
    ``dinky:instance=<id>``) was reported already: None (no), True (yes, and it is the job's open
    current run: the live watcher continues it), False (yes, and it has ended).
    ``known``: :func:`planlineage.history.ledger.lookup_many` of the keys of the runs a poll
    starts, read once."""
    from planlineage.history import ledger

    recorded = known.get(key) if known is not None else ledger.lookup(store, key)
    if recorded is None:
        return None
    current = open_run(store, job_key)
    return current is not None and current.run_id == recorded
