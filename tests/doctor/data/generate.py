"""Writes the doctor's multi-producer corpus (run once; the output files are committed).

    python tests/doctor/data/generate.py

Each producer's naming is taken from its own code and tests (read with the search tools):

- openlineage-spark (openlineage-java's JdbcDatasetUtils / FilesystemDatasetUtils): `postgres://host:5432`
  + `db.schema.table`, `s3a://` paths as `s3://bucket` + key, Hive tables as their HDFS location with a
  TABLE symlink `hive://metastore:9083` + `db.table`, Kafka as `kafka://<first bootstrap server>` + topic.
- openlineage-flink: Kafka `kafka://<first entry of properties.bootstrap.servers>` + topic.
- apache-airflow-providers-openlineage: `postgres://{host}:{port}` with the connection's host as typed and
  the default port added; S3 as `s3://bucket` + key (a prefix keeps its trailing slash); Snowflake as
  `snowflake://account` + `DB.SCHEMA.TABLE` as written in the task's SQL.
- openlineage-dbt (integration/common dbt processor, `extract_namespace`): `postgres://{host}:{port}` and
  `snowflake://{account}` from profiles.yml as typed, names `database.schema.identifier`.
- planlineage: the emitter's events (TABLE symlinks named after the Flink table, `sql` job facet).
- Gravitino log sink: each RunEvent as the message of a log4j line, enums lower-cased.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
SPARK = "https://github.com/OpenLineage/OpenLineage/tree/1.30.0/integration/spark"
FLINK = "https://github.com/OpenLineage/OpenLineage/tree/1.30.0/integration/flink"
AIRFLOW = "https://github.com/apache/airflow/tree/providers-openlineage/2.1.0"
DBT = "https://github.com/OpenLineage/OpenLineage/tree/1.30.0/integration/dbt"
PLANLINEAGE = "https://github.com/planlineage/planlineage"
PYTHON_CLIENT = "https://github.com/OpenLineage/OpenLineage/tree/1.30.0/client/python"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"


def ds(namespace, name, symlinks=(), schema=None, producer=SPARK):
    facets = {}
    if symlinks:
        facets["symlinks"] = {
            "_producer": producer,
            "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/SymlinksDatasetFacet.json",
            "identifiers": [{"namespace": n, "name": m, "type": t} for n, m, t in symlinks],
        }
    if schema:
        facets["schema"] = {
            "_producer": producer,
            "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json",
            "fields": [{"name": c, "type": t} for c, t in schema],
        }
    return {"namespace": namespace, "name": name, "facets": facets}


def event(producer, job_ns, job, inputs, outputs, event_type="COMPLETE", sql=None, integration="SPARK"):
    job_facets = {
        "jobType": {
            "_producer": producer,
            "_schemaURL": "https://openlineage.io/spec/facets/2-0-3/JobTypeJobFacet.json",
            "processingType": "STREAMING" if integration == "FLINK" else "BATCH",
            "integration": integration,
            "jobType": "JOB" if integration != "DBT" else "MODEL",
        }
    }
    if sql:
        job_facets["sql"] = {"_producer": producer, "query": sql}
    return {
        "eventType": event_type,
        "eventTime": "2026-11-30T10:15:02.123Z",
        "producer": producer,
        "schemaURL": SCHEMA_URL,
        "run": {"runId": str(uuid.uuid5(uuid.NAMESPACE_URL, producer + job + event_type)), "facets": {}},
        "job": {"namespace": job_ns, "name": job, "facets": job_facets},
        "inputs": inputs,
        "outputs": outputs,
    }


ORDERS_SQL = (
    "CREATE TABLE orders (id BIGINT, customer_id BIGINT, amount DECIMAL(10, 2)) WITH ('connector' = 'kafka', "
    "'topic' = 'orders', 'properties.bootstrap.servers' = 'kafka-1.prod:9092,kafka-2.prod:9092', 'format' = 'json');\n"
    "CREATE TABLE enriched_orders (id BIGINT, customer STRING, amount DECIMAL(10, 2)) WITH ('connector' = 'jdbc', "
    "'url' = 'jdbc:postgresql://warehouse.prod:5432/analytics', 'table-name' = 'enriched_orders', "
    "'password' = '******');\n"
    "INSERT INTO enriched_orders SELECT o.id, c.name, o.amount FROM orders o JOIN customers c ON o.customer_id = c.id;"
)


def planlineage_events():
    table = "default_catalog.default_database."
    return [
        event(
            PLANLINEAGE,
            "planlineage",
            "orders-enrichment",
            [
                ds(
                    "kafka://kafka-1.prod:9092",
                    "orders",
                    [("kafka://kafka-1.prod:9092", table + "orders", "TABLE")],
                    [("id", "BIGINT"), ("customer_id", "BIGINT"), ("amount", "DECIMAL(10, 2)")],
                    PLANLINEAGE,
                ),
                ds(
                    "mysql://mysql.prod:3306",
                    "crm.customers",
                    [("mysql://mysql.prod:3306", table + "customers", "TABLE")],
                    producer=PLANLINEAGE,
                ),
            ],
            [
                ds(
                    "postgres://warehouse.prod:5432",
                    "analytics.enriched_orders",
                    [("postgres://warehouse.prod:5432", table + "enriched_orders", "TABLE")],
                    [("id", "BIGINT"), ("customer", "STRING"), ("amount", "DECIMAL(10, 2)")],
                    PLANLINEAGE,
                )
            ],
            "RUNNING",
            ORDERS_SQL,
            "FLINK",
        ),
        # a Flink table of a Gravitino JDBC catalog (Gravitino's Flink connector): planlineage names the
        # physical table, its TABLE symlink the Flink table `catalog.database.table`
        event(
            PLANLINEAGE,
            "planlineage",
            "refunds-sync",
            [ds("kafka://kafka-1.prod:9092", "refunds", producer=PLANLINEAGE)],
            [
                ds(
                    "postgres://warehouse.prod:5432",
                    "analytics.public.refunds",
                    [("postgres://warehouse.prod:5432", "pg_catalog.public.refunds", "TABLE")],
                    producer=PLANLINEAGE,
                )
            ],
            "RUNNING",
            None,
            "FLINK",
        ),
        # a Gravitino-profile deployment of planlineage: logical name, physical LOCATION symlink
        event(
            PLANLINEAGE,
            "prod_metalake",
            "payments-sync",
            [ds("kafka://kafka-1.prod:9092", "payments", producer=PLANLINEAGE)],
            [
                ds(
                    "prod_metalake",
                    "pg_catalog.public.payments",
                    [("postgres://warehouse.prod:5432", "analytics.public.payments", "LOCATION")],
                    producer=PLANLINEAGE,
                )
            ],
            "START",
            None,
            "FLINK",
        ),
    ]


def spark_events():
    return [
        event(
            SPARK,
            "spark_jobs",
            "orders_report.execute_save_into_data_source_command",
            [
                ds("postgres://warehouse.prod:5432", "analytics.public.enriched_orders"),
                ds("mysql://mysql.prod:3306", "crm.customers"),
            ],
            [ds("s3://datalake", "reports/orders")],
        ),
        event(
            SPARK,
            "spark_jobs",
            "orders_mirror.execute_insert_into_hive_table",
            [ds("kafka://kafka-2.prod:9092", "orders")],
            [
                ds(
                    "hdfs://namenode:8020",
                    "/user/hive/warehouse/sales.db/orders_mirror",
                    [("hive://metastore:9083", "sales.orders_mirror", "TABLE")],
                )
            ],
        ),
        event(
            SPARK,
            "spark_jobs",
            "payments_audit.execute_save_into_data_source_command",
            [ds("postgres://warehouse.prod:5432", "analytics.public.payments")],
            [ds("s3://datalake", "audit/payments")],
        ),
        # Gravitino's OpenLineage Spark plugin: metalake + catalog.schema.table, no symlink
        event(
            SPARK,
            "spark_jobs",
            "refunds_report.execute_save_into_data_source_command",
            [ds("prod_metalake", "pg_catalog.public.refunds")],
            [ds("prod_metalake", "pg_catalog.public.refunds_daily")],
        ),
        # non-splits: another host, another table, another bucket
        event(
            SPARK,
            "spark_jobs",
            "staging_copy.execute_save_into_data_source_command",
            [
                ds("postgres://warehouse.staging:5432", "analytics.public.enriched_orders"),
                ds("postgres://warehouse.prod:5432", "analytics.public.orders_archive"),
            ],
            [ds("s3://datalake-staging", "reports/orders")],
        ),
    ]


def flink_events():
    return [
        event(
            FLINK,
            "flink_jobs",
            "clickstream-sessionizer",
            [ds("kafka://kafka-1.staging:9092", "orders"), ds("kafka://kafka-1.prod:9092", "Orders")],
            [ds("kafka://kafka-1.prod:9092", "sessions")],
            "RUNNING",
            None,
            "FLINK",
        ),
    ]


def airflow_events():
    return [
        event(
            AIRFLOW,
            "airflow",
            "orders_dag.load_orders",
            [ds("s3://datalake", "reports/orders/")],
            [ds("postgres://Warehouse.Prod:5432", "analytics.public.orders_summary")],
            integration="AIRFLOW",
        ),
        event(
            AIRFLOW,
            "airflow",
            "finance_dag.snowflake_load",
            [ds("postgres://warehouse.prod:5432", "analytics.public.orders_summary")],
            [ds("snowflake://xy12345.eu-west-1", "sales.public.orders")],
            integration="AIRFLOW",
        ),
        event(
            AIRFLOW,
            "airflow",
            "crm_dag.copy_customers",
            [ds("mysql://mysql.prod:3306", "crm.Customers")],
            [ds("mysql://mysql.prod:3306", "crm.customers_copy")],
            integration="AIRFLOW",
        ),
    ]


def dbt_events():
    return [
        event(
            DBT,
            "dbt_analytics",
            "analytics.daily_revenue",
            [ds("postgres://warehouse.prod:5432", "analytics.public.enriched_orders")],
            [ds("postgres://warehouse.prod:5432", "analytics.public.daily_revenue")],
            integration="DBT",
        ),
        event(
            DBT,
            "dbt_finance",
            "finance.orders_rollup",
            [ds("snowflake://xy12345.eu-west-1", "SALES.PUBLIC.ORDERS")],
            [ds("snowflake://xy12345.eu-west-1", "SALES.PUBLIC.ORDERS_ROLLUP")],
            integration="DBT",
        ),
    ]


def custom_events():
    """A team's own emitter on openlineage-python, spelling addresses by hand."""
    return [
        event(
            PYTHON_CLIENT,
            "reporting",
            "revenue_export",
            [
                ds("postgresql://warehouse.prod", "analytics.public.daily_revenue", producer=PYTHON_CLIENT),
                ds("s3a://datalake", "audit/payments", producer=PYTHON_CLIENT),
            ],
            [ds("file", "/srv/exports/revenue.csv", producer=PYTHON_CLIENT)],
            integration="PYTHON",
        ),
    ]


