"""Fixtures of the store tests: one private PostgreSQL server per test session (tests/databases.py),
a fresh database per test, private homes, the Gravitino-compatible test server."""

from __future__ import annotations

import itertools
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
for folder in (TESTS, TESTS / "emitter", TESTS / "lifecycle"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from databases import postgres_server  # noqa: E402
from gravitino_server import GravitinoTestServer  # noqa: E402

_names = itertools.count()


@pytest.fixture(scope="session")
def postgres():
    with postgres_server() as server:
        yield server


@pytest.fixture
def pg_url(postgres):
    """A fresh database on the session's server; the store URL of it (with the fake password)."""
    return postgres.create_database(f"t{os.getpid()}_{next(_names)}")


@pytest.fixture(autouse=True)
def private_home(tmp_path, monkeypatch):
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
