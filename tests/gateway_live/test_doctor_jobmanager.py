"""`planlineage doctor --jobmanager URL` against the real JobManager: a job submitted through
`planlineage gateway` is reported (matched by its Flink JobID in the proxy's state store), one
submitted straight to the SQL Gateway, past the proxy, is listed as a blind spot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from gateway_clients import RestSession
from gateway_jobs import unbounded_source


def _doctor(jobmanager: str, home, *extra: str) -> tuple[int, dict]:
    """The real CLI, in its own process, reading the proxy's home (read only)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLANLINEAGE_", "OPENLINEAGE_"))}
    env["PLANLINEAGE_HOME"] = str(home)
    command = [sys.executable, "-P", "-m", "planlineage", "doctor", "--jobmanager", jobmanager, *extra]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def test_a_job_submitted_past_the_proxy_is_listed_and_one_through_it_is_not(live, proxy, lineage, tables):
    with RestSession(proxy.url) as session:
        session.run(unbounded_source("endless"))
        session.run(tables.sink("snk", "through_proxy"))
        through = session.submit("INSERT INTO snk SELECT id, word FROM endless")
    with RestSession(live.gateway, properties={"pipeline.name": "past-the-proxy"}) as session:
        session.run(unbounded_source("endless"))
        session.run(tables.sink("snk", "past_proxy"))
        past = session.submit("INSERT INTO snk SELECT id, word FROM endless")
    try:
        for job in (through, past):
            assert live.wait_for_state(job, {"RUNNING"}) == "RUNNING"
        home = proxy.work / "home"
        deadline = time.monotonic() + 120
        while True:  # the proxy records the run at once; its lineage once the compile is done
            code, report = _doctor(live.jobmanager, home, "--state", "--format", "json")
            matched = {m["job_id"]: m["by"] for m in report["matched"]}
            if through in matched or time.monotonic() > deadline:
                break
            time.sleep(1)
        listed = {spot["job_id"]: spot for spot in report["blind_spots"]}
        assert matched.get(through) == "job id", (report, proxy.output())
        assert through not in listed
        assert code == 1 and past in listed
        assert listed[past]["name"] == "past-the-proxy" and listed[past]["state"] == "RUNNING"
        assert "no run of a job named 'past-the-proxy' was reported" in listed[past]["why"]
    finally:
        for job in (through, past):
            live.cancel(job)
        for job in (through, past):
            live.wait_for_state(job, {"CANCELED", "FAILED", "FINISHED"})


def test_the_sql_gateway_given_for_the_jobmanager_is_named(live, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLANLINEAGE_", "OPENLINEAGE_"))}
    env["PLANLINEAGE_HOME"] = str(tmp_path / "home")
    command = [sys.executable, "-P", "-m", "planlineage", "doctor", "--jobmanager", live.gateway, "--state"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "It is a Flink SQL Gateway" in done.stderr
