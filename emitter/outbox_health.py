"""What the outbox knows of a backend as a whole, apart from its events (table ``outbox_backends``).

An event's own backoff (:mod:`.outbox_rows`) answers "this event was refused"; three things are
about the backend instead, and are kept here, one row per backend that has something to say:

* **It asked to be left alone** (429 or 503 with ``Retry-After``): nothing is sent to it before
  ``not_before``; the other backends of a composite go on.
* **It hangs** (the request went out, no answer came in time): it is unhealthy, not the event, so
  the whole backend waits, 15 × ``lineage.retry-backoff`` (30 s by default) doubling per timeout
  in a row up to 10 minutes, instead of resending the same event every few seconds.  Each resend
  is a possible repeat for the receiver (byte for byte the same event).
* **It fails** (``failing_since``): while its events back off, one of them is sent ahead of its
  time every :meth:`RetryPolicy.probe_every` seconds (a probe).  When a probe (or any event) is
  delivered, the backend is back: every waiting event of it is due again at once, instead of
  waiting out the long backoff it grew during the outage.  A probe that fails counts nothing
  against its event.

The row goes once the backend takes an event.
"""

from __future__ import annotations

from dataclasses import dataclass

from planlineage.emitter.outbox_rows import MAX_BACKOFF_SECONDS, RetryPolicy
from planlineage.store.sqlite import Store

#: The longest ``Retry-After`` honoured: a backend's wish never keeps events longer than the
#: longest backoff of an event.
MAX_RETRY_AFTER_SECONDS = MAX_BACKOFF_SECONDS


@dataclass(frozen=True)
class Health:
    not_before: float | None = None
    failing_since: float | None = None
    probe_at: float | None = None
    timeouts: int = 0
    reason: str | None = None

    @property
    def failing(self) -> bool:
        return self.failing_since is not None or self.timeouts > 0

    def waiting(self, now: float) -> bool:
        return self.not_before is not None and self.not_before > now

    def probe_due(self, now: float) -> bool:
        return self.failing and not self.waiting(now) and (self.probe_at is None or self.probe_at <= now)


_COLUMNS = "backend, not_before, failing_since, probe_at, timeouts, reason"


def _health(row) -> Health:
    return Health(row["not_before"], row["failing_since"], row["probe_at"], int(row["timeouts"] or 0), row["reason"])


def from_rows(rows: list[dict]) -> dict[str, Health]:
    """The health of each backend in rows of ``outbox_backends`` (as :func:`~.outbox_rows.prepare` reads them)."""
    return {r["backend"]: _health(r) for r in rows}


def all_health(store: Store) -> dict[str, Health]:
    def get(conn) -> dict[str, Health]:
        return {r["backend"]: _health(r) for r in conn.execute(f"SELECT {_COLUMNS} FROM outbox_backends")}

    return store.read(get, default={})


_UPSERT = (
    "INSERT INTO outbox_backends (backend, not_before, failing_since, probe_at, timeouts, reason) "
    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (backend) DO UPDATE SET not_before = excluded.not_before, "
    "failing_since = COALESCE(outbox_backends.failing_since, excluded.failing_since), "
    "probe_at = excluded.probe_at, timeouts = excluded.timeouts, reason = excluded.reason"
)


def record_failure(
    store: Store,
    backend: str,
    reason: str,
    policy: RetryPolicy,
    *,
    retry_after: float | None = None,
    timed_out: bool = False,
) -> float | None:
    """The backend failed a send: it fails since now (unless earlier); with ``retry_after`` or a
    timeout it is left alone for a while.  The seconds it is left alone, if it is."""

    def apply(conn) -> float | None:
        now = conn.clock()
        row = conn.execute("SELECT timeouts FROM outbox_backends WHERE backend = ?", (backend,)).fetchone()
        timeouts = int(row["timeouts"]) + 1 if timed_out and row is not None else (1 if timed_out else 0)
        wait = None
        if timed_out:
            wait = policy.timeout_delay(timeouts)
        if retry_after is not None:
            wait = max(wait or 0.0, min(retry_after, MAX_RETRY_AFTER_SECONDS))
        not_before = now + wait if wait else None
        probe_at = max(not_before or now, now + policy.probe_every())
        conn.execute(_UPSERT, (backend, not_before, now, probe_at, timeouts, reason))
        return wait

    return store.write(apply, exclusive=False)


def record_probe_failed(store: Store, backend: str, policy: RetryPolicy) -> None:
    store.write(
        lambda c: c.execute(
            "UPDATE outbox_backends SET probe_at = ? WHERE backend = ?", (c.clock() + policy.probe_every(), backend)
        ),
        exclusive=False,
    )


def record_recovered(store: Store, backend: str, *, due_again: bool = True) -> int:
    """The backend took an event: forget its failure and (``due_again``) make its waiting events
    due now (their attempts stay counted); how many were made due."""

    def apply(conn) -> int:
        conn.execute("DELETE FROM outbox_backends WHERE backend = ?", (backend,))
        if not due_again:
            return 0
        return conn.execute(
            "UPDATE outbox SET next_attempt = NULL WHERE backend = ? AND status = 'pending' "
            "AND next_attempt IS NOT NULL",
            (backend,),
        ).rowcount

    return store.write(apply, exclusive=False)
