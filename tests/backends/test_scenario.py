"""The user's scenario against a real lineage backend: StreamPark's Flink SQL and Spark SQL apps and
a Dinky task, watched by ``planlineage watch`` configured ONLY through OpenLineage's own
configuration (no planlineage ``lineage.*`` setting), and everything asserted through Data.Rentgen's
REST API, as a user would look: each dataset under the (namespace, name) the other producers give
it, inputs and outputs on the right jobs, column lineage, the SQL text, and run statuses from
START to COMPLETE, FAIL and ABORT; a STATEMENT SET's two sinks as two child runs (UUIDv7), each
with only its own inputs.

Three ways in, one per platform: the Kafka transport from ``OPENLINEAGE__TRANSPORT__*`` variables
(StreamPark Flink), ``OPENLINEAGE_URL`` + ``OPENLINEAGE_API_KEY`` to Data.Rentgen's http2kafka
(Dinky), and an ``openlineage.yml`` with the Kafka transport (StreamPark Spark). Real compiles:
Flink ``PLANLINEAGE_TEST_FLINK`` (2.2 by default, as conformance) and Spark
``PLANLINEAGE_TEST_SPARK`` (3.5), provisioned by the earlier tox envs into the shared caches.
Names start with ``bk_``: the backend's database is shared by the session.
"""

from __future__ import annotations

import json
import uuid

import pytest
from console import FAILED, FINISHED, RUNNING, SPARK_FAILED, SPARK_FINISHED, SPARK_RUNNING
from platforms import FLINK, DinkyDatabase, StreamParkDatabase
from rentgen_backend import RentgenClient, dataset_identity

KAFKA = "kafka://kafka-1.prod:9092"
WAREHOUSE = "postgres://pg.prod:5432"
CANCELED = 9  # StreamPark's FlinkAppStateEnum.CANCELED
SPARK_CLUSTER = {"3.5": "3.5.1", "4.0": "4.0.0"}


def kafka_table(name: str) -> str:
    return (
        f"CREATE TABLE {name} (id BIGINT, amount DOUBLE, customer STRING) WITH ('connector' = 'kafka', "
        f"'topic' = '{name}', 'properties.bootstrap.servers' = 'kafka-1.prod:9092', 'format' = 'json');\n"
    )


def jdbc_table(name: str, columns: str = "id BIGINT, total DOUBLE, customer STRING") -> str:
    return (
        f"CREATE TABLE {name} ({columns}) WITH ('connector' = 'jdbc', "
        f"'url' = 'jdbc:postgresql://pg.prod:5432/shop', 'table-name' = 'public.{name}');\n"
    )


def one_sink(source: str, sink: str) -> str:
    return (
        kafka_table(source)
        + jdbc_table(sink)
        + f"INSERT INTO {sink} SELECT id, amount * 2, UPPER(customer) FROM {source};\n"
    )


def two_sinks(prefix: str) -> str:
    a, b = f"{prefix}_src_a", f"{prefix}_src_b"
    return (
        kafka_table(a) + kafka_table(b) + jdbc_table(f"{prefix}_sink_a") + jdbc_table(f"{prefix}_sink_b")
        + "EXECUTE STATEMENT SET BEGIN\n"
        + f"INSERT INTO {prefix}_sink_a SELECT id, amount, customer FROM {a};\n"
        + f"INSERT INTO {prefix}_sink_b SELECT id, amount, customer FROM {b};\n"
        + "END;\n"
    )  # fmt: skip


def child_job(app: str, sink: str) -> str:
    """The job of one sink of a submission: ``<app>.<catalog>.<database>.<sink>`` (docs/lifecycle.md)."""
    return f"{app}.default_catalog.default_database.{sink}"


def job_named(api: RentgenClient, platform: str, name: str) -> str:
    """The name planlineage reports a platform's job under, once stored: ``<platform>.<name>``
    (history/job_names.py, ``lineage.platform-job-names``, on by default), so that a StreamPark
    app and a Dinky task of one name are two jobs in the backend."""
    names = (f"{platform}.{name}",)
    found = api.wait(
        f"job {name}", lambda: api.jobs(name), lambda items: [item for item in items if item["data"]["name"] in names]
    )
    return next(item["data"]["name"] for item in found if item["data"]["name"] in names)


def is_uuid7(value: str) -> bool:
    return uuid.UUID(value).version == 7


# -- what the backend shows ------------------------------------------------------------------------


def job_io(api: RentgenClient, job_id: str) -> tuple[set, set]:
    """A job's input and output datasets as (namespace, name), from its lineage graph."""
    graph = api.job_lineage(job_id)
    datasets = {key: dataset_identity(node) for key, node in graph["nodes"]["datasets"].items()}
    relations = graph["relations"]
    inputs = {datasets[r["from"]["id"]] for r in relations["inputs"] if r["to"]["id"] == str(job_id)}
    outputs = {datasets[r["to"]["id"]] for r in relations["outputs"] if r["from"]["id"] == str(job_id)}
    return inputs, outputs


