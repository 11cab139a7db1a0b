"""Private throwaway database servers for tests (and bench/): real PostgreSQL, no system service.

:class:`PostgresServer` runs Debian's PostgreSQL binaries (``/usr/lib/postgresql/<major>/bin``,
or ``PG_BIN``) on a free loopback port with its data, socket and log in a temp dir, as
pytest-postgresql does.  PostgreSQL refuses to run as root, so as root every server command runs
as the ``postgres`` user (``runuser``) and the temp dir is handed to it.  The superuser's password
is an obvious fake; TCP connections must use it (scram-sha-256), so URLs carry a real secret to mask.

Shared by every test package that needs PostgreSQL (the store backend, the StreamPark watcher):
import it with ``tests/`` on ``sys.path`` and use :func:`postgres_server` for a session-wide server.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

PASSWORD = "FAKE-pg-Secret-9f3"
SUPERUSER = "postgres"


def pg_bin() -> Path | None:
    """The folder of initdb/pg_ctl: ``PG_BIN`` or the newest Debian install; None without one."""
    configured = os.environ.get("PG_BIN")
    if configured:
        return Path(configured) if (Path(configured) / "pg_ctl").exists() else None
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("pg_ctl")
    return Path(on_path).parent if on_path else None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PostgresServer:
    """One private PostgreSQL instance: :meth:`start`, :meth:`stop`, :meth:`restart`, :meth:`url`."""

    def __init__(self, base: Path | None = None, *, durable: bool = False):
        binaries = pg_bin()
        if binaries is None:
            raise RuntimeError("PostgreSQL server binaries not found: install the postgresql package (see .ci/run)")
        self.bin = binaries
        self.base = Path(base or tempfile.mkdtemp(prefix="planlineage-pg-"))
        self.data = self.base / "data"
        self.socket_dir = self.base / "socket"
        self.log = self.base / "server.log"
        self.port = free_port()
        self.as_root = os.geteuid() == 0
        self.durable = durable  # fsync on (benchmarks); tests run without it, for speed

    def _run(self, *args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
        command = list(args)
        if self.as_root:
            command = ["runuser", "-u", SUPERUSER, "--", *command]
        return subprocess.run(command, capture_output=True, text=True, check=check, timeout=timeout, cwd=self.base)

    def init(self) -> PostgresServer:
        self.base.mkdir(parents=True, exist_ok=True)
        self.socket_dir.mkdir(exist_ok=True)
        password_file = self.base / "pw"
        password_file.write_text(PASSWORD + "\n")
        if self.as_root:
            shutil.chown(self.base, SUPERUSER)
            for path in (self.socket_dir, password_file):
                shutil.chown(path, SUPERUSER)
        os.chmod(self.base, 0o700)
        self._run(
            str(self.bin / "initdb"),
            "-D",
            str(self.data),
            "-U",
            SUPERUSER,
            "--pwfile",
            str(password_file),
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "--no-sync",
            "-E",
            "UTF8",
            "--locale=C",
        )
        password_file.unlink()
        return self

    def start(self) -> PostgresServer:
        if not self.data.exists():
            self.init()
        options = (
            f"-p {self.port} -k {self.socket_dir} -c listen_addresses=127.0.0.1 -c fsync={'on' if self.durable else 'off'} "
            "-c max_connections=200 -c shared_buffers=32MB"
        )
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "start")
        return self

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop", check=False)

    def restart(self, down_seconds: float = 0.0) -> None:
        self.stop()
        time.sleep(down_seconds)
        self.start()

    def destroy(self) -> None:
        self.stop()
        shutil.rmtree(self.base, ignore_errors=True)

    def url(self, database: str = "postgres", user: str = SUPERUSER, password: str = PASSWORD) -> str:
        return f"postgresql://{user}:{password}@127.0.0.1:{self.port}/{database}"

    def psql(self, sql: str, database: str = "postgres") -> str:
        """Run SQL over the private socket (trust) as the superuser; its output."""
        result = self._run(
            str(self.bin / "psql"), "-h", str(self.socket_dir), "-p", str(self.port), "-U", SUPERUSER,
            "-d", database, "-v", "ON_ERROR_STOP=1", "-Atqc", sql,
        )  # fmt: skip
        return result.stdout

    def create_database(self, name: str) -> str:
        """A fresh database; its URL."""
        self.psql(f'DROP DATABASE IF EXISTS "{name}"')
        self.psql(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.destroy()


@contextlib.contextmanager
def postgres_server(*, durable: bool = False):
    """A started private server, destroyed afterwards (use it in a session-scoped fixture)."""
    server = PostgresServer(durable=durable)
    try:
        server.start()
    except BaseException:
        server.destroy()
        raise
    try:
        yield server
    finally:
        server.destroy()


def all_rows(url: str) -> str:
    """Every row of every table of the database at ``url`` (a store URL), as text: to search a
    store for what must not be in it."""
    import psycopg

    from planlineage.store.url import parse

    with psycopg.connect(parse(url).conninfo) as conn:
        tables = conn.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_schema NOT IN ('pg_catalog', 'information_schema')"
        ).fetchall()
        return "\n".join(repr(row) for s, t in tables for row in conn.execute(f'SELECT * FROM "{s}"."{t}"'))
