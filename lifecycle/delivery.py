"""Delivery of the lifecycle's events: what ``state``/``flush`` and the compile service call.

Before delivering, the runs a resubmission replaced are closed and recorded transitions are
turned into events (:mod:`.runs`); then the outbox sends what is due with its retry policy
(``lineage.retry-*``), to every backend of the configured transport (one, or each child of a
``composite``: :mod:`planlineage.emitter.backends`), each within its share of the time.
Fail-open: a problem is one log line (one per backend that kept events) and ``None``.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from planlineage.emitter import outbox
from planlineage.emitter.backends import Backend, opened
from planlineage.errors import StoreError
from planlineage.lifecycle.runs import close_replaced, fail_open, materialize, replay_spooled
from planlineage.settings import Settings
from planlineage.store.sqlite import Store

log = logging.getLogger(__name__)


#: Work a delivery pass turns into events first: transitions recorded, replaced runs to close.
_NOT_YET_EVENTS = (
    "EXISTS (SELECT 1 FROM runs WHERE lineage IS NOT NULL AND pending != '[]') OR EXISTS (SELECT 1 FROM closing)"
)


@fail_open("lineage delivery", fallback=False)
def has_work(store: Store) -> bool:
    """Whether a flush has something to do: events not delivered, transitions not yet events,
    replaced runs not yet closed."""
    if not store.exists():
        return False
    query = f"SELECT EXISTS (SELECT 1 FROM outbox WHERE status = 'pending') OR {_NOT_YET_EVENTS}"
    return bool(store.read(lambda c: c.execute(query).fetchone()[0], default=False))


@fail_open("lineage delivery", fallback=False)
def arrived_since(store: Store, since: str) -> bool:
    """Whether work came that no delivery pass since ``since`` (a stored time) can have seen:
    transitions not yet events, replaced runs not yet closed, events queued after it and never
    tried. A compile service that ends checks this after letting its lock go: a state reported
    while it was ending found the lock still held and started none (events kept only because the
    backend is away were tried, so they start nothing: no service loops on a backend that is down)."""
    if not store.exists():
        return False
    query = (
        f"SELECT {_NOT_YET_EVENTS} "
        "OR EXISTS (SELECT 1 FROM outbox WHERE status = 'pending' AND attempts = 0 AND created >= ?)"
    )
    return bool(store.read(lambda c: c.execute(query, (since,)).fetchone()[0], default=False))


def _changed(settings: Settings):
    """A check whether the stored settings changed since now: made at most twice a second, but
    always when asked ``now_or_never`` (before an event is parked for access)."""
    try:
        before = settings.version()
    except StoreError:
        return None
    last: list[Any] = [0.0, False]  # when the settings were last read, and whether they changed

    def changed(now_or_never: bool = False) -> bool:
        now = time.monotonic()
        if not last[1] and (now_or_never or now - last[0] >= 0.5):
            last[0] = now
            try:
                last[1] = settings.version() != before
            except StoreError:
                pass
        return last[1]

    return changed


@fail_open("lineage delivery")
def deliver_for(store: Store, settings: Settings, budget: float) -> outbox.FlushReport | None:
    """Deliver with the outbox's backoff until nothing is pending or ``budget`` seconds have
    passed (the detached runner's delivery); one log line if something stays behind."""
    if not settings.configured() or not store.exists():
        return None
    close_replaced(store)
    materialize(store)
    end = time.monotonic() + budget
    while True:
        # A setting changed while delivering (a fixed token: `settings set` requeued what 401/403
        # parked): deliver on with the settings as they are now, never park again with the old.
        stale = _changed(settings)
        config = settings.config()
        kind, options = settings.transport_options()
        policy = outbox.RetryPolicy.from_limits(config.limits)
        with opened(kind, options) as backends:
            report = outbox.deliver_until(store, backends, max(0.0, end - time.monotonic()), policy=policy, stale=stale)
        if report is None or not report.stale or time.monotonic() >= end:
            break
        settings = Settings(store, settings.environ)
        if not settings.configured():
            return report
    if report is not None and (report.stopped or report.timed_out or report.parked or report.remaining):
        _log_behind(report, backends)
    return report


def _log_behind(report: outbox.FlushReport, backends: list[Backend]) -> None:
    """One line for what stays behind: per backend of a composite, naming where it sends."""
    if not report.backends:
        log.warning("planlineage: %s", outbox.describe(report))
        return
    for backend in backends:
        part = report.backends.get(backend.name)
        if part is not None and (part.stopped or part.timed_out or part.parked or part.remaining):
            log.warning("planlineage: %s", outbox.describe_backend(part, backend.describe()))


@fail_open("lineage delivery")
def flush(store: Store, settings: Settings, deadline_seconds: float = 3.0) -> outbox.FlushReport | None:
    """Deliver what is pending with the configured transport, within ``deadline_seconds``.

    Logs one line when something stays behind; ``None`` when not configured or on a problem.
    """
    end = time.monotonic() + deadline_seconds  # loading the transport counts against it too
    if not settings.configured() or not store.exists():
        return None
    try:
        replay_spooled(store)
    except StoreError:
        pass  # still busy: the spool waits for the next command
    close_replaced(store)
    materialize(store)
    config = settings.config()
    kind, options = settings.transport_options()
    policy = outbox.RetryPolicy.from_limits(config.limits)
    with opened(kind, options) as backends:
        left = max(0.0, end - time.monotonic())
        report = outbox.deliver_pending(store, backends, left, policy=policy, stale=_changed(settings))
    if report.stopped or report.timed_out or report.parked:
        _log_behind(report, backends)
    return report
