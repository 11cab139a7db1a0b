"""Real-planner tests: one Flink version per run (tox env `flink115` ... `flink23`), one JVM per module."""

import os

import pytest

from planlineage.planner.compiler import Planner
from planlineage.planner.provision import ensure

VERSION = os.environ.get("PLANLINEAGE_TEST_FLINK", "1.20")


@pytest.fixture(scope="module")
def provisioned():
    return ensure(VERSION)


@pytest.fixture(scope="module")
def planner(provisioned):
    with Planner(provisioned) as running:
        yield running
