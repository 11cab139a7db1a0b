"""A warm `extract` through the CLI imports the pipeline and nothing of the event side."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from planlineage.planner import warm

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from command_imports import imported_by

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture
def running_worker(tmp_path, monkeypatch, provisioned):
    folder = Path("/tmp") / f"pl-imports-{os.getpid()}-{tmp_path.name[-12:]}"
    monkeypatch.setenv(warm.PLANNER_DIR_ENV, str(folder))
    warm.start(provisioned.flink.minor, warm.Limits(), idle_seconds=300)
    yield provisioned.flink.minor
    warm.stop()
    for leftover in folder.glob("*"):
        leftover.unlink()
    folder.rmdir()


def test_warm_extract_imports_no_event_models_nor_graph_library(running_worker, tmp_path):
    found = imported_by(
        ["extract", str(ROOT / "examples" / "cdc_pipeline.sql"), "--flink-version", running_worker, "--format", "json"],
        env=dict(os.environ),
    )
    assert found["code"] == 0
    assert not set(found["top"]) & {"openlineage", "httpx", "httpcore", "networkx"}
    # No column analysis (only --columns loads it) and no graph rendering (only --format dot).
    assert not [m for m in found["planlineage"] if m.startswith("planlineage.graph")]
    assert "planlineage.planner.columns" not in found["planlineage"]
    (status,) = warm.status()
    assert status["jobs"] == 1  # answered by the warm planner, not a cold child


def test_warm_extract_with_columns_still_answers(running_worker):
    found = imported_by(
        ["extract", str(ROOT / "examples" / "cdc_pipeline.sql"), "--flink-version", running_worker, "--columns"],
        env=dict(os.environ),
    )
    assert found["code"] == 0 and "planlineage.planner.columns" in found["planlineage"]
