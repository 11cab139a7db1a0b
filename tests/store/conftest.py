"""Fixtures of the store tests: one private PostgreSQL server per test session (tests/databases.py),
a fresh database per test, private homes, the Gravitino-compatible test server."""

from __future__ import annotations

import itertools
import os

import pytest
from databases import postgres_server

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
def private_home(clean_env, tmp_path, monkeypatch):
    """Every test gets its own PLANLINEAGE_HOME (tests/conftest.py) and an empty flink cache."""
    monkeypatch.setenv("PLANLINEAGE_FLINK_CACHE", str(tmp_path / "flink-cache"))
    return clean_env


@pytest.fixture
def store(private_home):
    """The SQLite state store of the test's private home."""
    from planlineage.store.sqlite import Store

    return Store(private_home / "state.db")