def wait_job_io(api: RentgenClient, job_name: str, inputs: set, outputs: set) -> dict:
    """The job, once the backend shows exactly these inputs and outputs on it."""
    job = api.wait_job(job_name)
    api.wait(
        f"the inputs and outputs of {job_name}",
        lambda: job_io(api, job["id"]),
        lambda seen: seen == (inputs, outputs),
        timeout=60,
    )
    return job


def column_edges(api: RentgenClient, dataset: dict) -> set[tuple[tuple[str, str], str, tuple[str, ...]]]:
    """``(source dataset, target column, source columns)`` of the direct column lineage into ``dataset``."""
    graph = api.wait(
        f"the column lineage of {dataset['data']['name']}",
        lambda: api.dataset_lineage(dataset["id"]),
        lambda answer: answer["relations"]["direct_column_lineage"],
    )
    names = {key: dataset_identity(node) for key, node in graph["nodes"]["datasets"].items()}
    return {
        (names[r["from"]["id"]], target, tuple(sorted(source["field"] for source in sources)))
        for r in graph["relations"]["direct_column_lineage"]
        if r["to"]["id"] == str(dataset["id"])
        for target, sources in r["fields"].items()
    }


def runs_of(api: RentgenClient, job_name: str, status: str) -> list[dict]:
    """The job's runs, once its newest run has ``status``."""
    job = api.wait_job(job_name)
    return api.wait(
        f"a {status} run of {job_name}",
        lambda: api.runs(job_id=job["id"]),
        lambda runs: bool(runs) and runs[0]["data"]["status"] == status,
    )


def sql_of(api: RentgenClient, run_id: str) -> str:
    operations = api.wait(f"the operation of run {run_id}", lambda: api.operations(run_id), bool)
    return "\n".join(op["data"]["sql_query"] or "" for op in operations)


# -- StreamPark, Flink SQL: the Kafka transport from OPENLINEAGE__TRANSPORT__* ----------------------


@pytest.fixture
def kafka_variables(rentgen) -> dict[str, str]:
    return {
        "OPENLINEAGE__TRANSPORT__TYPE": "kafka",
        "OPENLINEAGE__TRANSPORT__TOPIC": rentgen.topic,
        "OPENLINEAGE__TRANSPORT__CONFIG": json.dumps({"bootstrap.servers": rentgen.bootstrap}),
    }


