"""Lineage documents built by hand for the emitter tests."""

from __future__ import annotations

from planlineage.document import Column, Dataset, JobLineage, SinkLineage, Symlink, TableLineage


def kafka(topic: str) -> Dataset:
    return Dataset(namespace="kafka://broker:9092", name=topic)


def hive_table(db: str, table: str) -> Dataset:
    return Dataset(
        namespace="hdfs://namenode:8020",
        name=f"/warehouse/{db}.db/{table}",
        symlinks=[Symlink(namespace="hive://metastore:9083", name=f"{db}.{table}")],
    )


COLS = [Column(name="id", type="BIGINT"), Column(name="amount", type="DECIMAL(10, 2)")]


def table(name: str, *datasets: Dataset, connector: str = "kafka") -> TableLineage:
    return TableLineage(table=name, connector=connector, datasets=list(datasets), schema=COLS)


def sink(name: str, datasets: list[Dataset], inputs: list[TableLineage]) -> SinkLineage:
    return SinkLineage(table=name, connector="filesystem", datasets=datasets, schema=COLS, inputs=inputs)


def single_sink_lineage(mode: str = "streaming") -> JobLineage:
    return JobLineage(
        flink_version="1.19.1",
        runtime_mode=mode,
        sinks=[
            sink(
                "hive.sales.orders_clean",
                [hive_table("sales", "orders_clean")],
                [table("default_catalog.default_database.orders", kafka("orders"))],
            )
        ],
    )


def two_sink_lineage(mode: str = "streaming") -> JobLineage:
    orders = table("default_catalog.default_database.orders", kafka("orders"))
    payments = table("default_catalog.default_database.payments", kafka("payments"))
    return JobLineage(
        flink_version="1.19.1",
        runtime_mode=mode,
        sinks=[
            sink("hive.sales.orders_clean", [hive_table("sales", "orders_clean")], [orders]),
            sink(
                "hive.sales.payments_by_order",
                [hive_table("sales", "payments_by_order")],
                [orders, payments],
            ),
        ],
    )
