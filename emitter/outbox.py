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
line by :func:`retry` (``planlineage outbox retry [--run R]``).

Claims: a pass takes a small batch of rows in one transaction by writing its own ``claimed_by``
(``node:pid:random``) and a lease end (``claim_until``, on the database's clock) on them: on
SQLite inside ``BEGIN IMMEDIATE``, on PostgreSQL with ``SELECT … FOR UPDATE SKIP LOCKED`` (nodes
take disjoint rows without waiting).  Another process only takes rows whose lease is absent or
expired, and never a row of a run whose earlier row another still leases: no ``(runId, job,
eventType)`` sent twice, no run's later event before its earlier one.  The lease outlives the
pass's deadline: only a process that died mid-send (or mid-batch: delivered rows are removed a
batch at a time, with the next claim) lets another resend its rows (at-least-once, never lost).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from planlineage.clock import lease_clock, utc_now
from planlineage.emitter.transports.base import Delivered, Rejected, RetryLater, Transport, short
from planlineage.store.node import new_holder
from planlineage.store.sqlite import Store

log = logging.getLogger("planlineage.emitter")

DEFAULT_BATCH = 50  # rows per claim: a pass costs a few store transactions per batch
LEASE_MARGIN_SECONDS = 30.0
MAX_BACKOFF_SECONDS = 600.0
#: Answers that say the server as a whole cannot take events now: stop the pass, count nothing.
UNAVAILABLE_STATUSES = frozenset({429, 503})
#: Refusals of the event itself: parked, the run's later events go on.
EVENT_REFUSALS = frozenset({400, 413, 422})


@dataclass(frozen=True)
class RetryPolicy:
    """How long one refused event is retried before it is parked."""

    backoff: float = 2.0  # seconds before the 2nd attempt; doubles per attempt
    max_attempts: int = 10
    max_age: float = 24 * 3600.0  # seconds since the first failure

    def delay(self, attempts: int) -> float:
        return min(self.backoff * (2 ** max(attempts - 1, 0)), MAX_BACKOFF_SECONDS)

    @classmethod
    def from_values(cls, values: Mapping[str, str | None]) -> RetryPolicy:
        """From ``lineage.retry-*`` settings (missing or unreadable values keep the default)."""
        base = cls()

        def number(key: str, default: float) -> float:
            try:
                value = float(values.get(key) or default)
            except ValueError:
                return default
            return value if value >= 0 else default

        return cls(
            backoff=number("lineage.retry-backoff", base.backoff),
            max_attempts=max(1, int(number("lineage.retry-attempts", base.max_attempts))),
            max_age=number("lineage.retry-max-age", base.max_age),
        )


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

    @property
    def ok(self) -> bool:
        return self.stopped is None and not self.timed_out and self.parked == 0


