"""The durable outbox: an event is stored before it is sent and removed only once delivered.

Order is per run, never global
------------------------------
Within a run, ``seq`` follows the order the lifecycle queued events in (START, then RUNNING, then
the terminal event; parent before children), and a run's event is only sent once every earlier
event of that run was delivered.  Runs are independent: a run whose head event is refused waits
alone while the others flow.

What happens to an event that does not go through
-------------------------------------------------
* **The server is unreachable or says it is busy** (connection refused, 429, 503): the pass stops
  (every other event would meet the same fate); nothing is counted against the event.
* **The server refuses this event** (other 5xx) **or did not answer in time**: the event backs
  off alone (``retry-backoff`` seconds, doubling up to :data:`MAX_BACKOFF_SECONDS`), counting
  attempts; past ``retry-attempts`` attempts or ``retry-max-age`` seconds since its first failure
  it is **parked** (``capped``).  A timed-out event is resent byte for byte: the receiver sees it
  at least once and recognises a repeat by (runId, job, eventType, eventTime).
* **401 / 403 and other refusals of the configuration** (404, 406…): the event is parked
  (``access``) until the address or the token changes (``settings set`` requeues it, see
  :func:`requeue_access`) or ``planlineage outbox retry``.
* **400 / 413 / 422, a body the server will never take**: the event is parked (``event``) and
  the run's later events go on without it (holding them would lose them all).

A parked ``access`` or ``capped`` event holds back its run's later events, so order holds.
Parked events are kept, listed by :func:`listing` (``planlineage outbox list``) and put back in
line by :func:`retry` (``planlineage outbox retry [--run R] [--backend B]``).

Backends: with a ``composite`` transport every event is delivered to each of its transports on
its own (one delivery cursor per backend: :mod:`.outbox_rows`); everything above holds per
backend.  A pass splits its time between the backends: each gets an equal share of what is left
when its turn comes, and what a backend does not use goes to the ones after it, then to those
that ran out of time; one that is down ends its turn at once, one that is slow cannot take the
others' time.  Claims, leases and settling: :mod:`.outbox_rows`; listings: :mod:`.outbox_listing`.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from planlineage.clock import utc_now
from planlineage.emitter import outbox_health
from planlineage.emitter.backends import Backend
from planlineage.emitter.outbox_listing import (  # noqa: F401 - the outbox's one API for its callers
    count_parked,
    count_pending,
    counts,
    listing,
    next_due,
    parked,
    pending,
    requeue_access,
    retry,
)
from planlineage.emitter.outbox_rows import (  # noqa: F401
    DEFAULT_BATCH,
    EVENT_REFUSALS,
    LEASE_MARGIN_SECONDS,
    MAX_BACKOFF_SECONDS,
    UNAVAILABLE_STATUSES,
    RetryPolicy,
    claim,
    claim_probe,
    prepare,
    release_all,
    release_one,
    settle,
    verdict,
)
from planlineage.emitter.transports.base import Delivered, RetryLater, Transport, short
from planlineage.store.node import new_holder
from planlineage.store.sqlite import Store

log = logging.getLogger(__name__)


@dataclass
class FlushReport:
    delivered: int = 0
    parked: int = 0  # parked by this pass
    retry_later: int = 0
    remaining: int = 0  # pending after the pass (waiting or due)
    parked_total: int = 0  # parked after the pass
    stopped: str | None = None  # why the server could not be reached, when it ended the pass
    timed_out: bool = False
    stale: bool = False  # the settings changed under the pass: deliver again with a new transport
    #: per backend of a composite (name -> its own report; empty for a single transport)
    backends: dict[str, FlushReport] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.stopped is None and not self.timed_out and self.parked == 0

    def add(self, name: str, part: FlushReport) -> None:
        """Count one backend's turn in this pass's report."""
        self.delivered += part.delivered
        self.parked += part.parked
        self.retry_later += part.retry_later
        self.stale = self.stale or part.stale
        if name:
            own = self.backends.setdefault(name, FlushReport())
            own.delivered += part.delivered
            own.parked += part.parked
            own.retry_later += part.retry_later
            own.stopped, own.timed_out, own.stale = part.stopped, part.timed_out, part.stale

    def stopped_backends(self) -> list[str]:
        return [name for name, part in self.backends.items() if part.stopped]


def enqueue_in(conn: sqlite3.Connection, run_id: str, job_name: str, event_type: str, payload: dict | str) -> bool:
    """Queue one event inside the caller's transaction; False if it was already queued (at any
    backend: an event a backend already took is not queued again for the others)."""
    text = payload if isinstance(payload, str) else json.dumps(payload, sort_keys=True)
    seq = conn.execute("SELECT COALESCE(MAX(seq), -1) + 1 FROM outbox WHERE run_id = ?", (run_id,)).fetchone()[0]
    cursor = conn.execute(
        "INSERT INTO outbox (run_id, seq, event_type, job_name, payload, created) SELECT ?, ?, ?, ?, ?, ? "
        "WHERE NOT EXISTS (SELECT 1 FROM outbox WHERE run_id = ? AND job_name = ? AND event_type = ?) "
        "ON CONFLICT (backend, run_id, job_name, event_type) DO NOTHING",
        (run_id, seq, event_type, job_name, text, utc_now(), run_id, job_name, event_type),
    )
    return cursor.rowcount == 1


def enqueue(store: Store, run_id: str, payloads: Iterable[dict]) -> int:
    """Queue serialized RunEvents of one run (in order) in one transaction; the count added."""
    items = list(payloads)

    def insert(conn: sqlite3.Connection) -> int:
        added = 0
        for payload in items:
            added += enqueue_in(conn, run_id, payload["job"]["name"], payload["eventType"], payload)
        return added

    return store.write(insert)


def _deliver_backend(
    store: Store,
    backend: Backend,
    deadline_seconds: float,
    batch: int,
    policy: RetryPolicy,
    stale: Callable[..., bool] | None,
    health: outbox_health.Health,
    now: float,
) -> FlushReport:
    """One backend's turn of a pass: its due rows, in order per run, within ``deadline_seconds``
    (``health``: the backend as a whole as the pass began, ``now`` on the store's clock)."""
    report = FlushReport()
    transport = backend.transport
    if transport is None:  # its config cannot be built: its events wait for a fixed one
        report.stopped = backend.error or "the transport is not usable"
        return report
    if health.waiting(now):  # it asked to be left alone (Retry-After) or it hangs
        report.stopped = f"left alone {round((health.not_before or now) - now)} s more: {health.reason}"
        return report
    holder = new_holder()
    started = time.monotonic()
    lease = deadline_seconds + LEASE_MARGIN_SECONDS
    held_back: set[str] = set()  # runs with a failed row in this pass: their later rows wait
    delivered: list[int] = []  # sent, still leased: removed with the next claim or the release
    failing = failed_before = health.failing
    try:
        while report.stopped is None and not report.timed_out and not report.stale:
            if time.monotonic() - started >= deadline_seconds:
                report.timed_out = True
                break
            claimed = claim(store, backend.name, holder, batch, lease, delivered)
            rows = [r for r in claimed if r["run_id"] not in held_back]
            if not rows:
                if failing and not held_back and health.probe_due(now):
                    health = outbox_health.Health()  # one probe a pass
                    if _probe(store, backend, holder, deadline_seconds - (time.monotonic() - started), policy, report):
                        failing = failed_before = False
                        continue
                break
            for row in rows:
                if row["run_id"] in held_back:
                    continue  # released at the end, untouched
                left = deadline_seconds - (time.monotonic() - started)
                if left <= 0:
                    report.timed_out = True
                    break
                outcome = transport.send(row["payload"], timeout=left)
                found = verdict(outcome)
                if found == "delivered":
                    delivered.append(row["id"])
                    report.delivered += 1
                    if failing:
                        # Failing since an earlier pass, it is back: what waited out its backoff is
                        # due now.  Failed in this pass only: that event was refused, not the backend.
                        outbox_health.record_recovered(store, backend.name, due_again=failed_before)
                        failing = failed_before = False
                    continue
                reason = getattr(outcome, "reason", "")
                if found == "park-access" and stale is not None and stale(True):
                    # sent with settings changed meanwhile (a fixed token): due again, with the new ones
                    settle(store, holder, row, "unavailable", reason, policy)
                    report.stale = True
                    break
                applied = settle(store, holder, row, found, reason, policy)
                held_back.add(row["run_id"])
                if isinstance(outcome, RetryLater) and (not failing or outcome.timed_out or outcome.retry_after):
                    failing = True
                    wait = outbox_health.record_failure(
                        store,
                        backend.name,
                        reason,
                        policy,
                        retry_after=outcome.retry_after,
                        timed_out=outcome.timed_out,
                    )
                    if outcome.timed_out:  # the backend hangs: every other event would hang too
                        report.stopped = f"{reason}; left alone {round(wait or 0)} s"
                if applied == "unavailable":
                    report.retry_later += 1
                    report.stopped = reason
                    break
                if applied == "backoff":
                    report.retry_later += 1
                else:
                    report.parked += 1
                    log.warning(
                        "planlineage: lineage event %s of %s parked%s (%s): %s",
                        row["event_type"],
                        row["job_name"],
                        f" at {backend.describe()}" if backend.name else "",
                        applied.removeprefix("park-"),
                        short(reason),
                    )
                if report.stopped:  # a timeout: the backend is left alone, this turn ends
                    break
    finally:
        release_all(store, holder, delivered)
    return report


def _probe(store: Store, backend: Backend, holder: str, left: float, policy: RetryPolicy, report: FlushReport) -> bool:
    """Send one waiting event of a failing backend ahead of its time; True when it was delivered
    (the backend is back: its waiting events are due now).  A failed probe counts nothing against
    its event."""
    row = claim_probe(store, backend.name, holder, left + LEASE_MARGIN_SECONDS)
    if row is None or left <= 0 or backend.transport is None:
        if row is not None:
            release_one(store, holder, row["id"])
        return False
    outcome = backend.transport.send(row["payload"], timeout=left)
    if isinstance(outcome, Delivered):
        release_all(store, holder, [row["id"]])
        outbox_health.record_recovered(store, backend.name)
        report.delivered += 1
        return True
    release_one(store, holder, row["id"])
    reason = getattr(outcome, "reason", "")
    if isinstance(outcome, RetryLater) and (outcome.timed_out or outcome.retry_after):
        outbox_health.record_failure(
            store, backend.name, reason, policy, retry_after=outcome.retry_after, timed_out=outcome.timed_out
        )
    else:
        outbox_health.record_probe_failed(store, backend.name, policy)
    report.stopped = f"still failing: {reason}" if reason else None
    return False


def _backends_of(target: Transport | Sequence[Backend]) -> list[Backend]:
    return [Backend("", target)] if isinstance(target, Transport) else list(target)


def deliver_pending(
    store: Store,
    target: Transport | Sequence[Backend],
    deadline_seconds: float = 5.0,
    *,
    batch: int = DEFAULT_BATCH,
    policy: RetryPolicy | None = None,
    stale: Callable[..., bool] | None = None,
) -> FlushReport:
    """One pass: send every due event (oldest first, in order per run) to ``target`` (a transport,
    or the backends of :func:`planlineage.emitter.backends.open_backends`) until none is left, the
    server is unavailable, or the deadline; each backend on its own, within its share of the time.

    ``stale(now_or_never)`` answers whether the settings changed since the transports were made
    (``True``: check now, not from a cache): then an event
    refused for access (401/403…) is not parked (the new address or token may be accepted) and the
    pass ends with :attr:`FlushReport.stale`, for the caller to make new transports.

    Never sends once ``deadline_seconds`` have passed; each request's timeout is cut to the time
    left.  Without a store, nothing happens (and nothing is created).
    """
    policy = policy or RetryPolicy()
    report = FlushReport()
    if not store.exists():
        return report
    backends = _backends_of(target)
    started = time.monotonic()
    known, now = prepare(store, [b.name for b in backends])
    health = outbox_health.from_rows(known)
    turns = list(backends)  # backends that may still have due rows in this pass
    timed_out: set[str] = set()
    while turns and not report.stale:
        later = []
        for index, backend in enumerate(turns):
            left = deadline_seconds - (time.monotonic() - started)
            share = max(0.0, left) / (len(turns) - index)
            part = _deliver_backend(
                store, backend, share, batch, policy, stale, health.get(backend.name, outbox_health.Health()), now
            )
            report.add(backend.name, part)
            if part.stale:
                break
            if part.stopped and not report.stopped:
                report.stopped = f"{backend.name}: {part.stopped}" if backend.name else part.stopped
            if part.timed_out:
                timed_out.add(backend.name)
                later.append(backend)
            else:
                timed_out.discard(backend.name)
        if time.monotonic() - started >= deadline_seconds:
            break
        turns = later  # time left: the backends cut short by their share go on with it
    report.timed_out = bool(timed_out) and not report.stale
    report.remaining, report.parked_total, per_backend = counts(store)
    for name, part in report.backends.items():
        part.timed_out = name in timed_out
        part.remaining = per_backend.get(name, 0)
    return report


def deliver_until(
    store: Store,
    target: Transport | Sequence[Backend],
    budget: float,
    *,
    policy: RetryPolicy | None = None,
    stale: Callable[..., bool] | None = None,
) -> FlushReport | None:
    """Passes until nothing is pending or ``budget`` seconds have passed, waiting between them
    for the next event's backoff or, while a server is unavailable, 0.5 s doubling to 4 s (the
    other backends' due events do not wait for it).
    Ends early (``report.stale``) once ``stale()`` says the settings changed (see :func:`deliver_pending`).

    The last pass's report, or None when nothing was pending.
    """
    end = time.monotonic() + budget
    pause = 0.5
    report = None
    while time.monotonic() < end:
        report = deliver_pending(store, target, end - time.monotonic(), policy=policy, stale=stale)
        if report.remaining == 0 or report.timed_out or report.stale:
            break
        if stale is not None and stale():
            report.stale = True
            break
        waits = []
        if report.stopped:
            waits.append(pause)
            pause = min(pause * 2, 4.0)
        due = next_due(store, report.stopped_backends() if report.backends else ([""] if report.stopped else ()))
        if due is not None:
            waits.append(max(due, 0.05))
        if not waits:
            break
        wait = min(waits)
        if time.monotonic() + wait >= end:
            break
        time.sleep(wait)
    return report


def describe(report: FlushReport) -> str:
    """One line about a flush, for the CLI."""
    parts = [f"{report.delivered} delivered"]
    if report.parked:
        parts.append(f"{report.parked} parked")
    if report.remaining:
        parts.append(f"{report.remaining} kept for later")
    if report.parked_total:
        parts.append(f"{report.parked_total} parked in all (planlineage outbox list)")
    if report.stopped:
        parts.append(f"stopped: {short(report.stopped, 200)}")
    elif report.timed_out:
        parts.append("stopped: time limit")
    return "lineage events: " + ", ".join(parts)


def describe_backend(report: FlushReport, where: str) -> str:
    """One line about one backend's part of a flush (``where``: its secret-free description)."""
    return describe(report).replace("lineage events:", f"lineage events to {where}:", 1)
