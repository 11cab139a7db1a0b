"""What the outbox holds, for people and for the delivery loop: counts, listings, putting back in line.

Every function here takes an optional ``backend`` (a composite transport's name; ``''`` is the
single transport and events not yet fanned out, see :mod:`.outbox_rows`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from planlineage.clock import lease_clock
from planlineage.emitter import outbox_health
from planlineage.store.sqlite import Store


def _filters(run_id: str | None, backend: str | None) -> tuple[str, tuple]:
    clauses, params = [], []
    if run_id:
        clauses.append("run_id = ?")
        params.append(run_id)
    if backend is not None:
        clauses.append("backend = ?")
        params.append(backend)
    return " AND ".join(clauses), tuple(params)


def count_pending(store: Store, backend: str | None = None) -> int:
    where, params = _filters(None, backend)
    query = "SELECT COUNT(*) FROM outbox WHERE status = 'pending'" + (f" AND {where}" if where else "")
    return store.read(lambda c: c.execute(query, params).fetchone()[0], default=0)


def count_parked(store: Store) -> int:
    return store.read(
        lambda c: c.execute("SELECT COUNT(*) FROM outbox WHERE status = 'parked'").fetchone()[0],
        default=0,
    )


def counts(store: Store) -> tuple[int, int, dict[str, int]]:
    """Pending, parked, and pending per backend, in one read (what a pass reports at its end)."""

    def read(conn) -> tuple[int, int, dict[str, int]]:
        rows = conn.execute("SELECT backend, status, COUNT(*) AS n FROM outbox GROUP BY backend, status").fetchall()
        per_backend = {r["backend"]: int(r["n"]) for r in rows if r["status"] == "pending"}
        parked_rows = sum(int(r["n"]) for r in rows if r["status"] == "parked")
        return sum(per_backend.values()), parked_rows, per_backend

    return store.read(read, default=(0, 0, {}))


def next_due(store: Store, skip: Iterable[str] = ()) -> float | None:
    """Seconds until the next waiting event is due (0 when one is due now), None if none waits;
    the rows of the backends in ``skip`` (those found unavailable) are not counted.  A backend that
    asked to be left alone counts from then on, a failing one from its next probe
    (:mod:`.outbox_health`)."""
    skipped = set(skip)
    query = (
        "SELECT backend, MIN(COALESCE(next_attempt, 0)) AS due FROM outbox WHERE status = 'pending' GROUP BY backend"
    )
    found, now = store.read(
        lambda c: ({r["backend"]: r["due"] for r in c.execute(query).fetchall()}, c.clock()),
        default=({}, None),
    )
    dues = {name: when for name, when in found.items() if name not in skipped}
    if not dues:
        return None
    health = outbox_health.all_health(store)
    times = []
    for name, when in dues.items():
        known = health.get(name)
        if known is not None and known.waiting(now):
            when = max(when, known.not_before or now)
        elif known is not None and known.failing and known.probe_at is not None:
            when = min(when, known.probe_at)
        times.append(when)
    return max(0.0, min(times) - now)


_LISTING = (
    "SELECT id, {backend}, run_id, seq, job_name, event_type, status, parked, attempts, next_attempt, last_error, "
    "created FROM outbox {where} ORDER BY run_id, seq, id"
)
BACKENDS_SINCE = 6  # the store's schema step that gave every row its backend (store/migrations.py)
HEALTH_SINCE = 7  # the step that keeps each backend's health (outbox_backends)


def listing(store: Store, run_id: str | None = None, backend: str | None = None) -> list[dict[str, Any]]:
    """Every undelivered event (of one run, at one backend), in order per run, with ``state``:
    ``due``, ``waiting`` (backing off, ``wait`` seconds left) or ``parked (<kind>)``."""
    # A store not written since the upgrade is not migrated yet (only writes migrate): its rows
    # are all of one transport.
    per_backend = store.schema_version() >= BACKENDS_SINCE
    if not per_backend and backend:
        return []
    where, params = _filters(run_id, backend if per_backend else None)
    now = store.read(lambda c: c.clock(), default=lease_clock())  # the clock leases are measured with
    query = _LISTING.format(
        backend="backend" if per_backend else "'' AS backend", where=f"WHERE {where}" if where else ""
    )
    # A backend that asked to be left alone (Retry-After) or hangs holds all its events back.
    health = outbox_health.all_health(store) if store.schema_version() >= HEALTH_SINCE else {}
    found = []
    for row in store.rows(query, params):
        known = health.get(row["backend"])
        until = max(row["next_attempt"] or 0, known.not_before or 0 if known and known.waiting(now) else 0)
        if row["status"] == "parked":
            row["state"] = f"parked ({row['parked']})"
        elif until > now:
            row["state"] = "waiting"
            row["wait"] = round(until - now, 1)
        else:
            row["state"] = "due"
        found.append(row)
    return found


def pending(store: Store) -> list[dict[str, Any]]:
    return [r for r in listing(store) if r["status"] == "pending"]


def parked(store: Store) -> list[dict[str, Any]]:
    return [r for r in listing(store) if r["status"] == "parked"]


def retry(store: Store, run_id: str | None = None, backend: str | None = None) -> int:
    """Put parked and backing-off events (of one run, at one backend) back in line, due now; how
    many.  A row whose backend is no longer configured is parked again by the next pass."""
    if not store.exists():
        return 0
    where, params = _filters(run_id, backend)
    return store.write(
        lambda c: (
            c.execute(
                "UPDATE outbox SET status = 'pending', parked = NULL, attempts = 0, first_failed = NULL, "
                "next_attempt = NULL WHERE (status = 'parked' OR next_attempt IS NOT NULL)"
                + (f" AND {where}" if where else ""),
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
