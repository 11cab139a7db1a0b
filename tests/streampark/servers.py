"""Private, throwaway PostgreSQL and MariaDB servers for the StreamPark watcher tests.

Each is started once per test session in its own temp folder, listening on 127.0.0.1 on a free
port (and a private socket), and removed afterwards; no system service is used or touched.
PostgreSQL refuses to run as root, so ``initdb`` and ``pg_ctl`` run as the ``postgres`` user (the
folder is handed to it); MariaDB runs with ``--user=root`` and ``--no-defaults``.  Passwords are
obvious fakes.  :meth:`stop` / :meth:`start` take a server down and back on the same port.
"""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def _pg_bin() -> Path:
    """$PLANLINEAGE_TEST_PG_BIN, else the newest Debian PostgreSQL (``/usr/lib/postgresql/<major>/bin``)."""
    if os.environ.get("PLANLINEAGE_TEST_PG_BIN"):
        return Path(os.environ["PLANLINEAGE_TEST_PG_BIN"])
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]) if p.parts[-3].isdigit() else 0
    )
    return found[-1].parent if found else Path("/usr/lib/postgresql/15/bin")


PG_BIN = _pg_bin()
ADMIN_PASSWORD = "FAKE-admin-pw-0"
WATCH_USER = "planlineage"
WATCH_PASSWORD = "FAKE-watch-pw-Zq7x"  # asserted absent from every output
_names = itertools.count(1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def postgres_missing() -> str | None:
    for tool in ("initdb", "pg_ctl", "postgres"):
        if not (PG_BIN / tool).is_file():
            return f"PostgreSQL server binaries not installed ({PG_BIN / tool} missing; apt-get install postgresql)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "no postgres system user (the postgresql package creates it; PostgreSQL refuses to run as root)"
    return None


def mariadb_missing() -> str | None:
    for tool in ("mariadb-install-db", "mariadbd"):
        if shutil.which(tool) is None and not Path(f"/usr/sbin/{tool}").is_file():
            return f"MariaDB server binaries not installed ({tool} missing; apt-get install mariadb-server)"
    return None


class PostgresServer:
    dialect = "postgresql"

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="planlineage-pg-"))
        os.chmod(self.root, 0o755)
        self.data = self.root / "data"
        self.sock = self.root / "sock"
        self.port = free_port()
        # PostgreSQL refuses to run as root: as root, the folders go to the postgres user.
        user = pwd.getpwnam("postgres") if os.geteuid() == 0 else None
        pwfile = self.root / "pw"
        pwfile.write_text(ADMIN_PASSWORD)
        for path in (self.data, self.sock, pwfile):
            if path != pwfile:
                path.mkdir(mode=0o700)
            if user is not None:
                os.chown(path, user.pw_uid, user.pw_gid)
        self._as_postgres(
            str(PG_BIN / "initdb"), "-D", str(self.data), "-U", "postgres", f"--pwfile={pwfile}",
            "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-sync",
        )  # fmt: skip
        pwfile.unlink()

    def _as_postgres(self, *command: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        result = subprocess.run([*prefix, *command], capture_output=True, timeout=120)
        if result.returncode != 0:
            raise RuntimeError(f"{command[0]} failed: {result.stderr.decode(errors='replace')[-2000:]}")

    def start(self) -> None:
        options = (
            f"-p {self.port} -k {self.sock} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c shared_buffers=16MB -c max_connections=50"
        )
        self._as_postgres(
            str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.sock / "log"), "-w", "-t", "60",
            "-o", options, "start",
        )  # fmt: skip

    def stop(self) -> None:
        self._as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def close(self) -> None:
        try:  # throwaway data: no checkpoint needed
            self._as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        except Exception:
            pass
        shutil.rmtree(self.root, ignore_errors=True)

    def admin(self, database: str = "postgres"):
        import psycopg

        return psycopg.connect(
            host="127.0.0.1", port=self.port, user="postgres", password=ADMIN_PASSWORD, dbname=database,
            autocommit=True,
        )  # fmt: skip

    def create_database(self) -> str:
        name = f"streampark_{next(_names)}"
        with self.admin() as conn:
            conn.execute(f"CREATE DATABASE {name}")
            exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (WATCH_USER,)).fetchone()
            if not exists:
                conn.execute(f"CREATE ROLE {WATCH_USER} LOGIN PASSWORD '{WATCH_PASSWORD}'")
        return name

    def grant_select(self, database: str, tables: list[str] | None = None) -> None:
        with self.admin(database) as conn:
            conn.execute(f"GRANT USAGE ON SCHEMA public TO {WATCH_USER}")
            if tables is None:
                conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {WATCH_USER}")
            else:
                for table in tables:
                    conn.execute(f"GRANT SELECT ON {table} TO {WATCH_USER}")

    def url(self, database: str, with_password: bool = False) -> str:
        auth = f"{WATCH_USER}:{WATCH_PASSWORD}" if with_password else WATCH_USER
        return f"postgresql://{auth}@127.0.0.1:{self.port}/{database}"


