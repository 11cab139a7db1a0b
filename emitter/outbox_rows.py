"""The outbox's rows: claimed, settled, fanned out to the backends (:mod:`.outbox` drives them).

Backends
--------
A row's ``backend`` names the transport of a composite it goes to (its delivery cursor: the
rows still there are what that backend has not taken); ``''`` is an event as it was queued, for
whatever transport is configured.  With one transport, ``''`` rows are that transport's rows (so
a store from before backends delivers as it did).  With a composite, a pass first fans every
free ``''`` row out into one row per configured backend (:func:`prepare`): from then on each
backend claims, backs off, parks and removes only its own rows, so a backend that is down
neither holds up nor duplicates the others.  Rows of a backend that is no longer configured are
parked (``backend``) with a reason saying so, never dropped, and go back in line once a backend
of that name is configured again.

Claims
------
A pass takes a small batch of one backend's rows in one transaction by writing its own
``claimed_by`` (``node:pid:random``) and a lease end (``claim_until``, on the database's clock)
on them: on SQLite inside ``BEGIN IMMEDIATE``, on PostgreSQL with ``SELECT … FOR UPDATE SKIP
LOCKED`` (nodes take disjoint rows without waiting).  Another process only takes rows whose lease
is absent or expired, and never a row of a run whose earlier row (at the same backend) another
still leases: no ``(backend, runId, job, eventType)`` sent twice, no run's later event before its
earlier one at a backend.  The lease outlives the pass's deadline: only a process that died
mid-send (or mid-batch: delivered rows are removed a batch at a time, with the next claim) lets
another resend its rows (at-least-once, never lost).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from planlineage.emitter.transports.base import Delivered, Rejected, RetryLater
from planlineage.store.sqlite import Store

if TYPE_CHECKING:
    from planlineage.config import Limits

DEFAULT_BATCH = 50  # rows per claim: a pass costs a few store transactions per batch
LEASE_MARGIN_SECONDS = 30.0
MAX_BACKOFF_SECONDS = 600.0
#: Answers that say the server as a whole cannot take events now: stop the pass, count nothing.
UNAVAILABLE_STATUSES = frozenset({429, 503})
#: Refusals of the event itself: parked, the run's later events go on.
EVENT_REFUSALS = frozenset({400, 413, 422})
JITTER = 0.25  # a backoff is cut by up to this share, at random
TIMEOUT_FACTOR = 15.0  # a backend that hangs waits this many backoffs (see outbox_health)
MAX_PROBE_SECONDS = 60.0
_CHUNK = 400  # ids per statement: far below both databases' limits on parameters


@dataclass(frozen=True)
class RetryPolicy:
    """How long one refused event is retried before it is parked (at each backend on its own)."""

    backoff: float = 2.0  # seconds before the 2nd attempt; doubles per attempt
    max_attempts: int = 10
    max_age: float = 24 * 3600.0  # seconds since the first failure

    def delay(self, attempts: int) -> float:
        """The longest wait before attempt ``attempts + 1`` (the wait given is :meth:`jittered`)."""
        return min(self.backoff * (2 ** max(attempts - 1, 0)), MAX_BACKOFF_SECONDS)

    def jittered(self, attempts: int) -> float:
        """:meth:`delay` less up to a quarter, at random: events refused together (an outage) do
        not all come back in the same instant."""
        return self.delay(attempts) * (1.0 - JITTER * random.random())

    def timeout_delay(self, timeouts: int) -> float:
        """How long a backend that did not answer ``timeouts`` times in a row is left alone: it
        hangs, so it is given far longer than a refused event (15 × the backoff, doubling)."""
        return min(self.backoff * TIMEOUT_FACTOR * (2 ** max(timeouts - 1, 0)), MAX_BACKOFF_SECONDS)

    def probe_every(self) -> float:
        """How often a failing backend is probed with one of its waiting events (30 s by default)."""
        return min(self.backoff * TIMEOUT_FACTOR, MAX_PROBE_SECONDS)

    @classmethod
    def from_limits(cls, limits: Limits) -> RetryPolicy:
        """From the ``lineage.retry-*`` settings (:class:`planlineage.config.Limits`)."""
        return cls(backoff=limits.retry_backoff, max_attempts=limits.retry_attempts, max_age=limits.retry_max_age)


def _marks(values: Sequence[Any]) -> str:
    return ",".join("?" * len(values))


def _free(alias: str = "") -> str:
    return f"({alias}claim_until IS NULL OR {alias}claim_until < :now)"


def prepare(store: Store, names: Sequence[str]) -> tuple[list[dict[str, Any]], float]:
    """Before a pass to the backends ``names`` (``['']``: one transport): fan the queued events
    out to them, put back in line what waited for one of them, park the rows of backends no
    longer configured.  Leased rows are left to their holder (a node with older settings).
    The rows of ``outbox_backends`` (:mod:`.outbox_health`) and the store's clock."""
    named = [n for n in names if n]
    composite = 1 if named else 0
    known = list(names) or [""]
    params = {"now": 0.0, "composite": composite}
    keys = {f"b{i}": name for i, name in enumerate(known)}
    inside = ",".join(f":{k}" for k in keys)
    work = (
        f"SELECT 1 FROM outbox WHERE (:composite = 1 AND backend = '') "
        f"OR (status = 'pending' AND backend != '' AND backend NOT IN ({inside})) "
        f"OR (status = 'parked' AND parked = 'backend' AND backend IN ({inside})) LIMIT 1"
    )

    def run(conn) -> tuple[list[dict[str, Any]], float]:
        # What the pass needs to know of the backends as a whole, read in this same transaction.
        now = conn.clock()
        backends = [dict(r) for r in conn.execute("SELECT * FROM outbox_backends").fetchall()]
        # Nearly every pass finds nothing to prepare: one cheap look (this write also migrates a
        # store from before backends, as a pass's first write always has).
        if conn.execute(work, {**params, **keys}).fetchone() is None:
            return backends, now
        bound = {"now": now, **keys}
        if named:
            queued = conn.execute(
                f"SELECT id FROM outbox WHERE backend = '' AND {_free()} ORDER BY id" + conn.skip_locked, bound
            )
            ids = [r["id"] for r in queued.fetchall()]
            for start in range(0, len(ids), _CHUNK):
                chunk = ids[start : start + _CHUNK]
                for name in named:
                    conn.execute(
                        "INSERT INTO outbox (backend, run_id, seq, event_type, job_name, payload, created) "
                        f"SELECT ?, run_id, seq, event_type, job_name, payload, created FROM outbox "
                        f"WHERE id IN ({_marks(chunk)}) ORDER BY id "  # new ids in queue order: claims go by id
                        "ON CONFLICT (backend, run_id, job_name, event_type) DO NOTHING",
                        (name, *chunk),
                    )
                conn.execute(f"DELETE FROM outbox WHERE id IN ({_marks(chunk)})", tuple(chunk))
        conn.execute(
            "UPDATE outbox SET status = 'pending', parked = NULL, last_error = NULL, next_attempt = NULL "
            f"WHERE status = 'parked' AND parked = 'backend' AND backend IN ({inside})",
            keys,
        )
        conn.execute(
            "UPDATE outbox SET status = 'parked', parked = 'backend', next_attempt = NULL, last_error = "
            "'no transport named ' || backend || ' is configured now (lineage.transport): kept, and sent "
            "once one of that name is configured again' "
            f"WHERE status = 'pending' AND backend != '' AND backend NOT IN ({inside}) AND {_free()}",
            bound,
        )
        return backends, now

    # Not exclusive: the rows it moves are locked one by one (queued rows with SKIP LOCKED, as a
    # claim locks them), so nodes preparing and claiming at once neither wait nor take a row twice.
    return store.write(run, exclusive=False)


