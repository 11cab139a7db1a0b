"""Hostile input in the compile service, without a JVM: the redaction of a huge literal stays
linear in memory, a large job compiles in a lane of its own (the usual jobs pass it), and a
planner out of memory is reported as the script's size, not as the machine's fault."""

from __future__ import annotations

import threading
import time
import tracemalloc
from types import SimpleNamespace

import pytest

from planlineage.errors import ExitCode
from planlineage.lifecycle import compile_service, job_files, planner_pool, runner, sql_facet
from planlineage.planner.stages import _compile_error
from planlineage.script import split
from planlineage.store.sqlite import Store

SECRET = "s3cr3t-test-only"
DDL = f"CREATE TABLE src (a INT) WITH ('connector' = 'jdbc', 'password' = '{SECRET}');\n"


@pytest.mark.parametrize("engine", ["flink", "spark"])
@pytest.mark.parametrize("quote", ["x", "''", "\\'"], ids=["one-string", "sql-escaped", "backslash-escaped"])
def test_redacting_a_huge_literal_takes_memory_linear_in_it_and_small(engine, quote):
    """About 190 bytes per byte of literal before (a 24 MB literal took the service to 3.4 GB),
    and minutes for 2 MB with escaped quotes (an option's key was read from each escape on)."""
    size = 2_000_000
    literal = ("x" * 999 + quote) * (size // 1000)
    sql = DDL + f"INSERT INTO snk SELECT a, '{literal}' FROM src;\n"
    began = time.monotonic()
    tracemalloc.start()
    try:
        redacted = sql_facet.redacted(sql, engine)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    took = time.monotonic() - began
    assert SECRET not in redacted and "'password' = '******'" in redacted
    assert peak < 12 * len(sql), peak / len(sql)
    assert took < 15.0, took  # ~0.2-1.5 s on a busy 2-core machine


def _job(store: Store, run_id: str, sql: str) -> None:
    folder = job_files.jobs_dir(store)
    folder.mkdir(parents=True, exist_ok=True)
    job_files.write_job(folder / f"{run_id}.json", {"app_id": run_id, "run_id": run_id, "sql": sql, "attempts": 0})


def test_a_large_job_does_not_hold_up_the_usual_ones(tmp_path, monkeypatch):
    """One planner (a 2-core machine): a large job compiling for long (here: until released)
    leaves the planner of the usual jobs free; before, they waited for it (10 minutes)."""
    store = Store(tmp_path / "state.db")
    release = threading.Event()
    compiled: list[str] = []

    def compile_job(store, job, planner=None, timeout=None):
        if compile_service.is_large(job):
            release.wait(30)
        compiled.append(job["run_id"])

    monkeypatch.setattr(runner, "compile_job", compile_job)
    large = DDL + "INSERT INTO snk SELECT '" + "x" * (compile_service.LARGE_JOB_BYTES + 1) + "' FROM src;"
    _job(store, "large-1", large)
    time.sleep(0.05)  # (jobs are taken oldest first)
    _job(store, "large-2", large)
    time.sleep(0.05)
    _job(store, "large-3", large)
    time.sleep(0.05)
    for n in range(5):
        _job(store, f"small-{n}", DDL + "INSERT INTO snk SELECT a FROM src;")
    service = compile_service.Service(store, planners=1, idle_seconds=60)
    serving = threading.Thread(target=service.serve, args=(0,), daemon=True)
    serving.start()
    try:
        deadline = time.monotonic() + 20
        while len(compiled) < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sorted(compiled) == [f"small-{n}" for n in range(5)]
        assert service.taken_large <= {"large-1.json", "large-2.json"}  # two large ones at most
    finally:
        release.set()
        deadline = time.monotonic() + 20
        while len(compiled) < 8 and time.monotonic() < deadline:
            time.sleep(0.05)
        service.stopping.set()
        serving.join(20)
    assert compiled[5:] == ["large-1", "large-2", "large-3"]


def test_a_planner_out_of_memory_is_the_scripts_size_not_the_machine():
    sent = split(DDL + "INSERT INTO snk SELECT a, 'xxxxxxxx' FROM src;")
    error = _compile_error({"statement": 1, "message": "Java heap space"}, sent, {})
    assert error.exit_code == ExitCode.INPUT
    message = str(error)
    assert message.startswith("statement at line 2 (INSERT INTO snk SELECT a, 'xxxxxxxx' FROM src) cannot be compiled")
    assert "needs more memory than the planner's heap of 1g" in message and "PLANLINEAGE_PLANNER_HEAP" in message


def test_a_large_job_of_a_shared_store_does_not_hold_up_claiming_the_usual_ones(tmp_path, monkeypatch):
    """Nodes sharing a store claim jobs while they have a free planner: a large job claimed went
    to the lane but counted as the one planner's job, so no usual job was claimed behind it."""
    from planlineage.lifecycle import compile_jobs

    large = {"run_id": "large", "sql": "x" * (compile_service.LARGE_JOB_BYTES + 1)}
    threads = planner_pool.COMPILE_THREADS  # the jobs one planner's JVM compiles at once
    waiting = [large] + [{"run_id": f"small-{i}", "sql": "INSERT"} for i in range(1, threads + 2)]
    monkeypatch.setattr(compile_jobs, "claim_next", lambda store, holder, lease: (waiting.pop(0), 1))
    monkeypatch.setattr(compile_jobs, "renew_all", lambda store, holder, lease: 0)
    store = SimpleNamespace(shared=True, path=tmp_path / "state.db")
    service = compile_service.Service(store, planners=1, idle_seconds=60)
    handed: dict[str, list[str]] = {"compiles": [], "lane": []}

    class Threads:
        def __init__(self, name):
            self.name = name

        def submit(self, run, job):
            handed[self.name].append(job["run_id"])

    service.large_lane = Threads("lane")
    service._claim_shared(Threads("compiles"))
    assert handed == {"compiles": [f"small-{i}" for i in range(1, threads + 1)], "lane": ["large"]}
    assert [job["run_id"] for job in waiting] == [f"small-{threads + 1}"]  # one planner: its threads' jobs taken
