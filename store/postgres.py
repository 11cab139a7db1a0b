"""The PostgreSQL state store: the same operations as the SQLite file, shared by every node.

* Tables live in a schema of their own (``planlineage``, or ``?schema=`` of the store URL); each
  connection's ``search_path`` is that schema alone, so the shared SQL never names it and never
  touches the platform's tables.
* ``write(fn)`` runs ``fn`` in one transaction that first takes a transaction-level advisory lock
  of the store: the lifecycle's read-modify-write steps (next sequence number, a run's last event)
  are serialized exactly as SQLite's ``BEGIN IMMEDIATE`` serializes them, whichever node they run on.
  ``write(fn, exclusive=False)`` skips it: for lease claims, which lock only the rows they take
  (``FOR UPDATE SKIP LOCKED``), so nodes claiming at once take disjoint rows without waiting.
* Migrations run on the first write of a process (or ``planlineage store migrate``); a read of a
  store not yet migrated answers the caller's default, as a read of a missing SQLite file does.
* Bounded: connecting gives up after ``connect_timeout`` (3 s), a statement after 10 s, a lock
  wait after 5 s; every failure is a :class:`StoreError` of one line with the password masked.
  A connection broken by a server restart is replaced once, transparently, when the failure came
  before the operation's own statements ran.

psycopg 3 is imported here only (the ``postgres`` extra); the core never needs it.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from planlineage.clock import utc_now
from planlineage.errors import StoreError
from planlineage.store import migrations
from planlineage.store.dialect import POSTGRESQL, row_factory, to_pyformat
from planlineage.store.node import node_name
from planlineage.store.sqlite import home_dir
from planlineage.store.url import StoreUrl, parse

T = TypeVar("T")
LOCK_CLASS = 0x504C  # "PL": the advisory-lock namespace of planlineage
CONNECT_TIMEOUT = 3
STATEMENT_TIMEOUT_MS = 10_000
LOCK_TIMEOUT_MS = 5_000


def _psycopg():
    try:
        import psycopg
    except ImportError:
        raise StoreError(
            "the store URL selects PostgreSQL but psycopg is not installed: pip install 'planlineage[postgres]'"
        ) from None
    return psycopg


def _signed32(value: int) -> int:
    return value - (1 << 32) if value >= (1 << 31) else value


class PgConnection:
    """A psycopg connection with the surface the shared SQL uses (see :mod:`~planlineage.store.dialect`)."""

    dialect = POSTGRESQL
    skip_locked = " FOR UPDATE SKIP LOCKED"

    def __init__(self, raw):
        self.raw = raw

    def execute(self, sql: str, params: Any = ()):
        if params:
            return self.raw.execute(to_pyformat(sql), params)
        return self.raw.execute(sql)

    def executemany(self, sql: str, rows) -> None:
        with self.raw.cursor() as cursor:
            cursor.executemany(to_pyformat(sql), list(rows))

    def clock(self) -> float:
        return float(self.raw.execute("SELECT EXTRACT(EPOCH FROM clock_timestamp())::float8").fetchone()[0])


class PostgresStore:
    """The state store on PostgreSQL; every operation is one short transaction."""

    dialect = POSTGRESQL
    shared = True

    def __init__(self, url: StoreUrl | str, home: Path | None = None, *, connect_timeout: float | None = None):
        self.url = parse(url) if isinstance(url, str) else url
        self.schema = self.url.schema
        self.home = Path(home) if home is not None else home_dir()
        self.path = self.home / "state.db"  # never created: the node's home, for jobs and logs
        # libpq counts whole seconds and treats less than 2 as 2
        self.connect_timeout = (
            CONNECT_TIMEOUT if connect_timeout is None else max(2, min(CONNECT_TIMEOUT, int(connect_timeout)))
        )
        self._local = threading.local()
        self._migrated = False
        self._lock_key = _signed32(zlib.crc32(f"planlineage:{self.schema}".encode()))

    def __repr__(self) -> str:
        return f"PostgresStore({self.url.masked!r})"

    def describe(self) -> str:
        return f"PostgreSQL {self.url.masked} (schema {self.schema})"

    def exists(self) -> bool:
        return True  # configured: reads of a store not yet migrated answer their defaults

    # -- connections -------------------------------------------------------------------------

    def _error(self, error: BaseException, what: str = "") -> StoreError:
        text = " ".join(str(error).split()) or type(error).__name__
        password = None
        try:
            from urllib.parse import unquote, urlsplit

            password = unquote(urlsplit(self.url.raw).password or "")
        except ValueError:
            pass
        if password:
            text = text.replace(password, "***")
        return StoreError(f"state store {self.url.masked}{what}: {text[:300]}")

    def _connect(self):
        psycopg = _psycopg()
        try:
            raw = psycopg.connect(
                self.url.conninfo,
                autocommit=True,
                connect_timeout=self.connect_timeout,
                application_name="planlineage",
                row_factory=row_factory,
            )
        except psycopg.Error as error:
            raise self._error(error, " (cannot connect)") from None
        try:
            raw.execute(
                f'SET search_path TO "{self.schema}"; SET statement_timeout = {STATEMENT_TIMEOUT_MS}; '
                f"SET lock_timeout = {LOCK_TIMEOUT_MS}; SET idle_in_transaction_session_timeout = 60000"
            )
        except psycopg.Error as error:
            raw.close()
            raise self._error(error) from None
        return PgConnection(raw)

    def _connection(self) -> tuple[PgConnection, bool]:
        conn = getattr(self._local, "conn", None)
        if conn is not None and not conn.raw.closed and not conn.raw.broken:
            return conn, True
        conn = self._connect()
        self._local.conn = conn
        return conn, False

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            conn.raw.close()

    def _run(self, fn: Callable[[PgConnection], T], *, write: bool, exclusive: bool, default: Any) -> T:
        psycopg = _psycopg()
        if write and not self._migrated:
            self.migrate()
        for attempt in (1, 2):
            conn, reused = self._connection()
            started = False
            try:
                with conn.raw.transaction():
                    if write and exclusive:
                        conn.execute("SELECT pg_advisory_xact_lock(?, ?)", (LOCK_CLASS, self._lock_key))
                    started = True
                    return fn(conn)
            except (psycopg.errors.UndefinedTable, psycopg.errors.InvalidSchemaName) as error:
                if not write:
                    return default
                raise self._error(error) from None
            except psycopg.OperationalError as error:
                self.close()
                if attempt == 1 and reused and not started:
                    continue  # the cached connection died (server restart): once more, fresh
                raise self._error(error) from None
            except psycopg.Error as error:
                raise self._error(error) from None
        raise StoreError(f"state store {self.url.masked} stays unusable")  # pragma: no cover

    def read(self, fn: Callable[[PgConnection], T], default: Any = None) -> T:
        return self._run(fn, write=False, exclusive=False, default=default)

    def write(self, fn: Callable[[PgConnection], T], *, exclusive: bool = True) -> T:
        return self._run(fn, write=True, exclusive=exclusive, default=None)

    def rows(self, sql: str, params: tuple = ()) -> list[dict[str, Any]]:
        return self.read(lambda c: [dict(r) for r in c.execute(sql, params)], default=[])

    # -- schema --------------------------------------------------------------------------------

    def schema_version(self) -> int:
        """The version the store is at (0: not migrated yet)."""
        return self.read(lambda c: c.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version").fetchone()[0], 0)

    def migrate(self) -> tuple[int, int]:
        """Apply the missing steps; ``(version before, version after)``."""
        psycopg = _psycopg()
        conn, _ = self._connection()
        try:
            with conn.raw.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(?, ?)", (LOCK_CLASS, self._lock_key ^ 1))
                exists = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = ?", (self.schema,)).fetchone()
                if not exists:
                    conn.execute(f'CREATE SCHEMA "{self.schema}"')
                conn.execute(f'SET LOCAL search_path TO "{self.schema}"')
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, "
                    "description TEXT NOT NULL, applied TEXT NOT NULL, node TEXT NOT NULL)"
                )
                before = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version").fetchone()[0]
                try:
                    steps = migrations.steps_after(before, POSTGRESQL)
                except migrations.NewerSchemaError as error:
                    raise StoreError(f"state store {self.url.masked}: {error}") from None
                for version, description, statements in steps:
                    for statement in statements:
                        conn.execute(statement)
                    conn.execute(
                        "INSERT INTO schema_version (version, description, applied, node) VALUES (?, ?, ?, ?)",
                        (version, description, utc_now(), node_name()),
                    )
        except psycopg.OperationalError as error:
            self.close()
            raise self._error(error) from None
        except psycopg.Error as error:
            raise self._error(error, " (migration)") from None
        self._migrated = True
        return before, migrations.LATEST
