"""What happens to a corrupt state database: moved aside, what can be read is salvaged, and every
later command says so until the user removed the copy.

A state file counts as corrupt when SQLite says so (``SQLITE_CORRUPT``/``SQLITE_NOTADB``) or when
it is empty: planlineage never leaves a 0-byte store behind (a new store is built aside and
linked into place whole, see :meth:`Store._create_file`), so an empty one was truncated and
its events are gone — which must be said, not silently started afresh.

Salvage reads the moved copy (with its ``-wal``) read-only, table by table and, where a table
cannot be read whole, row by row, and copies the runs and undelivered events it can still read
into the new store; settings of a version-1 store go to the settings file if there is none.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from planlineage import home, lazylog

log = lazylog.getLogger(__name__)  # logging loads only when something is logged

#: Salvage stops reading row by row after this many seconds: a command's bound comes first.
SALVAGE_SECONDS = 1.5
_RUN_COLUMNS = [
    "app_id",
    "run_id",
    "job_name",
    "namespace",
    "lineage",
    "sql",
    "platform_state",
    "last_event",
    "pending",
    "created",
    "updated",
]
_OUTBOX_COLUMNS = ["id", "run_id", "seq", "event_type", "job_name", "payload", "attempts", "last_error", "created"]


def move_aside(path: Path) -> Path | None:
    """Rename the store and its ``-wal``/``-shm`` to ``<name>.corrupt-<time>``; the new path."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    moved = None
    for suffix in ("", "-wal", "-shm"):
        source = Path(f"{path}{suffix}")
        target = Path(f"{path}.corrupt-{stamp}{suffix}")
        try:
            source.rename(target)
        except OSError:
            continue
        if suffix == "":
            moved = target
    return moved


def _rows(conn: sqlite3.Connection, table: str, deadline: float) -> list[dict[str, Any]]:
    try:
        return [dict(r) for r in conn.execute(f"SELECT * FROM {table}")]
    except sqlite3.DatabaseError:
        pass
    found: list[dict[str, Any]] = []
    try:
        top = conn.execute(f"SELECT MAX(rowid) FROM {table}").fetchone()[0] or 0
    except sqlite3.DatabaseError:
        top = 10_000
    for rowid in range(1, top + 1):
        if time.monotonic() > deadline:
            break
        try:
            row = conn.execute(f"SELECT * FROM {table} WHERE rowid = ?", (rowid,)).fetchone()
        except sqlite3.DatabaseError:
            continue
        if row is not None:
            found.append(dict(row))
    return found


def read_salvage(moved: Path) -> dict[str, list[dict[str, Any]]]:
    """The runs, outbox rows and settings still readable in a moved-aside store."""
    found: dict[str, list[dict[str, Any]]] = {"runs": [], "outbox": [], "settings": []}
    deadline = time.monotonic() + SALVAGE_SECONDS
    try:
        conn = sqlite3.connect(f"file:{moved}?mode=ro", uri=True, timeout=0.5)
    except sqlite3.Error:
        return found
    try:
        conn.row_factory = sqlite3.Row
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.DatabaseError:
            tables = set(found)  # the catalogue itself is damaged: try each table anyway
        for table in found:
            if table in tables:
                try:
                    found[table] = _rows(conn, table, deadline)
                except sqlite3.DatabaseError:
                    continue
    finally:
        conn.close()
    return found


def copy_into(conn: sqlite3.Connection, salvaged: dict[str, list[dict[str, Any]]]) -> tuple[int, int]:
    """Insert salvaged runs and events into a fresh store (inside the caller's transaction)."""
    runs = events = 0
    for row in salvaged["runs"]:
        if all(row.get(c) is not None for c in ("app_id", "run_id", "job_name", "namespace", "created")):
            values = [row.get(c) for c in _RUN_COLUMNS]
            values[8] = values[8] or "[]"
            values[10] = values[10] or values[9]
            marks = ",".join("?" * len(_RUN_COLUMNS))
            cursor = conn.execute(f"INSERT OR IGNORE INTO runs ({','.join(_RUN_COLUMNS)}) VALUES ({marks})", values)
            runs += cursor.rowcount
    for row in salvaged["outbox"]:
        if not all(row.get(c) is not None for c in ("run_id", "seq", "event_type", "job_name", "payload", "created")):
            continue
        parked = row.get("parked") or ("access" if row.get("status") == "rejected" else None)
        if row.get("status") == "parked" and parked is None:
            parked = "capped"
        values = [row.get(c) for c in _OUTBOX_COLUMNS] + ["parked" if parked else "pending", parked]
        values[6] = values[6] or 0
        values.append(row.get("backend") or "")  # a store from before backends: the queued event
        columns = [*_OUTBOX_COLUMNS, "status", "parked", "backend"]
        marks = ",".join("?" * len(columns))
        cursor = conn.execute(f"INSERT OR IGNORE INTO outbox ({','.join(columns)}) VALUES ({marks})", values)
        events += cursor.rowcount
    return runs, events


def recover(path: Path, reason: str, write_fresh: Callable[[Callable[[sqlite3.Connection], Any]], Any]) -> Path | None:
    """Move a corrupt store aside, salvage what it still holds into a fresh one (built with
    ``write_fresh``), log one line and leave a notice for every later command; the moved path."""
    moved = move_aside(path)
    if moved is None:
        return None
    salvaged = read_salvage(moved)
    counts = (0, 0)
    if salvaged["runs"] or salvaged["outbox"]:
        try:
            counts = write_fresh(lambda conn: copy_into(conn, salvaged))
        except Exception as error:  # salvage is a bonus: the fresh store must work without it
            log.warning("planlineage: nothing could be salvaged from %s: %s", moved.name, type(error).__name__)
    settings_note = _salvage_settings(path.parent, salvaged["settings"])
    message = (
        f"the state database {path} was unusable ({reason}) and was moved aside as {moved.name}; "
        f"{counts[0]} run(s) and {counts[1]} undelivered event(s) were salvaged into a fresh one{settings_note}. "
        f"Delete {moved.name} once you no longer need it to silence this message."
    )
    log.warning("planlineage: %s", message)
    home.mark_said(message)
    home.add_notice(message, moved, path.parent)
    return moved


def _salvage_settings(folder: Path, rows: list[dict[str, Any]]) -> str:
    if not rows:
        return ""
    from planlineage.known_settings import SETTINGS, SETTINGS_FILE

    target = folder / SETTINGS_FILE
    if target.exists():
        return ""
    values = {str(r["key"]): str(r["value"]) for r in rows if r.get("key") in SETTINGS and r.get("value") is not None}
    if not values:
        return ""
    try:
        home.write_private_json(target, {"version": 1, "settings": values})
    except OSError:
        return ""
    return f", and {len(values)} setting(s) into {SETTINGS_FILE}"