class MariaDBServer:
    dialect = "mysql"

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="planlineage-maria-"))
        self.data = self.root / "data"
        self.sock = self.root / "mysqld.sock"
        self.port = free_port()
        self.process: subprocess.Popen | None = None
        # As root the administrator is root over the private socket; otherwise a password-less
        # root on this throwaway instance (it listens on loopback and its own socket only).
        self.as_root = os.geteuid() == 0
        auth = "socket" if self.as_root else "normal"
        result = subprocess.run(
            ["mariadb-install-db", "--no-defaults", f"--datadir={self.data}", *self._user(),
             f"--auth-root-authentication-method={auth}", "--skip-test-db"],
            capture_output=True, timeout=180,
        )  # fmt: skip
        if result.returncode != 0:
            raise RuntimeError(f"mariadb-install-db failed: {result.stderr.decode(errors='replace')[-2000:]}")

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["mariadbd", "--no-defaults", f"--datadir={self.data}", f"--socket={self.sock}", f"--port={self.port}",
             "--bind-address=127.0.0.1", *self._user(), f"--pid-file={self.root / 'pid'}", "--skip-log-bin",
             "--innodb-buffer-pool-size=32M", "--innodb-log-file-size=8M", "--skip-name-resolve",
             "--innodb-flush-log-at-trx-commit=0", "--max-connections=50", f"--log-error={self.root / 'log'}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        end = time.monotonic() + 60
        while True:
            try:
                self.admin().close()
                return
            except Exception:
                if self.process.poll() is not None or time.monotonic() > end:
                    raise RuntimeError(f"mariadbd did not start: {(self.root / 'log').read_text()[-2000:]}") from None
                time.sleep(0.1)

    def _user(self) -> list[str]:
        return ["--user=root"] if self.as_root else []

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
            self.process = None

    def close(self) -> None:
        if self.process is not None:  # throwaway data: no clean shutdown needed
            self.process.kill()
            self.process.wait(30)
            self.process = None
        shutil.rmtree(self.root, ignore_errors=True)

    def admin(self, database: str | None = None):
        import pymysql

        return pymysql.connect(unix_socket=str(self.sock), user="root", database=database, autocommit=True)

    def create_database(self) -> str:
        name = f"streampark_{next(_names)}"
        with self.admin() as conn, conn.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE {name} CHARACTER SET utf8mb4")
            cursor.execute(f"CREATE USER IF NOT EXISTS '{WATCH_USER}'@'127.0.0.1' IDENTIFIED BY '{WATCH_PASSWORD}'")
        return name

    def grant_select(self, database: str, tables: list[str] | None = None) -> None:
        with self.admin() as conn, conn.cursor() as cursor:
            for table in tables or ["*"]:
                cursor.execute(f"GRANT SELECT ON {database}.{table} TO '{WATCH_USER}'@'127.0.0.1'")

    def url(self, database: str, with_password: bool = False) -> str:
        auth = f"{WATCH_USER}:{WATCH_PASSWORD}" if with_password else WATCH_USER
        return f"mysql://{auth}@127.0.0.1:{self.port}/{database}"
