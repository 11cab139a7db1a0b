"""Fixtures shared by every test folder. Helper modules are importable by name through pytest's
`pythonpath` (pyproject.toml): `gravitino_server` (tests/), `emitter_fixtures` (tests/emitter/),
`lifecycle_helpers` (tests/lifecycle/), `chromium` (tests/graph/), `graph_render` (bench/)."""

from __future__ import annotations

import os

import pytest
from gravitino_server import GravitinoTestServer


@pytest.fixture
def clean_env(tmp_path, monkeypatch):
    """A private PLANLINEAGE_HOME and no PLANLINEAGE_* or OPENLINEAGE_* from the outside; the home's path."""
    for name in list(os.environ):
        # OpenLineage's own configuration turns lineage on too: a machine's OPENLINEAGE_URL must
        # not reach a test that expects it off (HOME stays: the default caches live under it)
        if name.startswith(("PLANLINEAGE_", "OPENLINEAGE_")):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    monkeypatch.setenv("PLANLINEAGE_HOME", str(home))
    return home


@pytest.fixture
def server():
    """A Gravitino-compatible lineage server on 127.0.0.1 that records what it receives."""
    with GravitinoTestServer() as srv:
        yield srv
