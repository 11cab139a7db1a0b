"""Real-planner tests: one Flink version per run (tox env `flink115` ... `flink23`), one JVM per module."""

import os

import pytest

from planlineage.planner.compiler import Planner
from planlineage.planner.provision import ensure

VERSION = os.environ.get("PLANLINEAGE_TEST_FLINK", "1.20")
#: ``PLANLINEAGE_FLINK_TESTS=sample`` (what tox sets for the versions between the oldest, the
#: default and the newest, so that CI stays under an hour): only the modules that compile what
#: differs across versions; ``all`` (the default) every module.
SAMPLE = frozenset(
    {"test_real_planner.py", "test_stand_ins.py", "test_bench_corpus.py", "test_identity_e2e.py", "test_extract_dot.py"}
)


def pytest_collection_modifyitems(config, items):
    if os.environ.get("PLANLINEAGE_FLINK_TESTS", "all") != "sample":
        return
    dropped = [item for item in items if item.path.name not in SAMPLE]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if item.path.name in SAMPLE]


@pytest.fixture(scope="module")
def provisioned():
    return ensure(VERSION)


@pytest.fixture(scope="module")
def planner(provisioned):
    with Planner(provisioned) as running:
        yield running
