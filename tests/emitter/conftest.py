"""Fixtures of the emitter tests: a private PLANLINEAGE_HOME, the test server, lineage documents."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
for folder in (TESTS, TESTS / "emitter"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from emitter_fixtures import single_sink_lineage  # noqa: E402
from gravitino_server import GravitinoTestServer  # noqa: E402

from planlineage.document import JobLineage  # noqa: E402
from planlineage.emitter.store import Store  # noqa: E402


@pytest.fixture(autouse=True)
def private_home(tmp_path, monkeypatch):
    """Every test gets its own PLANLINEAGE_HOME and no PLANLINEAGE_* from the outside."""
    import os

    for name in list(os.environ):
        if name.startswith("PLANLINEAGE_"):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    monkeypatch.setenv("PLANLINEAGE_HOME", str(home))
    return home


@pytest.fixture
def store(private_home) -> Store:
    return Store(private_home / "state.db")


@pytest.fixture
def server():
    with GravitinoTestServer() as srv:
        yield srv


@pytest.fixture
def lineage() -> JobLineage:
    return single_sink_lineage()
