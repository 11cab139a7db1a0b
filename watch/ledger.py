"""A platform watcher's own durable state, in its own tables of planlineage's state store.

``watch_cursors(source → cursor, updated)``: how far the watcher has read, per watched platform
install (``source`` is the database address without credentials, prefixed with the platform for
every platform but StreamPark): an operation-log id, an instance id.  No row yet means "never
watched": the first poll takes a baseline instead of replaying history.  ``updated`` is when the
row was saved and a random tag: the stamp a watcher compares to keep its snapshot in memory.

``watch_jobs(source, job_key → state, job_id, run_job_id, lost_since, lost_sent)``: the snapshot
the next poll diffs against, one row per job the platform runs (a StreamPark app, a Dinky task).
``state`` is the adapter's own number for the platform's state; ``run_job_id`` says what started
the current run (``logged:<START row id>``, ``job:<new job id>`` or ``adopted:``); ``lost_since``
is the wall-clock time LOST was first seen (cleared when the job leaves LOST).

``watch_compiles(run_id → source, job_key, job_name, started)``: runs whose lineage the runner is
still compiling, so that a dropped compile is said on the watcher's stderr.

The runs themselves (run ids, lineage, last event) are the lifecycle's ``runs`` table: the
watcher never writes it directly.  These tables are step 4 of the store's migrations, renamed
from their StreamPark names by step 9 (:mod:`planlineage.store.migrations`, both backends);
:func:`_ensure` keeps a store made before step 4 working.  The SQL is the store's shared dialect,
so a PostgreSQL store holds them too.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass

from planlineage.clock import utc_now
from planlineage.store.sqlite import Store

_TABLES = """
CREATE TABLE IF NOT EXISTS watch_cursors (
    source  TEXT PRIMARY KEY,
    cursor  INTEGER NOT NULL,
    updated TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS watch_jobs (
    source     TEXT NOT NULL,
    job_key    TEXT NOT NULL,
    state      INTEGER,
    job_id     TEXT NOT NULL DEFAULT '',
    run_job_id TEXT,
    lost_since REAL,
    lost_sent  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (source, job_key)
);
CREATE TABLE IF NOT EXISTS watch_compiles (
    run_id   TEXT PRIMARY KEY,
    source   TEXT NOT NULL,
    job_key  TEXT NOT NULL,
    job_name TEXT NOT NULL,
    started  REAL NOT NULL
);
"""


@dataclass
class Snap:
    state: int | None
    job_id: str
    run_job_id: str | None = None
    lost_since: float | None = None
    lost_sent: bool = False


def _ensure(conn: sqlite3.Connection) -> None:
    for statement in _TABLES.split(";"):
        if statement.strip():
            conn.execute(statement)


def stamp(store: Store, source: str) -> str | None:
    """When the cursor and snapshot were last saved (by any node): a watcher that saved them
    itself, with this stamp, and still finds it, holds the snapshot in memory and need not read it."""

    def read(conn: sqlite3.Connection) -> str | None:
        row = conn.execute("SELECT updated FROM watch_cursors WHERE source = ?", (source,)).fetchone()
        return None if row is None else str(row["updated"])

    return store.read(read, default=None)


def load(store: Store, source: str) -> tuple[int | None, dict[str, Snap]]:
    """``(cursor, snapshot)``; the cursor is None when this install was never watched."""

    def read(conn: sqlite3.Connection) -> tuple[int | None, dict[str, Snap]]:
        row = conn.execute("SELECT cursor FROM watch_cursors WHERE source = ?", (source,)).fetchone()
        rows = conn.execute(
            "SELECT job_key, state, job_id, run_job_id, lost_since, lost_sent FROM watch_jobs WHERE source = ?",
            (source,),
        )
        snaps = {r[0]: Snap(r[1], r[2], r[3], r[4], bool(r[5])) for r in rows}  # by position: read every poll
        return (None if row is None else int(row["cursor"])), snaps

    return store.read(read, default=(None, {}))


def save(
    store: Store, source: str, cursor: int, snapshot: dict[str, Snap], before: dict[str, Snap] | None = None
) -> str:
    """Cursor and snapshot in one transaction: a crash between polls replays nothing twice; the
    :func:`stamp` written.

    ``before``: the snapshot as loaded at the start of the poll; then only the apps whose row
    differs are written and the apps gone are deleted, so a poll of an estate of thousands of apps
    where few changed writes few rows (None: the whole snapshot is rewritten)."""
    written = f"{utc_now()} {os.urandom(4).hex()}"  # unique: two nodes' saves never share a stamp
    if before is None:
        changed, gone, everything = snapshot, [], True
    else:
        changed = {key: s for key, s in snapshot.items() if before.get(key) != s}
        gone, everything = [key for key in before if key not in snapshot], False

    def write(conn: sqlite3.Connection) -> None:
        _ensure(conn)
        conn.execute(
            "INSERT INTO watch_cursors (source, cursor, updated) VALUES (?, ?, ?) "
            "ON CONFLICT (source) DO UPDATE SET cursor = excluded.cursor, updated = excluded.updated",
            (source, cursor, written),
        )
        if everything:
            conn.execute("DELETE FROM watch_jobs WHERE source = ?", (source,))
        elif gone:
            conn.executemany("DELETE FROM watch_jobs WHERE source = ? AND job_key = ?", [(source, key) for key in gone])
        if changed:
            conn.executemany(_UPSERT, [_row(source, key, s) for key, s in changed.items()])

    store.write(write)
    return written


class Kept:
    """A watcher's cursor and snapshot between its polls: read from the store only when another
    node (or an earlier process) saved them since this one did. The snapshot of an estate of
    10,000 apps is 10,000 rows; a poll where nothing changed now reads one."""

    def __init__(self, store: Store, source: str) -> None:
        self.store, self.source = store, source
        self._stamp: str | None = None
        self._cursor: int | None = None
        self._snaps: dict[str, Snap] = {}

    def load(self) -> tuple[int | None, dict[str, Snap]]:
        if self._stamp is None or stamp(self.store, self.source) != self._stamp:
            self._cursor, self._snaps = load(self.store, self.source)
        # Forgotten until this poll saves: a poll stopped half-way may have written rows already.
        self._stamp = None
        return self._cursor, self._snaps

    def save(self, cursor: int, snapshot: dict[str, Snap], before: dict[str, Snap] | None = None) -> None:
        self._stamp = save(self.store, self.source, cursor, snapshot, before)
        self._cursor, self._snaps = cursor, snapshot


_UPSERT = (
    "INSERT INTO watch_jobs (source, job_key, state, job_id, run_job_id, lost_since, lost_sent) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (source, job_key) DO UPDATE SET "
    "state = excluded.state, job_id = excluded.job_id, run_job_id = excluded.run_job_id, "
    "lost_since = excluded.lost_since, lost_sent = excluded.lost_sent"
)


def _row(source: str, key: str, s: Snap) -> tuple:
    return (source, key, s.state, s.job_id, s.run_job_id, s.lost_since, int(s.lost_sent))


def save_app(store: Store, source: str, job_key: str, snap: Snap) -> None:
    """One job's snapshot row, written as soon as a run of it is started."""

    def write(conn: sqlite3.Connection) -> None:
        _ensure(conn)
        conn.execute(_UPSERT, _row(source, job_key, snap))

    store.write(write)


def save_started(
    store: Store, source: str, job_key: str, snap: Snap, run_id: str | None, job_name: str, started: float
) -> None:
    """A started run's snapshot row and, when its compile was queued (``run_id``), its compile
    record, in one transaction."""

    def write(conn: sqlite3.Connection) -> None:
        _ensure(conn)
        conn.execute(_UPSERT, _row(source, job_key, snap))
        if run_id is not None:
            _add_compile(conn, source, run_id, job_key, job_name, started)

    store.write(write)


def add_compile(store: Store, source: str, run_id: str, job_key: str, job_name: str, started: float) -> None:
    def write(conn: sqlite3.Connection) -> None:
        _ensure(conn)
        _add_compile(conn, source, run_id, job_key, job_name, started)

    store.write(write)


def _add_compile(conn: sqlite3.Connection, source: str, run_id: str, job_key: str, job_name: str, started: float):
    conn.execute(
        "INSERT INTO watch_compiles (run_id, source, job_key, job_name, started) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id) DO UPDATE SET source = excluded.source, "
        "job_key = excluded.job_key, job_name = excluded.job_name, started = excluded.started",
        (run_id, source, job_key, job_name, started),
    )


def compiles(store: Store, source: str) -> list[dict]:
    def read(conn: sqlite3.Connection) -> list[dict]:
        return [dict(r) for r in conn.execute("SELECT * FROM watch_compiles WHERE source = ?", (source,))]

    return store.read(read, default=[])


def remove_compile(store: Store, run_id: str) -> None:
    def write(conn: sqlite3.Connection) -> None:
        _ensure(conn)
        conn.execute("DELETE FROM watch_compiles WHERE run_id = ?", (run_id,))

    store.write(write)