def enqueue_in(conn: sqlite3.Connection, run_id: str, job_name: str, event_type: str, payload: dict | str) -> bool:
    """Queue one event inside the caller's transaction; False if it was already queued."""
    text = payload if isinstance(payload, str) else json.dumps(payload, sort_keys=True)
    seq = conn.execute("SELECT COALESCE(MAX(seq), -1) + 1 FROM outbox WHERE run_id = ?", (run_id,)).fetchone()[0]
    cursor = conn.execute(
        "INSERT INTO outbox (run_id, seq, event_type, job_name, payload, created) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (run_id, job_name, event_type) DO NOTHING",
        (run_id, seq, event_type, job_name, text, utc_now()),
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


# A row may go when it is due and free, and nothing earlier in its run still has to go first:
# an earlier row that waits for its backoff, is leased by another process, or is parked for a
# reason that also concerns the rows after it.
_CLAIMABLE = """
    SELECT o.id, o.run_id, o.seq, o.job_name, o.event_type, o.payload, o.attempts, o.first_failed
    FROM outbox o
    WHERE o.status = 'pending'
      AND (o.next_attempt IS NULL OR o.next_attempt <= :now)
      AND (o.claim_until IS NULL OR o.claim_until < :now)
      AND NOT EXISTS (
        SELECT 1 FROM outbox p
        WHERE p.run_id = o.run_id AND p.seq < o.seq
          AND ((p.status = 'parked' AND p.parked != 'event')
               OR (p.status = 'pending'
                   AND ((p.next_attempt IS NOT NULL AND p.next_attempt > :now)
                        OR (p.claim_until IS NOT NULL AND p.claim_until >= :now))))
      )
    ORDER BY o.id
    LIMIT :batch
"""


def _run_prefixes(conn, rows: list) -> list:
    """The rows that are, per run, the run's next rows to go in order, nothing in between.

    On PostgreSQL another node may hold an earlier row of a run locked but not yet marked as
    claimed (``SKIP LOCKED`` hides it from this claim, the ``NOT EXISTS`` above still sees it
    free): a later row of that run must not be taken then.  On SQLite this never removes a row.
    """
    if not rows:
        return rows
    wanted = {r["id"] for r in rows}
    runs = sorted({r["run_id"] for r in rows})
    marks = ",".join("?" * len(runs))
    order = conn.execute(
        f"SELECT id, run_id FROM outbox WHERE run_id IN ({marks}) "
        "AND (status = 'pending' OR (status = 'parked' AND parked != 'event')) ORDER BY run_id, seq, id",
        tuple(runs),
    ).fetchall()
    allowed: set = set()
    blocked: set = set()
    for row in order:
        if row["run_id"] in blocked:
            continue
        if row["id"] in wanted:
            allowed.add(row["id"])
        else:
            blocked.add(row["run_id"])
    return [r for r in rows if r["id"] in allowed]


def _claim(
    store: Store, holder: str, batch: int, lease_seconds: float, delivered: list[int] | None = None
) -> list[dict[str, Any]]:
    """Take the next batch, removing the previous batch's ``delivered`` rows (still leased by us)."""

    def claim(conn) -> list[dict[str, Any]]:
        _remove_delivered(conn, holder, delivered)
        now = conn.clock()
        rows = conn.execute(_CLAIMABLE + conn.skip_locked, {"now": now, "batch": batch}).fetchall()
        rows = _run_prefixes(conn, rows)
        ids = [r["id"] for r in rows]
        if ids:
            marks = ",".join("?" * len(ids))
            conn.execute(
                f"UPDATE outbox SET claimed_by = ?, claim_until = ? WHERE id IN ({marks})",
                (holder, now + lease_seconds, *ids),
            )
        return [dict(r) for r in rows]

    return store.write(claim, exclusive=False)


def _remove_delivered(conn, holder: str, delivered: list[int] | None) -> None:
    """Delete the rows this pass delivered (one statement for a whole batch)."""
    if delivered:
        marks = ",".join("?" * len(delivered))
        conn.execute(f"DELETE FROM outbox WHERE claimed_by = ? AND id IN ({marks})", (holder, *delivered))
        delivered.clear()


def _release_all(store: Store, holder: str, delivered: list[int] | None = None) -> None:
    def release(conn) -> None:
        _remove_delivered(conn, holder, delivered)
        conn.execute("UPDATE outbox SET claimed_by = NULL, claim_until = NULL WHERE claimed_by = ?", (holder,))

    store.write(release, exclusive=False)


def _verdict(outcome: Any) -> str:
    """``delivered``, ``unavailable`` (stop the pass), ``backoff``, ``park-access`` or ``park-event``."""
    if isinstance(outcome, Delivered):
        return "delivered"
    if isinstance(outcome, Rejected):
        return "park-event" if outcome.status in EVENT_REFUSALS else "park-access"
    if isinstance(outcome, RetryLater) and (
        outcome.timed_out or (outcome.status or 0) not in (0, *UNAVAILABLE_STATUSES)
    ):
        return "backoff"
    return "unavailable"


def _settle(store: Store, holder: str, row: dict[str, Any], verdict: str, reason: str, policy: RetryPolicy) -> str:
    """Record what became of one claimed row not delivered; the verdict as applied (``backoff`` may park)."""

    def settle(conn) -> str:
        now = conn.clock()
        where = "WHERE id = ? AND claimed_by = ?"
        key = (row["id"], holder)
        release = "claimed_by = NULL, claim_until = NULL"
        if verdict == "unavailable":
            conn.execute(f"UPDATE outbox SET last_error = ?, {release} {where}", (reason, *key))
            return verdict
        if verdict in ("park-access", "park-event"):
            kind = verdict.removeprefix("park-")
            conn.execute(
                f"UPDATE outbox SET status = 'parked', parked = ?, attempts = attempts + 1, last_error = ?, "
                f"first_failed = COALESCE(first_failed, ?), next_attempt = NULL, {release} {where}",
                (kind, reason, now, *key),
            )
            return verdict
        attempts = row["attempts"] + 1
        first = row["first_failed"] or now
        if attempts >= policy.max_attempts or now - first >= policy.max_age:
            conn.execute(
                f"UPDATE outbox SET status = 'parked', parked = 'capped', attempts = ?, first_failed = ?, "
                f"next_attempt = NULL, last_error = ?, {release} {where}",
                (attempts, first, reason, *key),
            )
            return "park-capped"
        conn.execute(
            f"UPDATE outbox SET attempts = ?, first_failed = ?, next_attempt = ?, last_error = ?, {release} {where}",
            (attempts, first, now + policy.delay(attempts), reason, *key),
        )
        return verdict

    return store.write(settle, exclusive=False)


def count_pending(store: Store) -> int:
    return store.read(
        lambda c: c.execute("SELECT COUNT(*) FROM outbox WHERE status = 'pending'").fetchone()[0],
        default=0,
    )


def count_parked(store: Store) -> int:
    return store.read(
        lambda c: c.execute("SELECT COUNT(*) FROM outbox WHERE status = 'parked'").fetchone()[0],
        default=0,
    )


def next_due(store: Store) -> float | None:
    """Seconds until the next waiting event is due (0 when one is due now), None if none waits."""
    when, now = store.read(
        lambda c: (
            c.execute("SELECT MIN(COALESCE(next_attempt, 0)) FROM outbox WHERE status = 'pending'").fetchone()[0],
            c.clock(),
        ),
        default=(None, None),
    )
    return None if when is None else max(0.0, when - now)


def deliver_pending(
    store: Store,
    transport: Transport,
    deadline_seconds: float = 5.0,
    *,
    batch: int = DEFAULT_BATCH,
    policy: RetryPolicy | None = None,
    stale: Callable[..., bool] | None = None,
) -> FlushReport:
    """One pass: send every due event (oldest first, in order per run) until none is left, the
    server is unavailable, or the deadline.

    ``stale(now_or_never)`` answers whether the settings changed since ``transport`` was made
    (``True``: check now, not from a cache): then an event
    refused for access (401/403…) is not parked (the new address or token may be accepted) and the
    pass ends with :attr:`FlushReport.stale`, for the caller to make a new transport.

    Never sends once ``deadline_seconds`` have passed; each request's timeout is cut to the time
    left.  Without a store, nothing happens (and nothing is created).
    """
    policy = policy or RetryPolicy()
    report = FlushReport()
    if not store.exists():
        return report
    holder = new_holder()
    started = time.monotonic()
    lease = deadline_seconds + LEASE_MARGIN_SECONDS
    held_back: set[str] = set()  # runs with a failed row in this pass: their later rows wait
    delivered: list[int] = []  # sent, still leased: removed with the next claim or the release
    try:
        while report.stopped is None and not report.timed_out and not report.stale:
            if time.monotonic() - started >= deadline_seconds:
                report.timed_out = True
                break
            rows = [r for r in _claim(store, holder, batch, lease, delivered) if r["run_id"] not in held_back]
            if not rows:
                break
            for row in rows:
                if row["run_id"] in held_back:
                    continue  # released at the end, untouched
                left = deadline_seconds - (time.monotonic() - started)
                if left <= 0:
                    report.timed_out = True
                    break
                outcome = transport.send(row["payload"], timeout=left)
                verdict = _verdict(outcome)
                if verdict == "delivered":
                    delivered.append(row["id"])
                    report.delivered += 1
                    continue
                reason = getattr(outcome, "reason", "")
                if verdict == "park-access" and stale is not None and stale(True):
                    # sent with settings changed meanwhile (a fixed token): due again, with the new ones
                    _settle(store, holder, row, "unavailable", reason, policy)
                    report.stale = True
                    break
                applied = _settle(store, holder, row, verdict, reason, policy)
                held_back.add(row["run_id"])
                if applied == "unavailable":
                    report.retry_later += 1
                    report.stopped = reason
                    break
                if applied == "backoff":
                    report.retry_later += 1
                    continue
                report.parked += 1
                log.warning(
                    "planlineage: lineage event %s of %s parked (%s): %s",
                    row["event_type"],
                    row["job_name"],
                    applied.removeprefix("park-"),
                    short(reason),
                )
    finally:
        _release_all(store, holder, delivered)
    report.remaining = count_pending(store)
    report.parked_total = count_parked(store)
    return report


def deliver_until(
    store: Store,
    transport: Transport,
    budget: float,
    *,
    policy: RetryPolicy | None = None,
    stale: Callable[..., bool] | None = None,
) -> FlushReport | None:
    """Passes until nothing is pending or ``budget`` seconds have passed, waiting between them
    for the next event's backoff or, while the server is unavailable, 0.5 s doubling to 4 s.
    Ends early (``report.stale``) once ``stale()`` says the settings changed (see :func:`deliver_pending`).

    The last pass's report, or None when nothing was pending.
    """
    end = time.monotonic() + budget
    pause = 0.5
    report = None
    while time.monotonic() < end:
        report = deliver_pending(store, transport, end - time.monotonic(), policy=policy, stale=stale)
        if report.remaining == 0 or report.timed_out or report.stale:
            break
        if stale is not None and stale():
            report.stale = True
            break
        if report.stopped:
            wait = pause
            pause = min(pause * 2, 4.0)
        else:
            due = next_due(store)
            if due is None:
                break
            wait = max(due, 0.05)
        if time.monotonic() + wait >= end:
            break
        time.sleep(wait)
    return report


_LISTING = (
    "SELECT id, run_id, seq, job_name, event_type, status, parked, attempts, next_attempt, last_error, created "
    "FROM outbox {where} ORDER BY run_id, seq"
)


def listing(store: Store, run_id: str | None = None) -> list[dict[str, Any]]:
    """Every undelivered event (of one run), in order per run, with ``state``: ``due``,
    ``waiting`` (backing off, ``wait`` seconds left) or ``parked (<kind>)``."""
    where, params = ("WHERE run_id = ?", (run_id,)) if run_id else ("", ())
    now = store.read(lambda c: c.clock(), default=lease_clock())  # the clock leases are measured with
    found = []
    for row in store.rows(_LISTING.format(where=where), params):
        if row["status"] == "parked":
            row["state"] = f"parked ({row['parked']})"
        elif row["next_attempt"] and row["next_attempt"] > now:
            row["state"] = "waiting"
            row["wait"] = round(row["next_attempt"] - now, 1)
        else:
            row["state"] = "due"
        found.append(row)
    return found


def pending(store: Store) -> list[dict[str, Any]]:
    return [r for r in listing(store) if r["status"] == "pending"]


def parked(store: Store) -> list[dict[str, Any]]:
    return [r for r in listing(store) if r["status"] == "parked"]


def retry(store: Store, run_id: str | None = None) -> int:
    """Put parked and backing-off events (of one run) back in line, due now; how many."""
    if not store.exists():
        return 0
    where, params = ("AND run_id = ?", (run_id,)) if run_id else ("", ())
    return store.write(
        lambda c: (
            c.execute(
                "UPDATE outbox SET status = 'pending', parked = NULL, attempts = 0, first_failed = NULL, "
                f"next_attempt = NULL WHERE (status = 'parked' OR next_attempt IS NOT NULL) {where}",
                params,
            ).rowcount
        )
    )


def requeue_access(store: Store) -> int:
    """Put events parked for access (401/403/404/406…) back in line: the address or the token
    changed, so the refusal may no longer hold; how many."""
    if not store.exists():
        return 0
    return store.write(
        lambda c: (
            c.execute(
                "UPDATE outbox SET status = 'pending', parked = NULL, next_attempt = NULL "
                "WHERE status = 'parked' AND parked = 'access'"
            ).rowcount
        )
    )


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
