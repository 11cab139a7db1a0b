"""Spark dataset naming against openlineage-spark's own test vectors (tests/data/spark-identity-vectors.json)."""

import json
from pathlib import Path

import pytest

from planlineage.spark.naming import _managed_location, table_lineage
from planlineage.spark.walk import Source, provider_name

VECTORS = json.loads((Path(__file__).parent.parent / "data" / "spark-identity-vectors.json").read_text())


def catalog_table(database, table, location, provider="parquet"):
    return Source(
        display=f"spark_catalog.{database}.{table}",
        kind="table",
        provider=provider,
        location=location,
        declared=True,
        catalog="spark_catalog",
        database=database,
        name=table,
    )


@pytest.mark.parametrize("vector", VECTORS["paths"], ids=lambda v: v["location"])
def test_paths(vector):
    source = Source(
        display=f"parquet.`{vector['location']}`", kind="path", provider="parquet", location=vector["location"]
    )
    warnings = []
    lineage = table_lineage(source, {}, None, warnings)
    assert [[d.namespace, d.name] for d in lineage.datasets] == [vector["expected"]]
    assert warnings == []


@pytest.mark.parametrize("vector", VECTORS["catalog_tables"], ids=lambda v: v["test"])
def test_catalog_tables(vector):
    source = catalog_table(vector["database"], vector["table"], vector["location"])
    lineage = table_lineage(source, vector["conf"], None, [])
    (dataset,) = lineage.datasets
    assert [dataset.namespace, dataset.name] == vector["expected"]
    if vector["symlink"] is None:
        # openlineage-spark adds none, and neither does planlineage (tests/conformance measured it).
        assert dataset.symlinks == []
    else:
        assert [[s.namespace, s.name, s.type] for s in dataset.symlinks] == [[*vector["symlink"], "TABLE"]]


@pytest.mark.parametrize("vector", VECTORS["default_locations"], ids=lambda v: v["test"])
def test_default_locations(vector):
    source = catalog_table(vector["database"], vector["table"], None)
    assert _managed_location(source, {"spark.sql.warehouse.dir": vector["warehouse"]}) == vector["expected"]


def test_spark_jdbc_read_meets_the_flink_jdbc_and_cdc_nodes():
    from planlineage.registry import resolve

    source = Source(
        display="v",
        kind="view",
        provider="jdbc",
        options={"url": "jdbc:postgresql://db.prod:5432/shop?ssl=true", "dbtable": "public.orders", "user": "u"},
        declared=True,
    )
    spark = table_lineage(source, {}, None, []).datasets[0]
    flink = resolve(
        {"connector": "jdbc", "url": "jdbc:postgresql://db.prod:5432/shop", "table-name": "public.orders"}
    ).datasets[0]
    cdc = resolve(
        {
            "connector": "postgres-cdc",
            "hostname": "db.prod",
            "port": "5432",
            "database-name": "shop",
            "schema-name": "public",
            "table-name": "orders",
        }
    ).datasets[0]
    assert (spark.namespace, spark.name) == (flink.namespace, flink.name) == (cdc.namespace, cdc.name)
    assert (spark.namespace, spark.name) == ("postgres://db.prod:5432", "shop.public.orders")


def test_unknown_data_source_warns_never_guesses():
    source = Source(display="m", kind="view", provider="mongodb", options={"uri": "mongodb://x"}, declared=True)
    warnings = []
    assert table_lineage(source, {}, None, warnings).datasets == []
    assert warnings == ["table m: no identity rule for connector 'mongodb'"]


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("org.apache.spark.sql.jdbc", "jdbc"),
        ("org.apache.spark.sql.execution.datasources.parquet", "parquet"),
        ("com.databricks.spark.csv", "csv"),
        ("DELTA", "delta"),
        (None, None),
    ],
)
def test_provider_aliases(raw, expected):
    assert provider_name(raw) == expected
