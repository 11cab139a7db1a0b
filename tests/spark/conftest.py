"""Live Spark tests: one Spark version per run (tox env `spark35`, `spark40`), one JVM per module.

They run only where a version is chosen with PLANLINEAGE_TEST_SPARK (the tox envs set it), so
that a plain `pytest` does not provision a ~400 MB PySpark as a side effect.
"""

import os

import pytest

VERSION = os.environ.get("PLANLINEAGE_TEST_SPARK")

if not VERSION:
    pytest.skip("set PLANLINEAGE_TEST_SPARK=3.5 or 4.0 (tox envs spark35, spark40)", allow_module_level=True)


@pytest.fixture(scope="module")
def provisioned():
    from planlineage.spark.provision import ensure

    return ensure(VERSION)


@pytest.fixture(scope="module")
def parser(provisioned):
    from planlineage.spark.client import SparkParser

    with SparkParser(provisioned) as running:
        yield running
