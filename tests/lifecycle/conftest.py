"""Fixtures of the lifecycle CLI tests: a private PLANLINEAGE_HOME and flink cache, the test
server, a CLI runner whose detached workers use a fake planner (no JVM)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
for folder in (TESTS, TESTS / "emitter", HERE):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from gravitino_server import GravitinoTestServer  # noqa: E402
from lifecycle_helpers import Cli  # noqa: E402


@pytest.fixture(autouse=True)
def private_home(tmp_path, monkeypatch):
    """Every test gets its own PLANLINEAGE_HOME and flink cache, and no PLANLINEAGE_* from outside."""
    for name in list(os.environ):
        if name.startswith("PLANLINEAGE_"):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    monkeypatch.setenv("PLANLINEAGE_HOME", str(home))
    monkeypatch.setenv("PLANLINEAGE_FLINK_CACHE", str(tmp_path / "flink-cache"))
    return home


@pytest.fixture
def server():
    with GravitinoTestServer() as srv:
        yield srv


@pytest.fixture
def cli(private_home, tmp_path):
    runner = Cli(private_home, tmp_path)
    yield runner
    for pid in runner.workers():  # never leave a worker of ours behind
        try:
            os.kill(pid, 9)
        except OSError:
            pass
