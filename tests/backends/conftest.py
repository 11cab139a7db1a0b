"""Session fixtures of the real-backend tests: a Kafka broker, a PostgreSQL and Data.Rentgen on
loopback. What each gives is documented in :mod:`rentgen_backend`."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import databases
import kafka_broker
import platforms
import pytest
import rentgen_backend
import servers


@pytest.fixture(scope="session")
def kafka(tmp_path_factory):
    """A single-node KRaft broker; ``kafka.bootstrap`` is its address."""
    with kafka_broker.kafka_broker(tmp_path_factory.mktemp("kafka")) as broker:
        yield broker


@pytest.fixture(scope="session")
def rentgen_postgres():
    """A throwaway PostgreSQL for Data.Rentgen's database."""
    with databases.postgres_server() as server:
        yield server


@pytest.fixture(scope="session")
def rentgen(tmp_path_factory, kafka, rentgen_postgres):
    """Data.Rentgen's consumer, REST server and http2kafka, started (a :class:`rentgen_backend.DataRentgen`)."""
    with rentgen_backend.data_rentgen(
        tmp_path_factory.mktemp("data-rentgen"), kafka.bootstrap, rentgen_postgres
    ) as backend:
        yield backend


@pytest.fixture(scope="session")
def rentgen_api(rentgen):
    """Its REST API, logged in (a :class:`rentgen_backend.RentgenClient`)."""
    client = rentgen_backend.RentgenClient(rentgen)
    yield client
    client.close()


# -- the user's scenario: platforms, planners, and `watch` configured only through OpenLineage's own means --

FLINK, SPARK = platforms.FLINK, platforms.SPARK


@pytest.fixture(scope="session")
def platform_postgres():
    """The StreamPark tests' throwaway PostgreSQL (admin and the watcher's read-only account)."""
    missing = servers.postgres_missing()
    assert missing is None, missing  # the backends env runs on machines .ci/run prepared: never skipped
    server = servers.PostgresServer()
    try:
        server.start()
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def planner_dir():
    return tempfile.mkdtemp(prefix="pl-bk-")


@pytest.fixture(scope="session")
def flink_planner(planner_dir):
    """A warm planner of :data:`FLINK` for the session (provisioned first if the cache lacks it)."""
    from planlineage.planner.provision import ensure

    ensure(FLINK, progress=lambda line: print(line, file=sys.stderr))
    env = dict(os.environ, PLANLINEAGE_PLANNER_DIR=planner_dir)
    subprocess.run(
        [sys.executable, "-P", "-m", "planlineage", "planner", "start", FLINK], env=env, check=True, timeout=300
    )
    yield FLINK
    subprocess.run([sys.executable, "-P", "-m", "planlineage", "planner", "stop"], env=env, timeout=60)


@pytest.fixture(scope="session")
def spark_provisioned():
    """:data:`SPARK`'s venv, provisioned here (with progress) rather than under a compile."""
    from planlineage.spark.provision import ensure

    return ensure(SPARK, progress=lambda line: print(line, file=sys.stderr))


@pytest.fixture
def openlineage_watch(tmp_path, planner_dir):
    """A factory: ``openlineage_watch({"OPENLINEAGE_URL": ...})`` is a :class:`platforms.OpenLineageWatch`."""
    made = []

    def make(openlineage: dict[str, str] | None = None) -> platforms.OpenLineageWatch:
        made.append(platforms.OpenLineageWatch(tmp_path / f"watch{len(made)}", planner_dir, openlineage or {}))
        return made[-1]

    yield make
    for runner in made:
        _kill_compile_services(runner.home)


def _kill_compile_services(home: Path) -> None:
    """Never leave a compile service of this test behind (it leads its own session)."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if b"_compile-service" in cmdline and str(home).encode() in cmdline:
            with contextlib.suppress(OSError):
                os.killpg(int(proc.name), signal.SIGKILL)
