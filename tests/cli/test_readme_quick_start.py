"""README.md's Quick start 3 works on a machine with nothing but planlineage: its commands, exactly
as printed, on the examples, with the recorded planner standing in for the JVM (the real planner:
tests/flink/test_quick_start.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lifecycle_helpers import Cli
from quick_start import EXAMPLES, commands, run

#: Each example compiles to a recorded plan of a like job (tests/fixtures/plans).
RECORDED = {
    "batch_daily_report.sql": "batch",
    "cdc_pipeline.sql": "regular_join",
    "kafka_to_jdbc_enrichment.sql": "lookup_join",
    "statement_set.sql": "statement_set",
}


@pytest.fixture
def cli(clean_env, tmp_path):
    runner = Cli(clean_env, tmp_path)
    yield runner
    runner.planner.release()


def test_the_commands_are_the_scripts_route():
    assert [argv[:3] for argv in commands()] == [
        ["planlineage", "graph", "examples/"],
        ["planlineage", "doctor", "examples/"],
        ["planlineage", "ui", "examples/"],
    ]
    assert sorted(p.name for p in EXAMPLES.glob("*.sql")) == sorted(RECORDED)


def test_quick_start_3_runs_as_printed(cli):
    for name, case in RECORDED.items():
        cli.planner.record((EXAMPLES / name).read_text(encoding="utf-8"), case)

    outputs = run(cli.tmp, cli.env, timeout=120)

    page = Path(cli.tmp / "lineage.html").read_text(encoding="utf-8")
    # each job is named by its script's pipeline.name, else its file's stem
    for job in ("batch_daily_report", "cdc_pipeline", "orders-enrichment", "statement_set"):
        assert job in page and job in outputs["ui"], job
    assert "compiled 4 scripts" in outputs["doctor"] and "0 split(s)" in outputs["doctor"]
    assert "cdc-FAKE-secret" not in page + outputs["ui"]  # the example's password stays out
    assert not cli.home.exists()  # nothing configured: nothing written