def gravitino_line(payload: dict, n: int) -> str:
    lowered = json.loads(json.dumps(payload))
    lowered["eventType"] = lowered["eventType"].lower()  # Gravitino's mapper writes enums lower-cased
    return (
        f"2026-11-30 10:15:{n:02d}.{n * 7:03d} INFO [lineage-sink-{n % 2}] "
        "[org.apache.gravitino.lineage.sink.LineageLogSink$LineageLogger.log(LineageLogSink.java:57)] - "
        + json.dumps(lowered, separators=(",", ":"))
    )


def main() -> None:
    lines = [
        "2026-11-30 10:15:00.001 INFO [main] [org.apache.gravitino.lineage.LineageService.initialize(LineageService.java:61)]"
        " - Lineage service started, sinks: [log]",
    ]
    for i, e in enumerate([*spark_events(), *airflow_events(), *flink_events()]):
        lines.append(gravitino_line(e, i + 1))
        if i == 2:
            lines.append(
                "2026-11-30 10:15:03.500 WARN [lineage-sink-1] [org.apache.gravitino.lineage.sink"
                ".LineageSinkManager.sink(LineageSinkManager.java:88)] - queue is 91% full {high watermark}"
            )
    (HERE / "gravitino_lineage.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (HERE / "planlineage_file_transport.jsonl").write_text(
        "".join(json.dumps(e) + "\n" for e in planlineage_events()), encoding="utf-8"
    )
    (HERE / "custom_emitter.jsonl").write_text("".join(json.dumps(e) + "\n" for e in custom_events()), encoding="utf-8")
    (HERE / "dbt_events.json").write_text(json.dumps(dbt_events(), indent=2) + "\n", encoding="utf-8")
    (HERE / "not_events.log").write_text(
        '2026-11-30 10:00:00 INFO starting\n{"level": "info", "msg": "no lineage here"}\n', encoding="utf-8"
    )


if __name__ == "__main__":
    main()
