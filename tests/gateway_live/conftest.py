"""The real Flink SQL Gateway on a real session cluster, per Flink version (2.3 and 1.20), shared by
every test of the folder: pytest runs all the tests of one version, stops its cluster, then starts
the next (one cluster at a time on a shared machine).

A version is skipped, saying why, when its provisioned jars or a Maven artifact it needs are not
to be had (not provisioned in ``$PLANLINEAGE_FLINK_CACHE``, not served by the registry); a pinned
artifact whose checksum differs fails.  ``PLANLINEAGE_TEST_GATEWAY_FLINK=2.3`` runs one version.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import maven_artifacts
import pytest
from gateway_clients import JdbcProgram
from gateway_cluster import FlinkJars, LiveFlink, port_is_free
from gateway_jobs import Tables
from gateway_proxy import PLANNER_HEAP, Proxy
from gravitino_server import GravitinoTestServer
from marked_jvms import marked_jvms, wait_until

VERSIONS = ("2.3", "1.20")
GATEWAY_PINS = {"2.3": "flink-sql-gateway-2_3", "1.20": "flink-sql-gateway-1_20"}
# The registry serves the JDBC driver bundle for 2.3 only; it speaks the REST API both gateways
# answer (measured: it runs an INSERT through the 1.20.3 gateway), so both versions use it.
JDBC_PINS = ("flink-sql-jdbc-driver-bundle", "slf4j-api")


def selected_versions() -> tuple[str, ...]:
    chosen = os.environ.get("PLANLINEAGE_TEST_GATEWAY_FLINK")
    return tuple(v.strip() for v in chosen.split(",")) if chosen else VERSIONS


def _resolve_or_skip(name: str) -> list[Path]:
    try:
        return maven_artifacts.resolve(name)
    except maven_artifacts.ArtifactError as error:
        if "could not be resolved" in str(error) or "not installed" in str(error):
            pytest.skip(f"gateway tests: {error}")
        raise


def _provisioned_or_skip(version: str):
    from planlineage.planner.provision import ensure

    try:
        return ensure(version)
    except Exception as error:  # any reason it cannot be had is the skip's reason
        pytest.skip(f"gateway tests: Flink {version} could not be provisioned: {error}")


@pytest.fixture(scope="session", params=selected_versions(), ids=lambda v: f"flink{v}")
def flink_version(request) -> str:
    return request.param


@pytest.fixture(scope="session")
def planner_dir():
    # A private folder of warm planners: the proxies' compiles start theirs here, stopped at the end.
    folder = tempfile.mkdtemp(prefix="pl-gwl-")
    yield folder
    env = dict(os.environ, PLANLINEAGE_PLANNER_DIR=folder)
    subprocess.run([sys.executable, "-P", "-m", "planlineage", "planner", "stop"], env=env, timeout=60)
    for pid in marked_jvms(PLANNER_HEAP):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.fixture(scope="session")
def live(flink_version, tmp_path_factory) -> LiveFlink:
    """A running session cluster and SQL Gateway of ``flink_version``; logs under its work dir."""
    if flink_version not in GATEWAY_PINS:
        pytest.skip(f"gateway tests: no SQL Gateway jar of Flink {flink_version} is pinned (tests/artifacts.toml)")
    gateway_jar = _resolve_or_skip(GATEWAY_PINS[flink_version])[0]
    provisioned = _provisioned_or_skip(flink_version)
    jars = FlinkJars(provisioned.flink.version, provisioned.lib)
    flink = LiveFlink(jars, gateway_jar, tmp_path_factory.mktemp(f"flink-{flink_version}"))
    flink.start()
    print(f"\nFlink {jars.version}: JobManager {flink.jobmanager}, SQL Gateway {flink.gateway}, logs {flink.logs}")
    yield flink
    ports = (flink.jobmanager_port, flink.gateway_port)
    flink.stop()
    assert wait_until(lambda: all(port_is_free(port) for port in ports), 30), f"ports {ports} still taken"
    assert not marked_jvms_of(flink), "a JVM of the cluster outlived stop()"


def marked_jvms_of(flink: LiveFlink) -> list[int]:
    from gateway_cluster import marked_pids

    return marked_pids(flink.run_id)


@pytest.fixture(scope="session")
def jdbc(live, tmp_path_factory) -> JdbcProgram:
    driver = _resolve_or_skip(JDBC_PINS[0]) + _resolve_or_skip(JDBC_PINS[1])
    return JdbcProgram(tmp_path_factory.mktemp("jdbc"), driver, live.run_id)


@pytest.fixture
def tables(tmp_path) -> Tables:
    return Tables(tmp_path / "tables")


@pytest.fixture
def lineage():
    """The lineage backend the proxy reports to: a Gravitino-compatible server on loopback."""
    with GravitinoTestServer() as server:
        yield server


@pytest.fixture
def proxy(live, lineage, planner_dir, tmp_path):
    """``planlineage gateway`` (the real CLI, its own process) in front of ``live``'s gateway,
    lineage to ``lineage``, its home in the test's tmp dir; stopped (and its log kept) after."""
    running = Proxy(live, lineage, planner_dir, tmp_path / "proxy")
    running.start()
    yield running
    running.stop()
