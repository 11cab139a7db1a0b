"""The poll loop of ``planlineage watch``, for every platform watcher (StreamPark's, Dinky's):
each polls on its own schedule, under its own leadership, with its own outage backoff."""

from __future__ import annotations

import signal
import threading
import time

from planlineage.store.sqlite import StoreError
from planlineage.streampark.connection import SourceError


def run_forever(watchers, interval: float, stop: threading.Event | None = None) -> None:
    """Poll every ``interval`` seconds until SIGTERM/SIGINT (or ``stop``); backoff while the
    database cannot be read, with one line when it goes away and one when it is back.

    ``watchers``: one or several (``--streampark-db`` and ``--dinky-db`` in one process); each
    needs ``poll``, ``compiling``, ``source``, ``say``, ``close``, ``lead_name`` and ``platform``.
    Each has its own leadership, outage and backoff: one database down never stops the other."""
    stop = stop or threading.Event()
    group = watchers if isinstance(watchers, list) else [watchers]

    def on_signal(signum, frame):
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    ceiling = min(60.0, max(5.0, 10 * interval))
    # Every node may watch one platform database; one leads (planlineage.store.leadership): the
    # others look twice per interval and take over within 2 intervals, from the shared cursor.
    from planlineage.store.leadership import Leadership

    leads = [Leadership(w.store, w.lead_name, interval=interval) for w in group]
    failures = [0] * len(group)
    due = [0.0] * len(group)
    while not stop.is_set():
        now = time.monotonic()
        for i, (watcher, leadership) in enumerate(zip(group, leads, strict=True)):
            if now < due[i]:
                continue
            due[i] = now + _one_round(watcher, leadership, failures, i, interval, ceiling)
        stop.wait(max(0.05, min(due) - time.monotonic()))
    for watcher, leadership in zip(group, leads, strict=True):
        try:
            leadership.release()  # a clean stop hands the lead over at once
        except StoreError:
            pass
        watcher.close()


def _one_round(watcher, leadership, failures: list[int], i: int, interval: float, ceiling: float) -> float:
    """One poll of one watcher if it leads; the seconds until its next round."""
    try:
        leading = leadership.acquire()
    except StoreError:
        leading = False  # the store is away: nobody reports until it is back
    if not leading:
        return leadership.follower_poll
    try:
        watcher.poll()
        watcher.compiling()
        if failures[i]:
            watcher.say(f"back to normal: the {watcher.platform} database is readable again")
        failures[i] = 0
        return interval
    except (SourceError, StoreError) as error:  # fail-open: one line per outage, then backoff
        if isinstance(error, SourceError):
            watcher.source.close()
            watcher.schema = None
        if failures[i] == 0:
            watcher.say(f"{error}; retrying with backoff")
        failures[i] += 1
        return min(ceiling, interval * 2 ** failures[i])
