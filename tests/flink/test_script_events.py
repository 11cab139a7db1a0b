"""`extract DIR --events FILE` with the real planner: the examples' START events, which `doctor`
reads back as the same datasets it finds compiling the scripts itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from planlineage.planner.versions import DEFAULT_MINOR, minor

VERSION = os.environ.get("PLANLINEAGE_TEST_FLINK", DEFAULT_MINOR)  # as tests/flink/conftest.py reads it
EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")

pytestmark = [
    pytest.mark.flink,
    pytest.mark.skipif(minor(VERSION) != DEFAULT_MINOR, reason=f"compiles with the default Flink {DEFAULT_MINOR}"),
]


def _planlineage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-P", "-m", "planlineage", *args], env=env, capture_output=True, timeout=600)


def test_the_examples_events_read_back_as_their_scripts(provisioned, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLANLINEAGE_", "OPENLINEAGE_"))}
    env["PLANLINEAGE_HOME"] = str(tmp_path / "home")
    if "PLANLINEAGE_FLINK_CACHE" in os.environ:
        env["PLANLINEAGE_FLINK_CACHE"] = os.environ["PLANLINEAGE_FLINK_CACHE"]
    events = tmp_path / "lineage.jsonl"

    done = _planlineage(env, "extract", EXAMPLES, "--events", str(events))
    assert done.returncode == 0, done.stderr.decode()
    written = [json.loads(line) for line in events.read_text(encoding="utf-8").splitlines()]
    assert {e["job"]["name"] for e in written if "parent" not in e["run"].get("facets", {})} == {
        "batch_daily_report",
        "cdc_pipeline",
        "orders-enrichment",  # its SET 'pipeline.name'
        "statement_set",
    }
    text = events.read_text(encoding="utf-8")
    assert "cdc-FAKE-secret" not in text and '"query"' in text  # the SQL facet, redacted

    from_events = _planlineage(env, "doctor", str(events), "--format", "json")
    from_scripts = _planlineage(env, "doctor", EXAMPLES, "--format", "json")
    assert from_events.returncode == from_scripts.returncode == 0
    seen_events = _planlineage(env, "graph", str(events), "--format", "dot").stdout
    seen_scripts = _planlineage(env, "graph", EXAMPLES, "--format", "dot").stdout
    assert sorted(seen_events.decode().splitlines()) == sorted(seen_scripts.decode().splitlines())
    assert not (tmp_path / "home").exists()
