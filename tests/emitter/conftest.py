"""Fixtures of the emitter tests: a private PLANLINEAGE_HOME, the store, a lineage document."""

from __future__ import annotations

import pytest
from emitter_fixtures import single_sink_lineage

from planlineage.document import JobLineage
from planlineage.store.sqlite import Store


@pytest.fixture(autouse=True)
def private_home(clean_env):
    """Every test gets its own PLANLINEAGE_HOME and no PLANLINEAGE_* from the outside."""
    return clean_env


@pytest.fixture
def store(private_home) -> Store:
    return Store(private_home / "state.db")


@pytest.fixture
def lineage() -> JobLineage:
    return single_sink_lineage()
