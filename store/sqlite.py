"""The embedded state store: one SQLite file under ``$PLANLINEAGE_HOME``.

* Location: ``$PLANLINEAGE_HOME/state.db``, default ``platformdirs.user_data_dir("planlineage")``.
* Created only by a write (:meth:`Store.write`); a read of a store that does not exist answers
  the caller's default and creates nothing (no folder, no file).
* Safe under concurrent processes: WAL journal, a busy timeout, one short transaction per
  operation (``BEGIN IMMEDIATE`` for writes, so read-modify-write sequences are serialized).
* The file is private (0600 in a 0700 folder): it holds the lineage token.
* A corrupt or empty file never crashes a caller: it is moved aside, what it still holds is
  salvaged into a fresh file and every later command says so (:mod:`.recovery`); the operation
  then runs once more (a read answers its default instead).
* Readable on a read-only mount (falls back to an immutable read when the WAL index cannot be
  made).  Settings are not here: they have their own file (:mod:`planlineage.settings`).

Tables (created by the numbered steps of :mod:`planlineage.store.migrations`, shared with the
PostgreSQL backend; the file's ``PRAGMA user_version`` is the step reached)
------
``runs(app_id → run_id, job_name, namespace, lineage JSON, sql, platform_state, last_event,
pending JSON, created, updated)`` — the current run of each platform application.
``closing(run_id, app_id, job_name, namespace, lineage, sql, pending, abort, created, closed_at)``
— runs a resubmission replaced: their recorded transitions, then ABORT if still open.
``outbox(id, backend, run_id, seq, event_type, job_name, payload JSON, status pending|parked, parked
access|event|capped|backend, attempts, first_failed, next_attempt, last_error, created, claimed_by,
claim_until)`` with ``UNIQUE(backend, run_id, job_name, event_type)``: one row per event and
backend of a composite transport, ``''`` before it is fanned out (see
:mod:`planlineage.emitter.outbox` and :mod:`planlineage.emitter.outbox_rows`).
``compile_jobs`` and ``leaders``: leases (:mod:`planlineage.lifecycle.compile_jobs`,
:mod:`planlineage.store.leadership`), used by the shared PostgreSQL store.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from planlineage import home, lazylog
from planlineage.errors import StoreError
from planlineage.store import migrations
from planlineage.store.dialect import SQLITE, SqliteConnection

log = lazylog.getLogger(__name__)  # logging loads only when something is logged

DB_NAME = "state.db"
T = TypeVar("T")

_CORRUPT_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB


def home_dir(environ: Mapping[str, str] | None = None) -> Path:
    return home.home_dir(environ)


def _is_corruption(error: sqlite3.DatabaseError) -> bool:
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None and (code & 0xFF) in _CORRUPT_CODES:
        return True
    text = str(error).lower()
    return "file is not a database" in text or "malformed" in text


class Store:
    """The state database; every operation is one short transaction on its own connection."""

    dialect = SQLITE
    shared = False  # one node's file; PostgreSQL (planlineage.store.postgres) is shared

    def __init__(self, path: str | os.PathLike[str] | None = None, *, busy_timeout: float = 5.0):
        self.path = Path(path) if path is not None else home_dir() / DB_NAME
        self.busy_timeout = busy_timeout

    @classmethod
    def default(cls) -> Store:
        return cls()

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r})"

    @property
    def home(self) -> Path:
        return self.path.parent

    def describe(self) -> str:
        return f"SQLite {self.path}"

    def exists(self) -> bool:
        return self.path.is_file()

    # -- connections -------------------------------------------------------------------------

    def _create_file(self) -> None:
        """Create the store whole: built aside with its schema, then linked into place, so that
        no process ever sees a 0-byte store (an empty one is a truncated one: corruption)."""
        if self.path.exists():
            return
        home.make_private_dir(self.path.parent)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.{time.monotonic_ns()}.new")
        try:
            fd = os.open(temporary, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            os.close(fd)
            conn = sqlite3.connect(str(temporary), isolation_level=None)
            try:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("BEGIN IMMEDIATE")
                self._ensure_schema(conn)
                conn.execute("COMMIT")
            finally:
                conn.close()
            try:
                os.link(temporary, self.path)
            except FileExistsError:
                pass  # another process created it first: use theirs
        finally:
            for leftover in (temporary, Path(f"{temporary}-wal"), Path(f"{temporary}-shm")):
                try:
                    leftover.unlink()
                except OSError:
                    pass

    def _connect(self, write: bool) -> SqliteConnection:
        if write:
            self._create_file()
            target, uri = str(self.path), False
        else:
            target, uri = f"file:{self.path}?mode=ro", True
        try:
            conn = sqlite3.connect(
                target,
                timeout=self.busy_timeout,
                isolation_level=None,
                uri=uri,
                check_same_thread=False,
                factory=SqliteConnection,
            )
            if not write:
                conn.execute("PRAGMA schema_version").fetchone()
        except sqlite3.OperationalError as error:
            if write or "unable to open" not in str(error) and "readonly" not in str(error):
                raise
            # A read-only folder (mount) where the WAL index cannot be made: read the file as it is.
            conn = sqlite3.connect(
                f"file:{self.path}?mode=ro&immutable=1",
                isolation_level=None,
                uri=True,
                check_same_thread=False,
                factory=SqliteConnection,
            )
        try:
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            if write:
                mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
                if str(mode).lower() != "wal":
                    conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
            else:
                conn.execute("PRAGMA schema_version").fetchone()  # reads the header: NOTADB early
        except BaseException:
            conn.close()
            raise
        return conn

    @staticmethod
    def _ensure_schema(conn: sqlite3.Connection) -> None:
        """Apply the migration steps the file lacks (shared with PostgreSQL: store/migrations.py)."""
        current = conn.execute("PRAGMA user_version").fetchone()[0]
        if current == migrations.LATEST:
            return
        try:
            steps = migrations.steps_after(current, SQLITE)
        except migrations.NewerSchemaError as error:
            raise StoreError(str(error)) from None
        for version, _description, statements in steps:
            for statement in statements:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {int(version)}")

    def _quarantine(self, identity: tuple[int, int] | None, reason: str) -> None:
        """Move a corrupt file aside and salvage it, unless another process already replaced it."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return
        if identity is not None and (stat.st_dev, stat.st_ino) != identity:
            return  # someone else already moved the corrupt file aside
        from planlineage.store import recovery

        recovery.recover(self.path, reason, self.write)

    def _empty(self) -> bool:
        try:
            return self.path.stat().st_size == 0
        except OSError:
            return False

    def _identity(self) -> tuple[int, int] | None:
        try:
            stat = self.path.stat()
        except OSError:
            return None
        return (stat.st_dev, stat.st_ino)

    def _run(self, fn: Callable[[SqliteConnection], T], write: bool, default: Any) -> T:
        for attempt in (1, 2):
            if not write and not self.exists():
                return default
            identity = self._identity()
            if attempt == 1 and self._empty():
                self._quarantine(identity, "the file is empty (truncated)")
                continue
            try:
                conn = self._connect(write)
                try:
                    conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                    try:
                        if write:
                            self._ensure_schema(conn)
                        result = fn(conn)
                        conn.execute("COMMIT")
                        return result
                    except BaseException:
                        if conn.in_transaction:
                            try:
                                conn.execute("ROLLBACK")
                            except sqlite3.Error:
                                pass
                        raise
                finally:
                    conn.close()
            except sqlite3.DatabaseError as error:
                if _is_corruption(error) and attempt == 1:
                    self._quarantine(identity, f"{type(error).__name__}: {error}")
                    continue
                if not write and "no such table" in str(error):
                    return default
                raise StoreError(f"state database {self.path}: {error}") from None
            except OSError as error:
                raise StoreError(f"state database {self.path}: {error.strerror or error}") from None
        raise StoreError(f"state database {self.path} stays unusable")  # pragma: no cover

    def read(self, fn: Callable[[SqliteConnection], T], default: Any = None) -> T:
        """Run ``fn(conn)`` in a read transaction; ``default`` when there is no store."""
        return self._run(fn, write=False, default=default)

    def write(self, fn: Callable[[SqliteConnection], T], *, exclusive: bool = True) -> T:
        """Run ``fn(conn)`` in one ``BEGIN IMMEDIATE`` transaction, creating the store if needed.

        ``exclusive`` is for the PostgreSQL store's row-locked claims; SQLite's writes are always
        exclusive."""
        return self._run(fn, write=True, default=None)

    def schema_version(self) -> int:
        """The migration step the file is at (0: no file or not migrated yet)."""
        return self.read(lambda c: c.execute("PRAGMA user_version").fetchone()[0], default=0)

    def migrate(self) -> tuple[int, int]:
        """Apply the missing migration steps (creating the file); ``(before, after)``."""
        before = self.schema_version()
        self.write(lambda c: None)
        return before, migrations.LATEST

    # -- small conveniences ----------------------------------------------------------------

    def rows(self, sql: str, params: tuple = ()) -> list[dict[str, Any]]:
        """A read-only query as dicts (for diagnostics and tests); [] without a store."""
        return self.read(lambda c: [dict(r) for r in c.execute(sql, params)], default=[])

    def journal_mode(self) -> str | None:
        return self.read(lambda c: c.execute("PRAGMA journal_mode").fetchone()[0])