# A row may go when it is due and free, and nothing earlier in its run at its backend still has to
# go first: an earlier row that waits for its backoff, is leased by another process, or is parked
# for a reason that also concerns the rows after it; nor an earlier event not fanned out yet (a
# '' row a node with older settings held while the later ones were fanned out).
_CLAIMABLE = f"""
    SELECT o.id, o.backend, o.run_id, o.seq, o.job_name, o.event_type, o.payload, o.attempts, o.first_failed
    FROM outbox o
    WHERE o.backend = :backend AND o.status = 'pending'
      AND (o.next_attempt IS NULL OR o.next_attempt <= :now)
      AND {_free("o.")}
      AND NOT EXISTS (
        SELECT 1 FROM outbox p
        WHERE p.run_id = o.run_id AND p.seq < o.seq AND p.backend IN (o.backend, '')
          AND ((p.status = 'parked' AND p.parked != 'event')
               OR (p.status = 'pending'
                   AND (p.backend != o.backend
                        OR (p.next_attempt IS NOT NULL AND p.next_attempt > :now)
                        OR (p.claim_until IS NOT NULL AND p.claim_until >= :now))))
      )
    ORDER BY o.id
    LIMIT :batch
"""


def _run_prefixes(conn, backend: str, rows: list) -> list:
    """The rows that are, per run, the run's next rows to go in order at ``backend``, in the order
    to send them.

    On PostgreSQL another node may hold an earlier row of a run locked but not yet marked as
    claimed (``SKIP LOCKED`` hides it from this claim, the ``NOT EXISTS`` above still sees it
    free): a later row of that run must not be taken then.  On SQLite this never removes a row.
    """
    if not rows:
        return rows
    wanted = {r["id"] for r in rows}
    runs = sorted({r["run_id"] for r in rows})
    order = conn.execute(
        f"SELECT id, run_id FROM outbox WHERE backend IN (?, '') AND run_id IN ({_marks(runs)}) "
        "AND (status = 'pending' OR (status = 'parked' AND parked != 'event')) ORDER BY run_id, seq, id",
        (backend, *runs),
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
    taken = [r for r in rows if r["id"] in allowed]
    # Sent in this order: runs by their oldest row, each run by seq (a row fanned out late, once
    # another node let go of it, has a higher id than the run's later rows).
    oldest: dict[str, int] = {}
    for row in taken:
        oldest.setdefault(row["run_id"], row["id"])
    return sorted(taken, key=lambda r: (oldest[r["run_id"]], r["seq"]))


def claim(
    store: Store, backend: str, holder: str, batch: int, lease_seconds: float, delivered: list[int] | None = None
) -> list[dict[str, Any]]:
    """Take the next batch of ``backend``'s rows, removing the previous batch's ``delivered`` rows
    (still leased by us)."""

    def take(conn) -> list[dict[str, Any]]:
        remove_delivered(conn, holder, delivered)
        now = conn.clock()
        params = {"now": now, "batch": batch, "backend": backend}
        rows = _run_prefixes(conn, backend, conn.execute(_CLAIMABLE + conn.skip_locked, params).fetchall())
        ids = [r["id"] for r in rows]
        if ids:
            conn.execute(
                f"UPDATE outbox SET claimed_by = ?, claim_until = ? WHERE id IN ({_marks(ids)})",
                (holder, now + lease_seconds, *ids),
            )
        return [dict(r) for r in rows]

    return store.write(take, exclusive=False)


# A failing backend's probe: of its runs' next rows (nothing earlier in the run to go first), the one
# due soonest, taken ahead of its time.
_PROBE = f"""
    SELECT o.id, o.backend, o.run_id, o.seq, o.job_name, o.event_type, o.payload, o.attempts, o.first_failed
    FROM outbox o
    WHERE o.backend = :backend AND o.status = 'pending' AND o.next_attempt IS NOT NULL AND {_free("o.")}
      AND NOT EXISTS (
        SELECT 1 FROM outbox p
        WHERE p.run_id = o.run_id AND p.seq < o.seq AND p.backend IN (o.backend, '')
          AND (p.status = 'pending' OR p.parked != 'event')
      )
    ORDER BY o.next_attempt, o.id
    LIMIT 1
"""


def claim_probe(store: Store, backend: str, holder: str, lease_seconds: float) -> dict[str, Any] | None:
    """Take one waiting row of ``backend`` ahead of its time, to see whether the backend is back."""

    def take(conn) -> dict[str, Any] | None:
        now = conn.clock()
        row = conn.execute(_PROBE + conn.skip_locked, {"now": now, "backend": backend}).fetchone()
        if row is None:
            return None
        conn.execute(
            "UPDATE outbox SET claimed_by = ?, claim_until = ? WHERE id = ?", (holder, now + lease_seconds, row["id"])
        )
        return dict(row)

    return store.write(take, exclusive=False)


def release_one(store: Store, holder: str, row_id: int) -> None:
    store.write(
        lambda c: c.execute(
            "UPDATE outbox SET claimed_by = NULL, claim_until = NULL WHERE id = ? AND claimed_by = ?", (row_id, holder)
        ),
        exclusive=False,
    )


def remove_delivered(conn, holder: str, delivered: list[int] | None) -> None:
    """Delete the rows this pass delivered (one statement for a whole batch)."""
    if delivered:
        conn.execute(f"DELETE FROM outbox WHERE claimed_by = ? AND id IN ({_marks(delivered)})", (holder, *delivered))
        delivered.clear()


def release_all(store: Store, holder: str, delivered: list[int] | None = None) -> None:
    def release(conn) -> None:
        remove_delivered(conn, holder, delivered)
        conn.execute("UPDATE outbox SET claimed_by = NULL, claim_until = NULL WHERE claimed_by = ?", (holder,))

    store.write(release, exclusive=False)


def verdict(outcome: Any) -> str:
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


def settle(store: Store, holder: str, row: dict[str, Any], verdict: str, reason: str, policy: RetryPolicy) -> str:
    """Record what became of one claimed row not delivered; the verdict as applied (``backoff`` may park)."""

    def apply(conn) -> str:
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
            (attempts, first, now + policy.jittered(attempts), reason, *key),
        )
        return verdict

    return store.write(apply, exclusive=False)
