"""`submit --engine spark`: the lifecycle reports a Spark SQL job's runs with Spark's lineage."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gravitino_server import GravitinoTestServer

from .conftest import VERSION

TESTS = Path(__file__).resolve().parents[1]

SPARK = TESTS / "fixtures" / "spark"


@pytest.fixture
def run(tmp_path, provisioned):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANLINEAGE_")}
    env["PLANLINEAGE_HOME"] = str(tmp_path / "home")
    env["PLANLINEAGE_SPARK_CACHE"] = str(provisioned.home.parent)

    def call(*args):
        result = subprocess.run(
            [sys.executable, "-P", "-m", "planlineage", *args], capture_output=True, env=env, timeout=120, cwd=tmp_path
        )
        assert result.returncode == 0, result.stderr
        return result

    call.home = tmp_path / "home"
    return call


def wait_jobs_done(home: Path, timeout: float = 180.0) -> None:
    end = time.monotonic() + timeout
    while list((home / "jobs").glob("*.json")):
        assert time.monotonic() < end, "the lineage worker did not finish"
        time.sleep(0.2)


def test_submit_running_finished_per_target(run):
    with GravitinoTestServer() as server:
        run("settings", "set", "lineage.address", server.address)
        run(
            "submit",
            "--app-id",
            "spark_app_7",
            "--job-name",
            "reporting",
            "--engine",
            "spark",
            "--spark-version",
            VERSION,
            "--sql-file",
            str(SPARK / "sql" / "cache_views_multi.sql"),
            "--lineage-enable",
        )
        run("state", "--app-id", "spark_app_7", "--state", "RUNNING")
        wait_jobs_done(run.home)
        run("state", "--app-id", "spark_app_7", "--state", "FINISHED")
        run("flush")
        jobs = {
            "reporting": ([], []),
            "reporting.spark_catalog.reporting.totals": (
                [("hdfs://nn:8020", "/ref/codes")],
                [("s3://lake", "reporting/totals")],
            ),
            "reporting.spark_catalog.reporting.audit": (
                [("s3://lake", "hot"), ("file", "/srv/manual/audit.csv")],
                [("s3://lake", "reporting/audit")],
            ),
            "reporting.parquet.`s3a://lake/exports/joined`": (
                [("s3://lake", "hot"), ("hdfs://nn:8020", "/ref/codes")],
                [("s3://lake", "exports/joined")],
            ),
        }
        seen: dict[str, list[dict]] = {}
        for event in server.events:
            seen.setdefault(event["job"]["name"], []).append(event)
        assert set(seen) == set(jobs), server.events
        for job, events in seen.items():
            assert [e["eventType"] for e in events] == ["START", "RUNNING", "COMPLETE"], job
            for event in events:
                inputs = [(d["namespace"], d["name"]) for d in event.get("inputs") or []]
                outputs = [(d["namespace"], d["name"]) for d in event.get("outputs") or []]
                assert (inputs, outputs) == jobs[job], job
                engine = event["run"]["facets"]["processing_engine"]
                assert engine["name"] == "spark" and engine["version"].startswith(VERSION)
                assert event["job"]["facets"]["jobType"]["integration"] == "SPARK"
                # INSERT OVERWRITE [DIRECTORY]: openlineage-spark's OVERWRITE; INSERT INTO: none.
                changes = [(d.get("facets") or {}).get("lifecycleStateChange") for d in event.get("outputs") or []]
                overwritten = job.endswith(("totals", "joined`"))
                assert [c and c["lifecycleStateChange"] for c in changes] == (
                    ["OVERWRITE"] if overwritten else [None] * len(changes)
                ), job
