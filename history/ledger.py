"""Which past runs were sent, and the run id a past run gets: shared by the replay and the live
watchers, so that no run is ever sent twice.

``history_runs(run_key → run_id, app_id, started_at, how, recorded)``: one row per run a platform
recorded that planlineage has reported, whoever reported it: the replay (``how = 'replay'``) or a
live watcher that started or adopted the run (``how = 'watch'``).  A replay skips every key in it;
a live watcher that meets a replayed run continues it instead of opening another.

The run id of a past run is a UUIDv7 (time-ordered, as OpenLineage recommends) whose time bits are
the run's start (milliseconds) and whose other bits come from SHA-256 of its ``run_key``: the same
run always gets the same id, on any node, in any process.

Standard library only (the watcher imports it on every poll).  The table is step 5 of the store's
migrations (:mod:`planlineage.store.migrations`); :func:`_ensure` keeps an older store working.
"""

from __future__ import annotations

import hashlib
import sqlite3
from datetime import UTC, datetime

from planlineage.clock import format_time, utc_now
from planlineage.emitter.run_ids import uuid7
from planlineage.store.migrations import HISTORY_RUNS
from planlineage.store.sqlite import Store


def run_id_for(run_key: str, started_at: datetime) -> str:
    """The UUIDv7 of a past run: ``started_at``'s milliseconds, then bits of SHA-256(run_key)."""
    if started_at.tzinfo is None:
        started_at = started_at.replace(tzinfo=UTC)
    millis = int(started_at.timestamp() * 1000)
    return uuid7(millis, int.from_bytes(hashlib.sha256(run_key.encode("utf-8")).digest()[:10], "big"))


def _ensure(conn: sqlite3.Connection) -> None:
    conn.execute(HISTORY_RUNS)


def known(store: Store) -> dict[str, str]:
    """Every recorded ``run_key`` with its run id."""

    def read(conn: sqlite3.Connection) -> dict[str, str]:
        _ensure(conn)
        return {r["run_key"]: r["run_id"] for r in conn.execute("SELECT run_key, run_id FROM history_runs")}

    return store.write(read)


def lookup(store: Store, run_key: str) -> str | None:
    """The run id recorded for ``run_key``, or None."""

    def read(conn: sqlite3.Connection) -> str | None:
        _ensure(conn)
        row = conn.execute("SELECT run_id FROM history_runs WHERE run_key = ?", (run_key,)).fetchone()
        return None if row is None else str(row["run_id"])

    return store.write(read)


def lookup_many(store: Store, run_keys: list[str]) -> dict[str, str]:
    """:func:`lookup` of many keys in one read (a poll that starts hundreds of runs); the keys
    recorded, with their run ids."""
    keys = sorted(set(run_keys))

    def read(conn: sqlite3.Connection) -> dict[str, str]:
        found: dict[str, str] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            marks = ", ".join(["?"] * len(chunk))
            rows = conn.execute(f"SELECT run_key, run_id FROM history_runs WHERE run_key IN ({marks})", chunk)
            found.update({str(r["run_key"]): str(r["run_id"]) for r in rows})
        return found

    return store.read(read, default={}) if keys else {}


def mark_in(conn: sqlite3.Connection, run_key: str, run_id: str, app_id: str, started_at: datetime, how: str) -> bool:
    """Record ``run_key`` inside the caller's transaction; False when it was recorded already."""
    _ensure(conn)
    cursor = conn.execute(
        "INSERT INTO history_runs (run_key, run_id, app_id, started_at, how, recorded) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (run_key) DO NOTHING",
        (run_key, run_id, app_id, format_time(started_at), how, utc_now()),
    )
    return cursor.rowcount == 1


def mark(store: Store, run_key: str, run_id: str, app_id: str, started_at: datetime, how: str) -> bool:
    return store.write(lambda conn: mark_in(conn, run_key, run_id, app_id, started_at, how))
