"""The lifecycle commands with the real planner of one Flink version (PLANLINEAGE_TEST_FLINK)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from gravitino_server import GravitinoTestServer

from planlineage import listener_conf

TESTS = Path(__file__).resolve().parents[1]

VERSION = os.environ.get("PLANLINEAGE_TEST_FLINK", "1.20")
EXAMPLES = TESTS.parent / "examples"
pytestmark = pytest.mark.flink


@pytest.fixture
def run(tmp_path, provisioned):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANLINEAGE_")}
    env["PLANLINEAGE_HOME"] = str(tmp_path / "home")
    if os.environ.get("PLANLINEAGE_FLINK_CACHE"):
        env["PLANLINEAGE_FLINK_CACHE"] = os.environ["PLANLINEAGE_FLINK_CACHE"]

    def call(*args, **extra):
        result = subprocess.run(
            [sys.executable, "-P", "-m", "planlineage", *args],
            capture_output=True,
            env=dict(env, **extra),
            timeout=120,
            cwd=tmp_path,
        )
        assert result.returncode == 0, result.stderr
        return result

    call.home = tmp_path / "home"
    return call


def wait_jobs_done(home: Path, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while list((home / "jobs").glob("*.json")):
        assert time.monotonic() < end, "the lineage worker did not finish"
        time.sleep(0.1)


def test_statement_set_submit_running_finished(run):
    with GravitinoTestServer() as server:
        run("settings", "set", "lineage.address", server.address)
        run(
            "submit",
            "--app-id",
            "application_42",
            "--job-name",
            "clicks",
            "--flink-version",
            VERSION,
            "--sql-file",
            str(EXAMPLES / "statement_set.sql"),
            "--lineage-enable",
        )
        run("state", "--app-id", "application_42", "--state", "RUNNING")  # may arrive before START
        wait_jobs_done(run.home)
        run("state", "--app-id", "application_42", "--state", "FINISHED")
        run("flush")
        # The compile service may hold a claim on an event (and deliver it) while `flush` runs: on a
        # busy machine that outlasts one flush, so the last events are waited for, never assumed.
        end = time.monotonic() + 60
        while len(server.events) < 9 and time.monotonic() < end:
            time.sleep(0.5)
            run("flush")
        jobs = {
            "clicks": ([], []),
            "clicks.default_catalog.default_database.click_counts": (
                [("kafka://kafka-1.prod:9092", "clicks")],
                [("s3://lake", "clicks/counts")],
            ),
            "clicks.default_catalog.default_database.payment_archive": (
                [("kafka://kafka-1.prod:9092", "payments")],
                [("hdfs://namenode:8020", "/archive/payments")],
            ),
        }
        seen = {}
        for event in server.events:
            seen.setdefault(event["job"]["name"], []).append(event)
        assert set(seen) == set(jobs), (
            server.events,
            (run.home / "compile-service.log").read_text() if (run.home / "compile-service.log").exists() else "",
        )
        parent_runs = {e["run"]["runId"] for e in seen["clicks"]}
        assert len(parent_runs) == 1
        for job, events in seen.items():
            assert [e["eventType"] for e in events] == ["START", "RUNNING", "COMPLETE"], job
            assert len({e["run"]["runId"] for e in events}) == 1
            for event in events:
                inputs = [(d["namespace"], d["name"]) for d in event.get("inputs") or []]
                outputs = [(d["namespace"], d["name"]) for d in event.get("outputs") or []]
                assert (inputs, outputs) == jobs[job], job
                if job != "clicks":
                    assert event["run"]["facets"]["parent"]["run"]["runId"] in parent_runs
        # Column lineage rides on the outputs of every event of the archive job.
        for event in seen["clicks.default_catalog.default_database.payment_archive"]:
            fields = event["outputs"][0]["facets"]["columnLineage"]["fields"]
            assert fields["amount"]["inputFields"] == [
                {
                    "namespace": "kafka://kafka-1.prod:9092",
                    "name": "payments",
                    "field": "amount",
                    "transformations": [{"type": "DIRECT", "subtype": "IDENTITY", "masking": False}],
                }
            ]


def test_broken_sql_with_a_secret_is_abandoned_quietly(run):
    secret = "S3cr3t-pw-never-shown"
    sql = run.home.parent / "broken.sql"
    sql.write_text(
        "CREATE TABLE s (id INT) WITH ('connector' = 'jdbc', 'url' = 'jdbc:mysql://db/x', "
        f"'table-name' = 't', 'password' = '{secret}');\nINSERT INTO s SELECT no_such_column FROM s;\n"
    )
    with GravitinoTestServer() as server:
        run("settings", "set", "lineage.address", server.address)
        submitted = run(
            "submit",
            "--app-id",
            "a",
            "--job-name",
            "j",
            "--flink-version",
            VERSION,
            "--sql-file",
            str(sql),
            "--lineage-enable",
        )
        wait_jobs_done(run.home)
        failed = run("state", "--app-id", "a", "--state", "FAILED", "--error", "no")
        assert server.events == []
        log = (run.home / "compile-service.log").read_text()
        assert "no lineage for a" in log and secret not in log
        for result in (submitted, failed):
            assert secret.encode() not in result.stdout + result.stderr


def test_listener_gate_matches_this_versions_flink_dist(provisioned):
    jars = list(provisioned.lib.glob("flink-dist-*.jar"))
    assert jars, "flink-dist jar of the provisioned version not found"
    with zipfile.ZipFile(jars[0]) as archive:
        knows = listener_conf.FLINK_LISTENER_OPTION.encode() in archive.read(
            "org/apache/flink/configuration/DeploymentOptions.class"
        )
    assert listener_conf.flink_knows_listener_option(provisioned.flink.version) == knows
