"""A cold ``extract`` (no warm planner) starts its planner on a thread while the command imports
and reads (planner.head_start), then answers as before; whatever the script, the JVM ends with
the command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from marked_jvms import marked_jvms, wait_until

from planlineage.planner.head_start import HeadStart

ROOT = Path(__file__).resolve().parents[2]
VERSION = os.environ.get("PLANLINEAGE_TEST_FLINK", "1.20")
#: A heap cap no other JVM of the test run uses: its command line finds this test's planners.
MARK_HEAP = "777m"


def _none_left(timeout: float = 10.0) -> bool:
    return wait_until(lambda: not marked_jvms(MARK_HEAP), timeout)


def _extract(tmp_path, script: str, *args: str) -> subprocess.CompletedProcess:
    path = tmp_path / "job.sql"
    path.write_text(script)
    env = dict(
        os.environ,
        PLANLINEAGE_PLANNER_HEAP=MARK_HEAP,
        PLANLINEAGE_PLANNER_DIR=str(tmp_path / "no-warm-planner"),  # none answers here
    )
    command = [sys.executable, "-m", "planlineage", "extract", str(path), "--format", "json", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)


def test_a_cold_extract_answers_and_its_jvm_ends_with_it(provisioned, tmp_path):
    done = _extract(tmp_path, (ROOT / "examples" / "cdc_pipeline.sql").read_text(), "--flink-version", VERSION)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["sinks"]
    assert _none_left()


@pytest.mark.parametrize(
    "script, code",
    [
        ("CREATE TABLE t (id INT) WITH ('connector' = 'datagen');\nSELECT id FROM t;\n", 0),  # no sink
        ("CREATE TABLE t (id INT) WITH ('connector' = 'datagen');\nINSERT INTO nowhere SELECT id FROM t;\n", 2),
        ("INSERT INTO t VALUES ('unterminated);\n", 2),  # refused before any compile
    ],
)
def test_a_script_that_compiles_nothing_or_fails_leaves_no_jvm(provisioned, tmp_path, script, code):
    done = _extract(tmp_path, script, "--flink-version", VERSION)
    assert done.returncode == code, done.stderr
    assert _none_left()


def test_a_head_start_closed_before_its_jvm_is_up_stops_it_once_up(provisioned, monkeypatch):
    monkeypatch.setenv("PLANLINEAGE_PLANNER_HEAP", MARK_HEAP)
    HeadStart(VERSION).close()  # at once: the thread is still starting the JVM
    time.sleep(0.2)
    assert _none_left(60)


def test_a_version_that_cannot_be_provisioned_is_raised_where_the_pipeline_asks(monkeypatch):
    from planlineage.planner.provision import ProvisionError

    start = HeadStart("0.9")
    with pytest.raises(ProvisionError):
        _ = start.provisioned
    with pytest.raises(ProvisionError):
        start.compile({"id": 1, "statements": []})
    start.close()