def test_streampark_flink_apps_reach_data_rentgen_over_kafka(
    platform_postgres, flink_planner, rentgen_api, openlineage_watch, kafka_variables
):
    sp = StreamParkDatabase(platform_postgres)
    c = sp.console
    env = c.env(f"{FLINK}.0")
    enriching = c.create_app("bk_orders_enrich", one_sink("bk_orders", "bk_orders_enriched"), env=env)
    failing = c.create_app("bk_payments_clean", one_sink("bk_payments", "bk_payments_clean"), env=env)
    cancelled = c.create_app("bk_refunds_copy", one_sink("bk_refunds", "bk_refunds_copy"), env=env)
    statement_set = c.create_app("bk_two_sinks", two_sinks("bk_ss"), env=env)
    apps = (enriching, failing, cancelled, statement_set)
    watch = openlineage_watch(kafka_variables)
    assert "OPENLINEAGE__TRANSPORT__*" in watch.settings_list()  # the transport comes from OpenLineage's variables
    watch.once(sp)  # baseline: nothing runs yet
    for app in apps:
        c.start(app)
        c.set_state(app, RUNNING)
    watch.once(sp)
    job = {app: job_named(rentgen_api, "streampark", app) for app in ("bk_orders_enrich", "bk_payments_clean",
                                                                       "bk_refunds_copy", "bk_two_sinks")}  # fmt: skip

    # START and RUNNING: the runs are open, the datasets already there under the producers' names.
    [started] = runs_of(rentgen_api, job["bk_orders_enrich"], "STARTED")
    assert is_uuid7(started["id"])
    enrich = wait_job_io(
        rentgen_api, job["bk_orders_enrich"], {(KAFKA, "bk_orders")}, {(WAREHOUSE, "shop.public.bk_orders_enriched")}
    )
    assert enrich["data"]["type"] == "FLINK_JOB"
    assert "INSERT INTO bk_orders_enriched" in sql_of(rentgen_api, started["id"])

    c.set_state(enriching, FINISHED)
    c.set_state(failing, FAILED)
    c.set_state(cancelled, CANCELED)
    c.set_state(statement_set, FINISHED)
    watch.once(sp)

    assert [run["id"] for run in runs_of(rentgen_api, job["bk_orders_enrich"], "SUCCEEDED")] == [started["id"]]
    runs_of(rentgen_api, job["bk_payments_clean"], "FAILED")
    runs_of(rentgen_api, job["bk_refunds_copy"], "KILLED")
    wait_job_io(
        rentgen_api, job["bk_payments_clean"], {(KAFKA, "bk_payments")}, {(WAREHOUSE, "shop.public.bk_payments_clean")}
    )

    output = rentgen_api.wait_dataset(WAREHOUSE, "shop.public.bk_orders_enriched")
    edges = column_edges(rentgen_api, output)
    assert ((KAFKA, "bk_orders"), "total", ("amount",)) in edges, edges
    assert ((KAFKA, "bk_orders"), "customer", ("customer",)) in edges, edges
    assert ((KAFKA, "bk_orders"), "id", ("id",)) in edges, edges

    # The STATEMENT SET: the submission's run, and one child run per sink with only its own input.
    [parent] = runs_of(rentgen_api, job["bk_two_sinks"], "SUCCEEDED")
    children = rentgen_api.wait(
        "both child runs of bk_two_sinks", lambda: rentgen_api.child_runs(parent["id"]), lambda runs: len(runs) >= 2
    )
    assert len(children) == 2 and all(is_uuid7(run["id"]) for run in children), children
    assert {run["data"]["status"] for run in children} == {"SUCCEEDED"}
    by_job = {run["job"]["name"]: run for run in children}
    assert set(by_job) == {
        child_job(job["bk_two_sinks"], "bk_ss_sink_a"),
        child_job(job["bk_two_sinks"], "bk_ss_sink_b"),
    }
    for sink, other in (("a", "b"), ("b", "a")):
        name = child_job(job["bk_two_sinks"], f"bk_ss_sink_{sink}")
        wait_job_io(rentgen_api, name, {(KAFKA, f"bk_ss_src_{sink}")}, {(WAREHOUSE, f"shop.public.bk_ss_sink_{sink}")})
        sql = sql_of(rentgen_api, by_job[name]["id"])
        assert f"INSERT INTO bk_ss_sink_{sink}" in sql and f"bk_ss_sink_{other}" not in sql, sql


# -- Dinky: OPENLINEAGE_URL + OPENLINEAGE_API_KEY to http2kafka ------------------------------------


def test_dinky_tasks_reach_data_rentgen_through_its_http_endpoint(
    platform_postgres, flink_planner, rentgen, rentgen_api, openlineage_watch
):
    token = rentgen.personal_token("dinky")
    d = DinkyDatabase(platform_postgres)
    c = d.console
    cluster = c.cluster(f"{FLINK}.0")
    finished = c.create_task("bk_dinky_clicks", one_sink("bk_clicks", "bk_click_totals"), cluster=cluster)
    cancelled = c.create_task("bk_dinky_views", one_sink("bk_views", "bk_view_totals"), cluster=cluster)
    watch = openlineage_watch(
        {
            "OPENLINEAGE_URL": rentgen.http2kafka_url,
            "OPENLINEAGE_ENDPOINT": "v1/openlineage",
            "OPENLINEAGE_API_KEY": token,
        }
    )
    watch.once(d)  # baseline
    instances = {task: c.submit(task) for task in (finished, cancelled)}
    for instance in instances.values():
        c.set_status(instance, "RUNNING")
    watch.once(d)
    clicks, views = (
        job_named(rentgen_api, "dinky", "bk_dinky_clicks"),
        job_named(rentgen_api, "dinky", "bk_dinky_views"),
    )
    runs_of(rentgen_api, clicks, "STARTED")
    c.set_status(instances[finished], "FINISHED")
    c.set_status(instances[cancelled], "CANCELED")
    watch.once(d)

    [run] = runs_of(rentgen_api, clicks, "SUCCEEDED")
    assert is_uuid7(run["id"])
    runs_of(rentgen_api, views, "KILLED")
    wait_job_io(rentgen_api, clicks, {(KAFKA, "bk_clicks")}, {(WAREHOUSE, "shop.public.bk_click_totals")})
    assert "INSERT INTO bk_click_totals" in sql_of(rentgen_api, run["id"])
    edges = column_edges(rentgen_api, rentgen_api.wait_dataset(WAREHOUSE, "shop.public.bk_click_totals"))
    assert ((KAFKA, "bk_clicks"), "total", ("amount",)) in edges, edges
    assert token not in watch.everything_written()  # the API key is a secret: in no output, log or file


# -- StreamPark, Spark SQL: the Kafka transport from ./openlineage.yml ------------------------------

