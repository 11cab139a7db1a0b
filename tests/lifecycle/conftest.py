"""Fixtures of the lifecycle CLI tests: a private PLANLINEAGE_HOME and flink cache, the test
server, a CLI runner whose compile service compiles with the recorded planner (no JVM)."""

from __future__ import annotations

import os
import shutil

import pytest
from lifecycle_helpers import Cli


@pytest.fixture(autouse=True)
def private_home(clean_env, tmp_path, monkeypatch):
    """Every test gets its own PLANLINEAGE_HOME (tests/conftest.py) and an empty flink cache."""
    monkeypatch.setenv("PLANLINEAGE_FLINK_CACHE", str(tmp_path / "flink-cache"))
    return clean_env


@pytest.fixture
def cli(private_home, tmp_path):
    runner = Cli(private_home, tmp_path)
    yield runner
    for pid in runner.workers():  # never leave a worker of ours behind
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    runner.planner.release()  # a held compile of a still-live planner ends (its service is gone)
    shutil.rmtree(runner.env["PLANLINEAGE_PLANNER_DIR"], ignore_errors=True)
