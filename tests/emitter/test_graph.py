"""What a Marquez-like backend rebuilds from our events (and other producers' events)."""

from __future__ import annotations

import uuid

import httpx
import networkx as nx
from emitter_fixtures import hive_table, kafka, single_sink_lineage, two_sink_lineage
from gravitino_server import GravitinoTestServer, MarquezGraph

from planlineage.emitter import events as ev
from planlineage.lifecycle import delivery, runs
from planlineage.settings import Settings
from planlineage.store.sqlite import Store

SPARK_PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.30.0/integration/spark"


def our_events(lineage, *event_types, job="orders-etl"):
    run_id = ev.new_run_id()
    return [
        ev.to_dict(e)
        for t in event_types
        for e in ev.build_events(lineage, job_name=job, job_namespace="planlineage", run_id=run_id, event_type=t)
    ]


def spark_dataset(dataset):
    """How openlineage-spark reports a Hive/HDFS table: location + symlink to the table name."""
    facets = {}
    if dataset.symlinks:
        facets["symlinks"] = {
            "_producer": SPARK_PRODUCER,
            "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/SymlinksDatasetFacet.json#/$defs/SymlinksDatasetFacet",
            "identifiers": [{"namespace": s.namespace, "name": s.name, "type": "TABLE"} for s in dataset.symlinks],
        }
    return {"namespace": dataset.namespace, "name": dataset.name, "facets": facets}


def spark_events(inputs, outputs, job="spark_app.execute_insert_into_hive_table"):
    run_id = str(uuid.uuid4())
    base = {
        "producer": SPARK_PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run_id, "facets": {}},
        "job": {
            "namespace": "spark",
            "name": job,
            "facets": {"jobType": {"processingType": "BATCH", "integration": "SPARK", "jobType": "SQL_JOB"}},
        },
        "inputs": [spark_dataset(d) for d in inputs],
        "outputs": [spark_dataset(d) for d in outputs],
    }
    return [
        {**base, "eventType": "START", "eventTime": "2026-01-01T00:00:00Z"},
        {**base, "eventType": "COMPLETE", "eventTime": "2026-01-01T00:01:00Z"},
    ]


def test_flink_and_spark_events_for_the_same_tables_make_one_node_per_table():
    """Our streaming job writes the table a Spark batch job reads: one connected graph."""
    with GravitinoTestServer() as srv:
        store = Store()
        settings = Settings(store, environ={"PLANLINEAGE_LINEAGE_ADDRESS": srv.address})
        runs.record_submission(store, "app-1", "orders-etl", single_sink_lineage(), "INSERT …", settings)
        runs.record_state(store, "app-1", "RUNNING")
        assert delivery.flush(store, settings).delivered == 2
        for event in spark_events([hive_table("sales", "orders_clean")], [hive_table("sales", "daily_revenue")]):
            assert httpx.post(f"{srv.address}/api/lineage", json=event).status_code == 201
        graph = MarquezGraph().apply_all(srv.events)

    g = graph.graph()
    datasets = [n for n in g if n[0] == "dataset"]
    assert sorted(datasets) == sorted(
        [
            ("dataset", "kafka://broker:9092", "orders"),
            ("dataset", "hdfs://namenode:8020", "/warehouse/sales.db/orders_clean"),
            ("dataset", "hdfs://namenode:8020", "/warehouse/sales.db/daily_revenue"),
        ]
    )
    nodes = nx.shortest_path(
        g,
        ("dataset", "kafka://broker:9092", "orders"),
        ("dataset", "hdfs://namenode:8020", "/warehouse/sales.db/daily_revenue"),
    )
    assert nodes == [
        ("dataset", "kafka://broker:9092", "orders"),
        ("job", "planlineage", "orders-etl"),
        ("dataset", "hdfs://namenode:8020", "/warehouse/sales.db/orders_clean"),
        ("job", "spark", "spark_app.execute_insert_into_hive_table"),
        ("dataset", "hdfs://namenode:8020", "/warehouse/sales.db/daily_revenue"),
    ]


def test_streaming_edges_appear_at_start():
    graph = MarquezGraph().apply_all(our_events(single_sink_lineage("streaming"), "START"))
    assert graph.edges() == {
        (("kafka://broker:9092", "orders"), "orders-etl", ("hdfs://namenode:8020", "/warehouse/sales.db/orders_clean"))
    }


def test_batch_edges_appear_only_on_terminal_events():
    start_only = MarquezGraph().apply_all(our_events(single_sink_lineage("batch"), "START", "RUNNING"))
    assert start_only.edges() == set()
    completed = MarquezGraph().apply_all(our_events(single_sink_lineage("batch"), "START", "RUNNING", "COMPLETE"))
    assert len(completed.edges()) == 1


def test_an_empty_terminal_event_would_wipe_edges_ours_never_do():
    events = our_events(single_sink_lineage("batch"), "START", "COMPLETE")
    graph = MarquezGraph().apply_all(events)
    assert len(graph.edges()) == 1
    empty = {**events[-1], "eventType": "FAIL", "inputs": [], "outputs": []}
    empty["job"] = {**empty["job"], "facets": {"jobType": {"processingType": "BATCH"}}}
    assert graph.apply(empty) is None and graph.edges() == set()  # the rule the emitter guards against
    streaming = MarquezGraph().apply_all(our_events(single_sink_lineage("streaming"), "START"))
    streaming.apply({**empty, "job": {**empty["job"], "facets": {"jobType": {"processingType": "STREAMING"}}}})
    assert len(streaming.edges()) == 1
    # our own terminal events keep the datasets, so the edges survive every state
    for terminal in ("COMPLETE", "FAIL", "ABORT"):
        graph = MarquezGraph().apply_all(our_events(two_sink_lineage("batch"), "START", "RUNNING", terminal))
        assert len(graph.edges()) == 3


def test_multi_sink_job_draws_only_per_sink_edges_not_n_by_m():
    graph = MarquezGraph().apply_all(our_events(two_sink_lineage(), "START", "RUNNING", "COMPLETE"))
    orders, payments = ("kafka://broker:9092", "orders"), ("kafka://broker:9092", "payments")
    clean = ("hdfs://namenode:8020", "/warehouse/sales.db/orders_clean")
    by_order = ("hdfs://namenode:8020", "/warehouse/sales.db/payments_by_order")
    assert graph.edges() == {
        (orders, "orders-etl.hive.sales.orders_clean", clean),
        (orders, "orders-etl.hive.sales.payments_by_order", by_order),
        (payments, "orders-etl.hive.sales.payments_by_order", by_order),
    }
    assert (payments, "orders-etl", clean) not in graph.edges()
    parent = graph.jobs[("planlineage", "orders-etl")]
    assert parent == {"inputs": set(), "outputs": set()}
    assert len(graph.datasets) == 4 and kafka("orders").name == "orders"
