"""A read-only connection to a platform's database (StreamPark's, Dinky's), with the drivers
imported lazily, and the two readings every platform's reader shares: the columns the account
sees (:func:`visible_columns`) and a boolean column in either dialect (:func:`truthy`).

The drivers are the optional extra ``planlineage[streampark]`` (psycopg 3 for PostgreSQL, PyMySQL
for MySQL/MariaDB); the core install never imports them.  Every session is read only on the
server's side (PostgreSQL ``default_transaction_read_only``, MySQL ``SET SESSION TRANSACTION READ
ONLY``): nothing here can write to the platform's database even by mistake.  Every failure becomes
one :class:`SourceError` whose message has the password scrubbed out.
"""

from __future__ import annotations

from typing import Any

from planlineage.emitter.transports.base import scrub, short
from planlineage.errors import DriverMissing, SourceError
from planlineage.watch.url import Target

CONNECT_TIMEOUT = 5
STATEMENT_TIMEOUT_MS = 30_000


def _driver(dialect: str):
    try:
        if dialect == "postgresql":
            import psycopg

            return psycopg
        import pymysql

        return pymysql
    except ImportError:
        package = "psycopg[binary]" if dialect == "postgresql" else "PyMySQL"
        raise DriverMissing(
            f"the {dialect} driver ({package}) is not installed: pip install 'planlineage[streampark]'"
        ) from None


class Source:
    """One connection, opened on demand and dropped on any error (the next query reconnects)."""

    def __init__(self, target: Target, timeout: int = CONNECT_TIMEOUT):
        self.target = target
        self.timeout = timeout
        self._conn: Any = None
        self.connects = 0  # how many times a connection was opened (schema is re-detected on each)

    @property
    def dialect(self) -> str:
        return self.target.dialect

    def quote(self, identifier: str) -> str:
        """A column name that is a keyword in one of the dialects (``sql``, ``release``)."""
        return f"`{identifier}`" if self.dialect == "mysql" else f'"{identifier}"'

    def _error(self, what: str, error: BaseException) -> SourceError:
        text = " ".join(str(error).split()) or type(error).__name__
        return SourceError(f"{what} ({self.target.masked()}): {short(scrub(self.target.scrub(text)), 300)}")

    def _open(self) -> Any:
        t = self.target
        driver = _driver(t.dialect)
        try:
            if t.dialect == "postgresql":
                from psycopg.rows import dict_row

                options = f"-c default_transaction_read_only=on -c statement_timeout={STATEMENT_TIMEOUT_MS}"
                if t.schema:
                    options += f" -c search_path={t.schema}"
                return driver.connect(
                    host=t.host,
                    port=t.port,
                    dbname=t.database,
                    user=t.user,
                    password=t.password,
                    connect_timeout=self.timeout,
                    autocommit=True,
                    row_factory=dict_row,
                    application_name="planlineage-watch",
                    options=options,
                )
            conn = driver.connect(
                host=t.host,
                port=t.port,
                database=t.database,
                user=t.user,
                password=t.password or "",
                connect_timeout=self.timeout,
                read_timeout=STATEMENT_TIMEOUT_MS // 1000,
                write_timeout=STATEMENT_TIMEOUT_MS // 1000,
                autocommit=True,
                charset="utf8mb4",
                cursorclass=driver.cursors.DictCursor,
            )
            with conn.cursor() as cursor:
                cursor.execute("SET SESSION TRANSACTION READ ONLY")
            return conn
        except DriverMissing:
            raise
        except Exception as error:  # every driver/OS error: one scrubbed line
            raise self._error(f"cannot connect to the {t.platform} database", error) from None

    def connect(self) -> bool:
        """Connect if needed; True when a new connection was opened."""
        if self._conn is not None:
            return False
        self._conn = self._open()
        self.connects += 1
        return True

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:
                pass

    def rows(self, sql: str, params: tuple | list = ()) -> list[dict[str, Any]]:
        """The rows of one read query (``%s`` placeholders in both dialects)."""
        self.connect()
        try:
            with self._conn.cursor() as cursor:
                cursor.execute(sql, tuple(params))
                return [dict(r) for r in cursor.fetchall()]
        except Exception as error:
            lost = self._connection_lost(error)
            if lost:
                self.close()
            raise self._error(f"query on the {self.target.platform} database failed", error) from None

    def probe(self, sql: str) -> str | None:
        """Run a query only to learn whether it is allowed; the error text, or None."""
        try:
            self.rows(sql)
        except SourceError as error:
            return str(error)
        return None

    def _connection_lost(self, error: BaseException) -> bool:
        """Whether the connection is unusable after ``error`` (a plain failed query keeps it)."""
        if self.dialect == "postgresql":
            return bool(getattr(self._conn, "closed", True)) or getattr(self._conn, "broken", False)
        return not getattr(self._conn, "open", False)

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def truthy(value: Any) -> bool:
    """A boolean column as either dialect returns it: ``bool`` from PostgreSQL, ``0``/``1`` from
    MySQL, a string from a text column."""
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "t", "yes", "y")
    return bool(value)


def _current_schema_sql(source: Source) -> str:
    return "current_schema()" if source.dialect == "postgresql" else "DATABASE()"


def visible_columns(source: Source, prefix: str) -> dict[str, frozenset[str]]:
    """The columns the account sees of each table named ``prefix…`` in the current schema,
    lower-cased (how every platform's schema generation is detected)."""
    rows = source.rows(
        "SELECT table_name AS t, column_name AS c FROM information_schema.columns "
        f"WHERE table_schema = {_current_schema_sql(source)} AND table_name LIKE %s",
        (prefix.replace("_", "\\_") + "%",),
    )
    columns: dict[str, set[str]] = {}
    for row in rows:
        columns.setdefault(str(row["t"]).lower(), set()).add(str(row["c"]).lower())
    return {t: frozenset(c) for t, c in columns.items()}
