"""A Spark SQL app started through a watched StreamPark reaches the Gravitino-compatible server
with START and its end event, per target table, with the datasets named as openlineage-spark
names them: real PostgreSQL and MariaDB servers, the tests acting as the console row by row, and
Spark's own parser of the version under test compiling in the lifecycle's compile service.

Runs only where a Spark version is chosen (tox envs spark35 and spark40 set
PLANLINEAGE_TEST_SPARK and run this file with tests/spark), so that the unit env needs no Spark.
"""

from __future__ import annotations

import os

import lineages
import pytest
from console import SPARK_FAILED, SPARK_FINISHED, SPARK_RUNNING
from lineages import exactly_once, jobs, named_datasets, types

VERSION = os.environ.get("PLANLINEAGE_TEST_SPARK")
if not VERSION:
    pytest.skip("set PLANLINEAGE_TEST_SPARK=3.5 or 4.0 (tox envs spark35, spark40)", allow_module_level=True)

#: What `spark-submit --version` of a cluster of the line under test prints (t_spark_env.version).
CLUSTER_VERSION = {"3.5": "3.5.1", "4.0": "4.0.0"}[VERSION]
LISTENER = "--conf spark.extraListeners=io.openlineage.spark.agent.OpenLineageSparkListener"

#: lineages.NIGHTLY with its lake paths behind a StreamPark variable (resolved by the watcher).
NIGHTLY = lineages.NIGHTLY.replace("'s3a://lake/", "'${lake}/")

EXPORT = """
INSERT OVERWRITE DIRECTORY 'gs://exports/orders' USING parquet
SELECT * FROM json.`${lake}/landing/orders/`;
"""

DAILY = (("postgres://pg.prod:5432 shop.public.orders", "s3://lake raw/clicks"), ("s3://lake reporting/daily",))
CRM = (("hdfs://nn:8020 /in/accounts.csv",), ("mysql://mysql.prod:3306 crm.accounts",))


@pytest.fixture(scope="module")
def provisioned():
    """The version's venv, provisioned here (with progress) rather than under a compile."""
    from planlineage.spark.provision import ensure

    return ensure(VERSION)


def test_spark_sql_apps_through_a_watched_streampark(streampark, watch, gravitino, provisioned):
    sp = streampark("dev", spark=True)
    c = sp.console
    c.spark_env(CLUSTER_VERSION, "spark.master yarn\nspark.eventLog.enabled true")
    c.variable(100000, "lake", "s3a://lake")
    nightly = c.create_spark_app("nightly", NIGHTLY)
    export = c.create_spark_app("export", EXPORT)
    listened = c.create_spark_app("listened", NIGHTLY, properties=LISTENER)
    for app in (nightly, export, listened):
        c.spark_release(app)
    watch.once(sp.url)  # baseline: nothing runs
    for app in (nightly, export, listened):
        c.spark_start(app)
        c.spark_state(app, SPARK_RUNNING)
    result = watch.once(sp.url, "--timeout", "300", "--verbose")
    assert f"spark:{nightly} nightly: logged run, Spark {CLUSTER_VERSION}: compiling" in result.stderr
    assert f"spark:{listened} listened: not reported: its lineage comes from the OpenLineage Spark listener" in (
        result.stderr
    )
    assert "run dropped" not in result.stderr, result.stderr
    c.spark_state(nightly, SPARK_FINISHED)
    c.spark_state(export, SPARK_FAILED)
    watch.once(sp.url, "--timeout", "120")

    targets = ("streampark.nightly.spark_catalog.reporting.daily", "streampark.nightly.crm_out")
    export_target = "streampark.export.parquet.`gs://exports/orders`"
    assert jobs(gravitino) == {
        "streampark.nightly": ["START", "RUNNING", "COMPLETE"],
        targets[0]: ["START", "RUNNING", "COMPLETE"],
        targets[1]: ["START", "RUNNING", "COMPLETE"],
        "streampark.export": ["START", "RUNNING", "FAIL"],  # one target: a parent and its one SQL_JOB (e2dcf4a)
        export_target: ["START", "RUNNING", "FAIL"],
    }, watch.outputs
    assert named_datasets(gravitino, targets[0]) == {DAILY}
    assert named_datasets(gravitino, targets[1]) == {CRM}
    assert named_datasets(gravitino, export_target) == {(("s3://lake landing/orders",), ("gs://exports orders",))}
    assert named_datasets(gravitino, "streampark.export") == {((), ())}  # the parent carries none
    assert types(gravitino, "streampark.nightly") == ["START", "RUNNING", "COMPLETE"]
    for event in gravitino.events:
        engine = event["run"]["facets"]["processing_engine"]
        assert engine["name"] == "spark" and engine["version"] == provisioned.spark.version  # the env's line
    sent = "\n".join(r.body.decode("utf-8", errors="replace") for r in gravitino.requests)
    assert "FAKE-pg-pw" not in sent and "FAKE-pg-pw" not in watch.everything_written()
    exactly_once(gravitino)
