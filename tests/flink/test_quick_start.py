"""README.md's Quick start 3, exactly as printed, with the real planner of the default version: the
examples compiled by `graph`, `doctor` and `ui` on a machine with nothing configured."""

from __future__ import annotations

import os

import pytest
from quick_start import run

from planlineage.planner.versions import DEFAULT_MINOR, minor

VERSION = os.environ.get("PLANLINEAGE_TEST_FLINK", DEFAULT_MINOR)  # as tests/flink/conftest.py reads it

pytestmark = [
    pytest.mark.flink,
    pytest.mark.skipif(
        minor(VERSION) != DEFAULT_MINOR,
        reason=f"the README's commands compile with the default Flink {DEFAULT_MINOR}, not {VERSION}",
    ),
]


def test_quick_start_3_runs_as_printed(provisioned, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLANLINEAGE_", "OPENLINEAGE_"))}
    env["PLANLINEAGE_HOME"] = str(tmp_path / "home")
    if "PLANLINEAGE_FLINK_CACHE" in os.environ:  # where this run provisioned the version
        env["PLANLINEAGE_FLINK_CACHE"] = os.environ["PLANLINEAGE_FLINK_CACHE"]

    outputs = run(tmp_path, env)

    page = (tmp_path / "lineage.html").read_text(encoding="utf-8")
    assert "5 job(s), 12 dataset(s), 0 split(s)" in outputs["graph"]
    for job in ("batch_daily_report", "cdc_pipeline", "orders-enrichment", "statement_set"):
        assert job in page and job in outputs["ui"], job
    # the tables as extract names them (README's Quick start 1)
    for dataset in ("analytics.sales.enriched_orders", "crm.customers", "postgres://warehouse.prod:5432"):
        assert dataset in page, dataset
    assert "compiled 4 scripts with Flink" in outputs["doctor"] and "0 split(s)" in outputs["doctor"]
    assert "cdc-FAKE-secret" not in page + outputs["ui"] + outputs["doctor"]
    assert not (tmp_path / "home").exists()