#: Two targets: the app's run, and one child run per target (SQL_JOB under APPLICATION, as openlineage-spark).
#: The sources declare their columns: a target fed by an undeclared one has no column lineage.
SPARK_DAILY = """
CREATE TEMPORARY VIEW bk_orders_src (id BIGINT, amount DOUBLE) USING jdbc
OPTIONS (url 'jdbc:postgresql://pg.prod:5432/shop', dbtable 'public.bk_spark_orders', user 'etl', password 'FAKE-bk-spark-pw');
CREATE TEMPORARY VIEW bk_clicks_src (order_id BIGINT, url STRING) USING parquet OPTIONS (path 's3a://lake/raw/bk_clicks/');
CREATE TABLE bk_reporting.daily (id BIGINT, n BIGINT) USING parquet LOCATION 's3a://lake/reporting/bk_daily';
CREATE TEMPORARY VIEW bk_crm_out USING jdbc OPTIONS (url 'jdbc:mysql://mysql.prod:3306/crm', dbtable 'crm.bk_accounts');
INSERT INTO bk_reporting.daily SELECT o.id, count(*) FROM bk_orders_src o JOIN bk_clicks_src c ON c.order_id = o.id GROUP BY o.id;
INSERT INTO bk_crm_out SELECT id, name FROM csv.`hdfs://nn:8020/in/bk_accounts.csv`;
"""
#: One target: the app's own job carries it.
SPARK_EXPORT = """
INSERT OVERWRITE DIRECTORY 'gs://exports/bk_orders' USING parquet
SELECT * FROM json.`s3a://lake/landing/bk_orders/`;
"""


def test_streampark_spark_sql_apps_reach_data_rentgen_configured_by_openlineage_yml(
    platform_postgres, spark_provisioned, rentgen, rentgen_api, openlineage_watch
):
    sp = StreamParkDatabase(platform_postgres)
    c = sp.console
    c.spark_env(SPARK_CLUSTER[spark_provisioned.spark.minor], "spark.master yarn")
    daily = c.create_spark_app("bk_spark_daily", SPARK_DAILY)
    export = c.create_spark_app("bk_spark_export", SPARK_EXPORT)
    watch = openlineage_watch()
    watch.write_openlineage_yml(
        f"transport:\n  type: kafka\n  topic: {rentgen.topic}\n  config:\n"
        f'    bootstrap.servers: "{rentgen.bootstrap}"\n'
    )
    for app in (daily, export):
        c.spark_release(app)
    watch.once(sp)  # baseline
    for app in (daily, export):
        c.spark_start(app)
        c.spark_state(app, SPARK_RUNNING)
    watch.once(sp)
    daily_job = job_named(rentgen_api, "streampark", "bk_spark_daily")
    runs_of(rentgen_api, daily_job, "STARTED")
    c.spark_state(daily, SPARK_FINISHED)
    c.spark_state(export, SPARK_FAILED)
    watch.once(sp)

    [run] = runs_of(rentgen_api, daily_job, "SUCCEEDED")
    assert is_uuid7(run["id"])
    orders, clicks = (WAREHOUSE, "shop.public.bk_spark_orders"), ("s3://lake", "raw/bk_clicks")
    daily_out = ("s3://lake", "reporting/bk_daily")
    # Data.Rentgen keeps a Spark SQL_JOB as an operation of its application's run: the inputs and
    # outputs of both targets are on the app's job, each target's on its own operation.
    crm = (("hdfs://nn:8020", "/in/bk_accounts.csv"), ("mysql://mysql.prod:3306", "crm.bk_accounts"))
    wait_job_io(rentgen_api, daily_job, {orders, clicks, crm[0]}, {daily_out, crm[1]})
    operations = rentgen_api.wait(
        "both operations of bk_spark_daily", lambda: rentgen_api.operations(run["id"]), lambda ops: len(ops) >= 2
    )
    statements = sorted(op["data"]["sql_query"] or "" for op in operations)
    assert len(statements) == 2 and "INSERT INTO bk_crm_out" in statements[0], statements
    assert "INSERT INTO bk_reporting.daily" in statements[1] and "bk_crm_out" not in statements[1], statements
    edges = column_edges(rentgen_api, rentgen_api.wait_dataset(*daily_out))
    assert (orders, "id", ("id",)) in edges, edges
    assert "FAKE-bk-spark-pw" not in json.dumps(operations)
    assert "FAKE-bk-spark-pw" not in watch.everything_written()

    # One target: the app's own job.
    export_job = job_named(rentgen_api, "streampark", "bk_spark_export")
    runs_of(rentgen_api, export_job, "FAILED")
    wait_job_io(rentgen_api, export_job, {("s3://lake", "landing/bk_orders")}, {("gs://exports", "bk_orders")})
