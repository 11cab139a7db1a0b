"""The durable outbox: an event is stored before it is sent and removed only once delivered.

Order: rows are delivered oldest first (``id``); within a run, ``seq`` follows the order the
lifecycle queued them in (START, then RUNNING, then the terminal event; parent before children).
A pass stops at the first :class:`RetryLater`, so nothing overtakes an event that is waiting.

Claims: a pass takes a small batch of rows in one ``BEGIN IMMEDIATE`` transaction by writing its
own ``claimed_by`` and a lease end (``claim_until``) on them.  Another process only takes rows whose
lease is absent or expired, and never a row of a run whose earlier row is still leased by someone
else, so two processes flushing at once neither send the same ``(runId, job, eventType)`` twice
nor send a run's later event before its earlier one.  The lease outlives the pass's deadline, so
only a process that died mid-send lets another one retry its rows (at-least-once, never lost).

Rejected rows stay in the table with ``status = 'rejected'`` and the reason, out of the way of
later events; :func:`requeue_rejected` puts them back once the cause is fixed.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from planlineage.emitter.store import Store, lease_clock, utc_now
from planlineage.emitter.transports.base import Delivered, Rejected, Transport, short

log = logging.getLogger("planlineage.emitter")

DEFAULT_BATCH = 20
LEASE_MARGIN_SECONDS = 30.0


@dataclass
class FlushReport:
    delivered: int = 0
    rejected: int = 0
    retry_later: int = 0
    remaining: int = 0
    stopped: str | None = None  # the RetryLater reason that ended the pass
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.stopped is None and not self.timed_out and self.rejected == 0


def enqueue_in(conn: sqlite3.Connection, run_id: str, job_name: str, event_type: str, payload: dict | str) -> bool:
    """Queue one event inside the caller's transaction; False if it was already queued."""
    text = payload if isinstance(payload, str) else json.dumps(payload, sort_keys=True)
    seq = conn.execute("SELECT COALESCE(MAX(seq), -1) + 1 FROM outbox WHERE run_id = ?", (run_id,)).fetchone()[0]
    cursor = conn.execute(
        "INSERT OR IGNORE INTO outbox (run_id, seq, event_type, job_name, payload, created) VALUES (?, ?, ?, ?, ?, ?)",
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


def _claim(store: Store, worker: str, batch: int, lease_seconds: float) -> list[dict[str, Any]]:
    def claim(conn: sqlite3.Connection) -> list[dict[str, Any]]:
        now = lease_clock()
        rows = conn.execute(
            """
            SELECT o.id, o.run_id, o.seq, o.job_name, o.event_type, o.payload, o.attempts
            FROM outbox o
            WHERE o.status = 'pending'
              AND (o.claim_until IS NULL OR o.claim_until < :now)
              AND NOT EXISTS (
                SELECT 1 FROM outbox p
                WHERE p.run_id = o.run_id AND p.status = 'pending' AND p.seq < o.seq
                  AND p.claim_until IS NOT NULL AND p.claim_until >= :now
              )
            ORDER BY o.id
            LIMIT :batch
            """,
            {"now": now, "batch": batch},
        ).fetchall()
        ids = [r["id"] for r in rows]
        if ids:
            marks = ",".join("?" * len(ids))
            conn.execute(
                f"UPDATE outbox SET claimed_by = ?, claim_until = ? WHERE id IN ({marks})",
                (worker, now + lease_seconds, *ids),
            )
        return [dict(r) for r in rows]

    return store.write(claim)


def _release_all(store: Store, worker: str) -> None:
    store.write(
        lambda c: c.execute("UPDATE outbox SET claimed_by = NULL, claim_until = NULL WHERE claimed_by = ?", (worker,))
    )


def _settle(store: Store, worker: str, row_id: int, outcome: Any) -> None:
    def settle(conn: sqlite3.Connection) -> None:
        if isinstance(outcome, Delivered):
            conn.execute("DELETE FROM outbox WHERE id = ? AND claimed_by = ?", (row_id, worker))
        elif isinstance(outcome, Rejected):
            conn.execute(
                "UPDATE outbox SET status = 'rejected', attempts = attempts + 1, last_error = ?, "
                "claimed_by = NULL, claim_until = NULL WHERE id = ? AND claimed_by = ?",
                (outcome.reason, row_id, worker),
            )
        else:
            conn.execute(
                "UPDATE outbox SET attempts = attempts + 1, last_error = ?, "
                "claimed_by = NULL, claim_until = NULL WHERE id = ? AND claimed_by = ?",
                (outcome.reason, row_id, worker),
            )

    store.write(settle)


def count_pending(store: Store) -> int:
    return store.read(
        lambda c: c.execute("SELECT COUNT(*) FROM outbox WHERE status = 'pending'").fetchone()[0],
        default=0,
    )


def deliver_pending(
    store: Store,
    transport: Transport,
    deadline_seconds: float = 5.0,
    *,
    batch: int = DEFAULT_BATCH,
) -> FlushReport:
    """Send pending events oldest first until none is left, a RetryLater, or the deadline.

    Never sends once ``deadline_seconds`` have passed; each request's timeout is cut to the time
    left.  Without a store, nothing happens (and nothing is created).
    """
    report = FlushReport()
    if not store.exists():
        return report
    worker = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
    started = time.monotonic()
    lease = deadline_seconds + LEASE_MARGIN_SECONDS
    try:
        while report.stopped is None and not report.timed_out:
            if time.monotonic() - started >= deadline_seconds:
                report.timed_out = True
                break
            rows = _claim(store, worker, batch, lease)
            if not rows:
                break
            for row in rows:
                left = deadline_seconds - (time.monotonic() - started)
                if left <= 0:
                    report.timed_out = True
                    break
                outcome = transport.send(row["payload"], timeout=left)
                _settle(store, worker, row["id"], outcome)
                if isinstance(outcome, Delivered):
                    report.delivered += 1
                elif isinstance(outcome, Rejected):
                    report.rejected += 1
                    log.warning(
                        "planlineage: lineage event %s of %s rejected, kept aside: %s",
                        row["event_type"],
                        row["job_name"],
                        short(outcome.reason),
                    )
                else:
                    report.retry_later += 1
                    report.stopped = outcome.reason
                    break
    finally:
        _release_all(store, worker)
    report.remaining = count_pending(store)
    return report


def pending(store: Store) -> list[dict[str, Any]]:
    return store.rows(
        "SELECT id, run_id, seq, job_name, event_type, attempts, last_error, created "
        "FROM outbox WHERE status = 'pending' ORDER BY id"
    )


def rejected(store: Store) -> list[dict[str, Any]]:
    return store.rows(
        "SELECT id, run_id, seq, job_name, event_type, attempts, last_error, created "
        "FROM outbox WHERE status = 'rejected' ORDER BY id"
    )


def requeue_rejected(store: Store) -> int:
    """Put rejected rows back in line (after the cause was fixed); how many."""
    if not store.exists():
        return 0
    return store.write(
        lambda c: (
            c.execute(
                "UPDATE outbox SET status = 'pending', claimed_by = NULL, claim_until = NULL WHERE status = 'rejected'"
            ).rowcount
        )
    )


def describe(report: FlushReport) -> str:
    """One line about a flush, for the CLI."""
    parts = [f"{report.delivered} delivered"]
    if report.rejected:
        parts.append(f"{report.rejected} rejected (kept aside)")
    if report.remaining:
        parts.append(f"{report.remaining} kept for later")
    if report.stopped:
        parts.append(f"stopped: {short(report.stopped, 200)}")
    elif report.timed_out:
        parts.append("stopped: time limit")
    return "lineage events: " + ", ".join(parts)
