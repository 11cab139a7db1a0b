"""Fixtures of the StreamPark watcher tests: real PostgreSQL and MariaDB servers (one each per
session, a fresh database per test), the console stand-in, a Gravitino-compatible server, and a
runner of ``planlineage watch`` as a separate process, as an operator runs it.

Compiles: after ``watch.recorded()`` the compile service compiles through the real pipeline
with the lifecycle tests' recorded planner (``tests/lifecycle/recorded_planner.py``: Flink 1.19
and 1.20 whose compile server answers recorded plans, no JVM); tests that take the
``real_planner`` fixture compile for real with Flink 1.20 through one warm planner for the whole
session (skipped, with the reason, when 1.20 is not provisioned in $PLANLINEAGE_FLINK_CACHE).
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from console import Console
from gravitino_server import GravitinoTestServer
from servers import (
    WATCH_PASSWORD,
    MariaDBServer,
    PostgresServer,
    mariadb_missing,
    postgres_missing,
)

HERE = Path(__file__).resolve().parent


def _server(kind):
    missing = postgres_missing() if kind is PostgresServer else mariadb_missing()
    if missing:
        pytest.skip(missing)
    server = kind()
    try:
        server.start()
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def pg_server():
    yield from _server(PostgresServer)


@pytest.fixture(scope="session")
def maria_server():
    yield from _server(MariaDBServer)


@pytest.fixture(params=["postgresql", "mariadb"])
def server(request):
    return request.getfixturevalue("pg_server" if request.param == "postgresql" else "maria_server")


class StreamPark:
    """One StreamPark database: the console writing it, the URL the watcher reads it with."""

    def __init__(self, server, generation: str, lineage_enable: bool, grant: bool, spark: bool = False):
        self.server = server
        self.database = server.create_database()
        self.console = Console(server, self.database, generation)
        self.console.load_schema(lineage_enable=lineage_enable, spark=spark)
        if grant:
            server.grant_select(self.database)
        self.url = server.url(self.database)

    def close(self) -> None:
        self.console.close()


@pytest.fixture
def streampark(server):
    made = []

    def make(generation: str = "dev", lineage_enable: bool = False, grant: bool = True, spark: bool = False):
        """``spark``: the Spark tables on PostgreSQL too (MySQL's dev DDL always has them)."""
        made.append(StreamPark(server, generation, lineage_enable, grant, spark))
        return made[-1]

    yield make
    for sp in made:
        sp.close()


@pytest.fixture
def maria_streampark(maria_server):
    """A dev StreamPark on MariaDB: upstream's PostgreSQL schema has no Spark tables."""
    sp = StreamPark(maria_server, "dev", lineage_enable=False, grant=True)
    yield sp
    sp.close()


@pytest.fixture
def gravitino():
    with GravitinoTestServer() as srv:
        yield srv


@pytest.fixture(scope="session")
def worker_dir():
    return tempfile.mkdtemp(prefix="planlineage-workers-")


@pytest.fixture(scope="session")
def real_planner(worker_dir):
    """One warm Flink 1.20 planner for the session (the compiles of `watch` use it)."""
    from planlineage.planner.provision import list_installed

    if list_installed().get("1.20", {}).get("state") != "ready":
        pytest.skip("Flink 1.20 is not provisioned in $PLANLINEAGE_FLINK_CACHE (the flink120 tox env provisions it)")
    env = dict(os.environ, PLANLINEAGE_PLANNER_DIR=worker_dir)
    subprocess.run(
        [sys.executable, "-P", "-m", "planlineage", "planner", "start", "1.20"], env=env, check=True, timeout=180
    )
    yield "1.20"
    subprocess.run([sys.executable, "-P", "-m", "planlineage", "planner", "stop"], env=env, timeout=60)


class Watch:
    """Runs `planlineage watch` in its own process, with a private home, against one database."""

    flag = "--streampark-db"  # tests/dinky's runner watches --dinky-db

    def __init__(self, home: Path, tmp: Path, gravitino: GravitinoTestServer, worker_dir: str):
        self.home, self.tmp = home, tmp
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("PLANLINEAGE_")}
        self.env.update(
            PLANLINEAGE_HOME=str(home),
            PLANLINEAGE_PLANNER_DIR=worker_dir,
            PLANLINEAGE_COMPILE_FLUSH_SECONDS="3",
            PLANLINEAGE_COMPILE_IDLE_SECONDS="0.5",
            PLANLINEAGE_LINEAGE_ADDRESS=gravitino.address,
            PLANLINEAGE_STREAMPARK_PASSWORD=WATCH_PASSWORD,
            PLANLINEAGE_DINKY_PASSWORD=WATCH_PASSWORD,
        )
        for cache in ("PLANLINEAGE_FLINK_CACHE", "PLANLINEAGE_SPARK_CACHE"):  # the provisioned versions
            if os.environ.get(cache):
                self.env[cache] = os.environ[cache]
        self.outputs: list[str] = []

    def recorded(self):
        """Compile with the recorded planner (no JVM; Flink 1.16, 1.19, 1.20): ``lineages.ONE_SINK`` and ``THREE_SINKS``
        to their recorded plans, ``BROKEN`` to Flink's parse error; the planner, for its gate and
        the jars it was given."""
        from lineages import BROKEN, ONE_SINK, PARSE_ERROR, THREE_SINKS
        from recorded_planner import RecordedPlanner

        self.planner = RecordedPlanner(self.tmp / "flink-cache", minors=("1.16", "1.19", "1.20"))
        self.planner.record(ONE_SINK, "union_all")
        self.planner.record(THREE_SINKS, "statement_set")
        self.planner.record_error(BROKEN, PARSE_ERROR)
        self.env.update(self.planner.env())
        # Not the session's real warm planner: it would answer first (socket paths are short).
        self.env["PLANLINEAGE_PLANNER_DIR"] = tempfile.mkdtemp(prefix="pl-sp-")
        return self.planner

    def __call__(self, *args: str, timeout: float = 90, **env: str) -> subprocess.CompletedProcess:
        result = subprocess.run(
            [sys.executable, "-P", "-m", "planlineage", "watch", *args],
            capture_output=True,
            text=True,
            env=dict(self.env, **env),
            timeout=timeout,
            cwd=self.tmp,
        )
        self.outputs += [result.stdout, result.stderr]
        return result

    def once(self, url: str, *args: str, **env: str) -> subprocess.CompletedProcess:
        """`watch --once` through the CLI's own entry point, in this process (a Python start and
        the drivers' import per poll would dominate the suite's time); the compiles still run in
        the runner's detached processes, which inherit this environment."""
        from planlineage.cli.main import main

        argv = ["watch", "--once", self.flag, url, "--timeout", "60", *args]
        saved = dict(os.environ)
        out, err = io.StringIO(), io.StringIO()
        try:
            os.environ.clear()
            os.environ.update(self.env, **env)
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(argv)
        finally:
            os.environ.clear()
            os.environ.update(saved)
        result = subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())
        self.outputs += [result.stdout, result.stderr]
        assert result.returncode == 0, result.stderr
        return result

    def daemon(self, url: str, *args: str) -> subprocess.Popen:
        self.log = self.tmp / "watch.log"
        handle = open(self.log, "w")  # noqa: SIM115 - the daemon writes it until stopped
        return subprocess.Popen(
            [sys.executable, "-P", "-m", "planlineage", "watch", self.flag, url, *args],
            stdout=handle, stderr=subprocess.STDOUT, env=self.env, cwd=self.tmp, text=True,
        )  # fmt: skip

    def stop(self, process: subprocess.Popen) -> int:
        process.send_signal(signal.SIGTERM)
        code = process.wait(30)
        self.outputs.append(self.log.read_text())
        return code

    def everything_written(self) -> str:
        """All output, the compile service's log and every file of the home (the password must be in none)."""
        parts = list(self.outputs)
        for path in self.home.rglob("*"):
            if path.is_file():
                parts.append(path.read_bytes().decode("utf-8", errors="replace"))
        return "\n".join(parts)


@pytest.fixture
def watch(tmp_path, gravitino, worker_dir):
    home = tmp_path / "home"
    runner = Watch(home, tmp_path, gravitino, worker_dir)
    yield runner
    _kill_workers(home)


def _kill_workers(home: Path) -> None:
    """Never leave a compile service of this test behind."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if b"_compile-service" in cmdline and str(home).encode() in cmdline:
            try:  # the service leads its own session: its planner children go with it
                os.killpg(int(proc.name), signal.SIGKILL)
            except OSError:
                pass
