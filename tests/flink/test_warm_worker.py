"""Warm workers: isolation, crash and timeout recovery, recycling, idle stop, fallback, backfill."""

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from planlineage.pipeline import ExtractError, extract
from planlineage.planner import warm

ROOT = Path(__file__).parent.parent.parent
D = "default_catalog.default_database."
JOB = (
    "CREATE TABLE s (a INT) WITH ('connector' = 'datagen');"
    "CREATE TABLE o (a INT) WITH ('connector' = 'blackhole');"
    "INSERT INTO o SELECT a FROM s;"
)


@pytest.fixture
def worker_dir(tmp_path, monkeypatch):
    folder = Path("/tmp") / f"pl-test-{os.getpid()}-{tmp_path.name[-12:]}"
    monkeypatch.setenv(warm.PLANNER_DIR_ENV, str(folder))
    yield folder
    warm.stop()
    for leftover in folder.glob("*") if folder.exists() else []:
        leftover.unlink()
    if folder.exists():
        folder.rmdir()


def status_of(minor):
    (info,) = [w for w in warm.status() if w.get("socket", "").endswith(warm.socket_name(minor))]
    return info


def test_worker_serves_extract_and_keeps_jobs_apart(worker_dir, provisioned):
    minor = provisioned.flink.minor
    info = warm.start(minor, warm.Limits(), idle_seconds=300)
    assert info["state"] == "running" and info["jobs"] == 0
    assert stat.S_IMODE(worker_dir.stat().st_mode) == 0o700
    assert stat.S_IMODE(warm.socket_path(minor).stat().st_mode) == 0o600

    lineage = extract(JOB, flink_version=minor)
    assert {s.table: [i.table for i in s.inputs] for s in lineage.sinks} == {D + "o": [D + "s"]}
    assert status_of(minor)["jobs"] == 1  # the worker answered, not a cold child

    # Jobs that compile only if the previous job's temporary table or catalog leaked.
    extract(
        "CREATE TEMPORARY TABLE leak (a INT) WITH ('connector' = 'datagen');"
        "CREATE CATALOG leakcat WITH ('type' = 'generic_in_memory');"
        "CREATE TABLE leakcat.`default`.t (a INT) WITH ('connector' = 'datagen');"
        "CREATE TABLE o (a INT) WITH ('connector' = 'blackhole'); INSERT INTO o SELECT a FROM leak;",
        flink_version=minor,
    )
    for source in ("leak", "leakcat.`default`.t"):
        with pytest.raises(ExtractError) as raised:
            extract(
                f"CREATE TABLE o (a INT) WITH ('connector' = 'blackhole'); INSERT INTO o SELECT a FROM {source};",
                flink_version=minor,
            )
        assert "line 1" in str(raised.value)
    assert status_of(minor)["planners_started"] == 1

    assert warm.stop(minor) == 1
    assert not warm.socket_path(minor).exists()


def test_a_crashed_planner_is_replaced_without_losing_the_job(worker_dir, provisioned):
    minor = provisioned.flink.minor
    warm.start(minor, warm.Limits(), idle_seconds=300)
    os.kill(status_of(minor)["planner_pid"], signal.SIGKILL)
    lineage = extract(JOB, flink_version=minor)
    assert lineage.sinks[0].table == D + "o"
    info = status_of(minor)
    assert info["planners_started"] == 2 and info["jobs"] == 1


def test_a_hanging_job_times_out_and_the_next_job_gets_a_fresh_planner(provisioned):
    planner = warm.SelfHealingPlanner(provisioned, warm.Limits(job_timeout=0.01))
    try:
        request = warm.WARM_UP
        answer = planner.compile(request)
        assert not answer["ok"] and "longer than" in answer["error"]["message"]
        planner.limits.job_timeout = 120
        assert planner.compile(request)["ok"]
        assert planner.generation == 2
    finally:
        planner.close()


def test_planners_are_recycled_after_a_number_of_jobs_or_memory(provisioned):
    planner = warm.SelfHealingPlanner(provisioned, warm.Limits(max_jobs=2))
    try:
        for _ in range(3):
            assert planner.compile(warm.WARM_UP)["ok"]
        assert planner.generation == 2
        planner.limits.max_rss_mb = 1  # any JVM is larger: recycled after every job
        planner.limits.memory_check_seconds = 0  # read after every job, not at most twice a second
        assert planner.compile(warm.WARM_UP)["ok"] and planner.planner_pid is None
        assert planner.compile(warm.WARM_UP)["ok"] and planner.planner_pid is None
        assert planner.generation == 3
    finally:
        planner.close()


