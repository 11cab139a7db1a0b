"""20 applications at once against the compile service, with the real planner of one Flink
version: submit -> RUNNING -> FINISHED, every event delivered exactly once per
(runId, job, eventType) as the server sees it, never more planner JVMs alive than configured,
and none left once the service is gone.  (Timings: bench/lifecycle_load.py prints them.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from compile_services import planner_jvms, services
from gravitino_server import GravitinoTestServer

TESTS = Path(__file__).resolve().parents[1]

VERSION = os.environ.get("PLANLINEAGE_TEST_FLINK", "1.20")
EXAMPLES = TESTS.parent / "examples"
APPS = 20
PLANNERS = 1
pytestmark = pytest.mark.flink


@pytest.fixture
def cli(tmp_path, provisioned):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANLINEAGE_")}
    env["PLANLINEAGE_HOME"] = str(tmp_path / "home")
    env["PLANLINEAGE_COMPILE_IDLE_SECONDS"] = "2"
    if os.environ.get("PLANLINEAGE_FLINK_CACHE"):
        env["PLANLINEAGE_FLINK_CACHE"] = os.environ["PLANLINEAGE_FLINK_CACHE"]

    def call(*args):
        result = subprocess.run(
            [sys.executable, "-m", "planlineage", *args], capture_output=True, env=env, timeout=120, cwd=tmp_path
        )
        assert result.returncode == 0, result.stderr
        return result

    call.home = tmp_path / "home"
    yield call
    for pid in services(call.home):
        os.kill(pid, signal.SIGKILL)


def test_twenty_concurrent_apps_exactly_once_and_bounded_jvms(cli):
    sql = EXAMPLES / "kafka_to_jdbc_enrichment.sql"
    seen_jvms: list[int] = []
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            seen_jvms.append(len(planner_jvms(cli.home)))
            time.sleep(0.1)

    with GravitinoTestServer() as server:
        cli("settings", "set", "lineage.address", server.address)
        cli("settings", "set", "lineage.compile-planners", str(PLANNERS))
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        apps = [f"application_{i}" for i in range(APPS)]
        with ThreadPoolExecutor(APPS) as pool:
            args = ["--flink-version", VERSION, "--sql-file", str(sql), "--lineage-enable"]
            list(pool.map(lambda a: cli("submit", "--app-id", a, "--job-name", f"job-{a}", *args), apps))
            list(pool.map(lambda a: cli("state", "--app-id", a, "--state", "RUNNING"), apps))
            deadline = time.monotonic() + 600
            while len(server.events) < APPS and time.monotonic() < deadline:  # the compiles, one JVM at a time
                time.sleep(0.5)
            list(pool.map(lambda a: cli("state", "--app-id", a, "--state", "FINISHED"), apps))
        deadline = time.monotonic() + 120
        while len(server.events) < 3 * APPS and time.monotonic() < deadline:
            if not services(cli.home):
                cli("flush")
            time.sleep(0.5)
        stop.set()
        sampler.join()
        counts = Counter((e["run"]["runId"], e["job"]["name"], e["eventType"]) for e in server.events)
        types = Counter(e["eventType"] for e in server.events)
    assert types == {"START": APPS, "RUNNING": APPS, "COMPLETE": APPS}, types
    assert set(counts.values()) == {1}, "an event was delivered twice"
    assert max(seen_jvms) <= PLANNERS and max(seen_jvms) >= 1, max(seen_jvms)
    # idle, the service stops, and no JVM of it stays behind
    deadline = time.monotonic() + 30
    while (services(cli.home) or planner_jvms(cli.home)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert services(cli.home) == [] and planner_jvms(cli.home) == []


def test_killed_service_leaves_no_jvm_and_is_restarted_by_the_next_command(cli):
    sql = EXAMPLES / "kafka_to_jdbc_enrichment.sql"
    with GravitinoTestServer() as server:
        cli("settings", "set", "lineage.address", server.address)
        args = ["--flink-version", VERSION, "--sql-file", str(sql), "--lineage-enable"]
        cli("submit", "--app-id", "a1", "--job-name", "j1", *args)
        deadline = time.monotonic() + 120
        while not planner_jvms(cli.home) and time.monotonic() < deadline:
            time.sleep(0.1)
        [service] = services(cli.home)
        jvms = planner_jvms(cli.home)
        assert jvms
        nice = [int(Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[16]) for p in jvms]
        assert all(n >= 10 for n in nice), nice  # the planners yield to the platform
        # ... under Linux's autogroup scheduling too (their own session's group is niced)
        groups = [Path(f"/proc/{p}/autogroup") for p in jvms]
        assert all(int(g.read_text().split()[-1]) >= 10 for g in groups if g.exists()), [g.read_text() for g in groups]
        # The service's own Python too (start-up, event building, delivery): the callers go first.
        assert int(Path(f"/proc/{service}/stat").read_text().rsplit(")", 1)[1].split()[16]) >= 10
        os.kill(service, signal.SIGKILL)  # mid-compile
        deadline = time.monotonic() + 30
        while any(Path(f"/proc/{p}").exists() for p in jvms) and time.monotonic() < deadline:
            time.sleep(0.2)
        cli("state", "--app-id", "a1", "--state", "RUNNING")  # restarts it: the job is compiled again
        deadline = time.monotonic() + 300
        while len(server.events) < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert [e["eventType"] for e in server.events] == ["START", "RUNNING"]
        alive = [p for p in jvms if Path(f"/proc/{p}").exists()]
        assert alive == [], "a planner JVM outlived its service"