def test_an_idle_worker_stops_by_itself(worker_dir, provisioned):
    minor = provisioned.flink.minor
    warm.start(minor, warm.Limits(), idle_seconds=1)
    deadline = time.monotonic() + 30
    while warm.socket_path(minor).exists() and time.monotonic() < deadline:
        time.sleep(0.3)
    assert not warm.socket_path(minor).exists()


def test_going_cold_after_an_idle_stop_is_said_once(worker_dir, provisioned, caplog):
    minor = provisioned.flink.minor
    warm.start(minor, warm.Limits(), idle_seconds=1)
    deadline = time.monotonic() + 30
    while warm.socket_path(minor).exists() and time.monotonic() < deadline:
        time.sleep(0.3)
    with caplog.at_level("WARNING", logger="planlineage"):
        assert warm.compile_warm(minor, {"statements": []}, 5.0) is None
        assert warm.compile_warm(minor, {"statements": []}, 5.0) is None
    said = [r.getMessage() for r in caplog.records if "stopped after idling" in r.getMessage()]
    assert len(said) == 1 and f"planner start {minor}" in said[0]


def test_a_stale_socket_falls_back_to_a_cold_child(worker_dir, provisioned):
    minor = provisioned.flink.minor
    worker_dir.mkdir(mode=0o700)
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(warm.socket_path(minor)))  # bound, never listening
    stale.close()
    lineage = extract(JOB, flink_version=minor)
    assert lineage.sinks[0].table == D + "o"


def test_backfill_prints_one_line_per_script_and_a_summary(tmp_path, provisioned):
    folder = tmp_path / "jobs"
    folder.mkdir()
    for name in ("cdc_pipeline.sql", "statement_set.sql"):
        (folder / name).write_text((ROOT / "examples" / name).read_text())
    (folder / "broken.sql").write_text("INSERT INTO nowhere SELECT 1;")
    result = subprocess.run(
        [
            sys.executable,
            "-P",
            "-m",
            "planlineage",
            "extract",
            str(folder),
            "--jobs",
            "2",
            "--flink-version",
            provisioned.flink.minor,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 2  # one script failed
    lines = {Path(line["script"]).name: line for line in map(json.loads, result.stdout.splitlines())}
    assert set(lines) == {"cdc_pipeline.sql", "statement_set.sql", "broken.sql"}
    assert lines["cdc_pipeline.sql"]["ok"] and lines["statement_set.sql"]["ok"]
    assert len(lines["statement_set.sql"]["lineage"]["sinks"]) == 2
    assert not lines["broken.sql"]["ok"] and "line 1" in lines["broken.sql"]["error"]
    assert "3 scripts, 2 ok, 1 failed" in result.stderr
    assert "cdc-FAKE-secret" not in result.stdout + result.stderr


def test_backfill_uses_the_running_worker_and_starts_only_the_rest(worker_dir, tmp_path, provisioned):
    minor = provisioned.flink.minor
    warm.start(minor, warm.Limits(), idle_seconds=300)
    folder = tmp_path / "jobs"
    folder.mkdir()
    for i in range(4):
        (folder / f"job{i}.sql").write_text(JOB.replace(" o ", f" o{i} ").replace("INTO o ", f"INTO o{i} "))

    def backfill(jobs: int) -> subprocess.CompletedProcess:
        return subprocess.run(
            [
                sys.executable,
                "-P",  # the installed planlineage, as the warm planner (a checkout's is another installation)
                "-m",
                "planlineage",
                "extract",
                str(folder),
                "--jobs",
                str(jobs),
                "--flink-version",
                minor,
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env=dict(os.environ),
        )

    alone = backfill(1)
    assert alone.returncode == 0, alone.stderr
    assert "1 at once: 1 on the running warm planner, no new JVM" in alone.stderr
    assert status_of(minor)["jobs"] == 4  # every script went to the warm planner: no JVM started
    sinks = sorted(json.loads(line)["lineage"]["sinks"][0]["table"] for line in alone.stdout.splitlines())
    assert sinks == [f"{D}o{i}" for i in range(4)]
    assert "per job p50 " in alone.stderr and " ms, p95 " in alone.stderr

    both = backfill(2)
    assert both.returncode == 0, both.stderr
    assert "2 at once: 1 on the running warm planner, 1 in a new JVM" in both.stderr
    assert len(both.stdout.splitlines()) == 4
