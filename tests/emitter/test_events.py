"""Shape of the RunEvents built from a lineage document."""

from __future__ import annotations

import json
import uuid
from datetime import datetime

import pytest
from emitter_fixtures import COLS, hive_table, kafka, single_sink_lineage, sink, table, two_sink_lineage
from gravitino_server import validate

import planlineage
from planlineage.document import JobLineage
from planlineage.emitter import events as ev

RUN = "01900000-0000-7000-8000-000000000001"


def build(lineage, event_type="START", **kw):
    return [
        ev.to_dict(e)
        for e in ev.build_events(
            lineage,
            job_name=kw.pop("job_name", "orders-etl"),
            job_namespace=kw.pop("job_namespace", "planlineage"),
            run_id=kw.pop("run_id", RUN),
            event_type=event_type,
            sql=kw.pop("sql", "INSERT INTO x SELECT * FROM y"),
            **kw,
        )
    ]


def names(datasets):
    return [(d["namespace"], d["name"]) for d in datasets]


def test_single_sink_is_one_job_with_its_datasets_and_facets():
    [event] = build(single_sink_lineage(), "START")
    assert event["eventType"] == "START"
    assert event["job"] == {
        "namespace": "planlineage",
        "name": "orders-etl",
        "facets": event["job"]["facets"],
    }
    assert event["run"]["runId"] == RUN
    assert "parent" not in event["run"]["facets"]
    job_type = event["job"]["facets"]["jobType"]
    # What openlineage-flink's 2.x listener writes (OpenLineageJobExtractor): Data.Rentgen takes a
    # Flink event as lineage only with jobType JOB.
    assert (job_type["processingType"], job_type["integration"], job_type["jobType"]) == (
        "STREAMING",
        "FLINK",
        "JOB",
    )
    assert event["job"]["facets"]["sql"]["query"] == "INSERT INTO x SELECT * FROM y"
    engine = event["run"]["facets"]["processing_engine"]
    assert (engine["name"], engine["version"], engine["openlineageAdapterVersion"]) == (
        "flink",
        "1.19.1",
        planlineage.__version__,
    )
    assert "flink_job" not in event["run"]["facets"]  # no Flink JobID known
    assert names(event["inputs"]) == [("kafka://broker:9092", "orders")]
    assert names(event["outputs"]) == [("hdfs://namenode:8020", "/warehouse/sales.db/orders_clean")]
    out = event["outputs"][0]["facets"]
    assert [f["name"] for f in out["schema"]["fields"]] == [c.name for c in COLS]
    assert out["schema"]["fields"][1]["type"] == "DECIMAL(10, 2)"
    assert out["symlinks"]["identifiers"] == [
        {"namespace": "hive://metastore:9083", "name": "sales.orders_clean", "type": "TABLE"}
    ]
    assert "symlinks" not in event["inputs"][0]["facets"]
    assert event["producer"] == ev.PRODUCER
    assert event["schemaURL"].startswith("https://openlineage.io/spec/")
    assert event["schemaURL"].endswith("RunEvent")
    assert event["eventTime"].endswith("Z")
    assert datetime.fromisoformat(event["eventTime"].replace("Z", "+00:00")).utcoffset().total_seconds() == 0
    assert validate(event) is None  # what Gravitino 1.3.1+ checks


def test_batch_runtime_mode_is_batch_processing():
    [event] = build(single_sink_lineage("batch"))
    assert event["job"]["facets"]["jobType"]["processingType"] == "BATCH"


def test_multi_sink_yields_parent_plus_one_job_per_sink_with_only_its_own_datasets():
    events = build(two_sink_lineage(), "START")
    assert [e["job"]["name"] for e in events] == [
        "orders-etl",
        "orders-etl.hive.sales.orders_clean",
        "orders-etl.hive.sales.payments_by_order",
    ]
    parent, first, second = events
    assert parent["run"]["runId"] == RUN
    assert parent["inputs"] == [] and parent["outputs"] == []
    assert parent["job"]["facets"]["jobType"]["processingType"] == "STREAMING"
    assert "parent" not in parent["run"]["facets"]

    assert names(first["inputs"]) == [("kafka://broker:9092", "orders")]
    assert names(first["outputs"]) == [("hdfs://namenode:8020", "/warehouse/sales.db/orders_clean")]
    assert names(second["inputs"]) == [
        ("kafka://broker:9092", "orders"),
        ("kafka://broker:9092", "payments"),
    ]
    assert names(second["outputs"]) == [("hdfs://namenode:8020", "/warehouse/sales.db/payments_by_order")]
    for child, table_name in ((first, "hive.sales.orders_clean"), (second, "hive.sales.payments_by_order")):
        facet = child["run"]["facets"]["parent"]
        assert facet["run"]["runId"] == RUN
        assert (facet["job"]["namespace"], facet["job"]["name"]) == ("planlineage", "orders-etl")
        assert facet["root"]["run"]["runId"] == RUN
        assert child["run"]["runId"] == ev.child_run_id(RUN, table_name)
        assert uuid.UUID(child["run"]["runId"]).version == 7
        assert child["run"]["runId"] != RUN
        assert validate(child) is None
    # no N x M: the orders_clean job never mentions payments
    assert ("kafka://broker:9092", "payments") not in names(first["inputs"])


def test_child_run_ids_are_deterministic_across_events_and_calls():
    start = build(two_sink_lineage(), "START")
    later = build(two_sink_lineage(), "COMPLETE")
    assert [e["run"]["runId"] for e in start] == [e["run"]["runId"] for e in later]
    other = build(two_sink_lineage(), "START", run_id="01900000-0000-7000-8000-000000000002")
    assert {e["run"]["runId"] for e in other[1:]}.isdisjoint({e["run"]["runId"] for e in start[1:]})
    assert ev.child_run_id(RUN, "a.b.c") == ev.child_run_id(RUN, "a.b.c")


def test_every_event_of_a_run_repeats_datasets_and_job_type():
    lineage = two_sink_lineage("batch")
    runs = {t: build(lineage, t, error="boom" if t == "FAIL" else None) for t in ev.EVENT_TYPES}

    def shape(events):
        return [
            (e["job"]["name"], e["run"]["runId"], e["inputs"], e["outputs"], e["job"]["facets"]["jobType"])
            for e in events
        ]

    reference = shape(runs["START"])
    for event_type, events in runs.items():
        assert shape(events) == reference, event_type
        assert {e["eventType"] for e in events} == {event_type}


def test_fail_carries_error_message_on_every_job_and_others_do_not():
    for event in build(two_sink_lineage(), "FAIL", error="org.apache.flink.SomeException: boom"):
        facet = event["run"]["facets"]["errorMessage"]
        assert facet["message"] == "org.apache.flink.SomeException: boom"
        assert facet["programmingLanguage"] == "JAVA"
    for event in build(two_sink_lineage(), "COMPLETE", error="ignored"):
        assert "errorMessage" not in event["run"]["facets"]


def test_inputs_are_deduplicated_and_tables_without_datasets_are_not_datasets():
    orders = table("c.d.orders", kafka("orders"))
    orders_again = table("c.d.orders_view", kafka("orders"))
    datagen = table("c.d.gen", connector="datagen")  # no dataset
    lineage = JobLineage(
        flink_version="1.20.0",
        sinks=[
            sink(
                "c.d.out",
                [hive_table("sales", "a"), hive_table("sales", "b"), hive_table("sales", "a")],
                [orders, orders_again, datagen],
            ),
            sink("c.d.print", [], [orders]),  # a print sink: a job without outputs
        ],
    )
    parent, out, printer = build(lineage)
    assert names(out["inputs"]) == [("kafka://broker:9092", "orders")]
    assert names(out["outputs"]) == [
        ("hdfs://namenode:8020", "/warehouse/sales.db/a"),
        ("hdfs://namenode:8020", "/warehouse/sales.db/b"),
    ]
    assert printer["outputs"] == [] and names(printer["inputs"]) == [("kafka://broker:9092", "orders")]


def test_no_sink_is_a_single_job_without_datasets():
    [event] = build(JobLineage(flink_version="1.19.1"))
    assert event["job"]["name"] == "orders-etl" and event["inputs"] == [] and event["outputs"] == []


def test_event_time_can_be_given_and_is_utc():
    [event] = build(single_sink_lineage(), event_time="2026-01-02T03:04:05.678Z")
    assert event["eventTime"] == "2026-01-02T03:04:05.678Z"
    from datetime import timedelta, timezone

    local = datetime(2026, 1, 2, 5, 4, 5, tzinfo=timezone(timedelta(hours=2)))
    [event] = build(single_sink_lineage(), event_time=local)
    assert event["eventTime"] == "2026-01-02T03:04:05.000Z"


def test_rejects_unknown_event_type_and_bad_run_id():
    with pytest.raises(ValueError):
        build(single_sink_lineage(), "OTHER")
    with pytest.raises(ValueError):
        build(single_sink_lineage(), run_id="not-a-uuid")


def test_events_are_library_models_and_serialize_to_json():
    from openlineage.client.event_v2 import RunEvent

    built = ev.build_events(single_sink_lineage(), job_name="j", job_namespace="n", run_id=RUN, event_type="RUNNING")
    assert all(isinstance(e, RunEvent) for e in built)
    assert json.loads(ev.to_json(built[0]))["eventType"] == "RUNNING"
    assert ev.event_key(ev.to_json(built[0])) == (RUN, "j", "RUNNING")
    assert "sql" not in ev.to_dict(built[0])["job"]["facets"]  # no SQL given, no facet


def test_a_sinks_lifecycle_state_change_is_its_outputs_facet_only():
    """openlineage-spark's write visitors put lifecycleStateChange on the written dataset (CTAS:
    CREATE; RTAS, INSERT OVERWRITE, REPLACE WHERE: OVERWRITE); inputs and appends carry none."""
    created = sink("spark_catalog.mart.daily", [hive_table("mart", "daily")], [table("src", kafka("src"))])
    created.lifecycle_state_change = "CREATE"
    appended = sink("spark_catalog.mart.audit", [hive_table("mart", "audit")], [table("src", kafka("src"))])
    lineage = JobLineage(spark_version="3.5.9", runtime_mode="batch", sinks=[created, appended])
    _, daily, audit = build(lineage, "COMPLETE")
    facet = daily["outputs"][0]["facets"]["lifecycleStateChange"]
    assert facet["lifecycleStateChange"] == "CREATE"
    assert facet["_schemaURL"].endswith("LifecycleStateChangeDatasetFacet")
    assert "lifecycleStateChange" not in daily["inputs"][0]["facets"]
    assert "lifecycleStateChange" not in audit["outputs"][0]["facets"]
    assert validate(daily) is None
    # The document keeps it, and a document without one is unchanged.
    document = lineage.to_json_dict()
    assert [s.get("lifecycle_state_change") for s in document["sinks"]] == ["CREATE", None]
    assert "lifecycle_state_change" not in document["sinks"][1]
    assert JobLineage.model_validate(document) == lineage


def test_child_run_ids_are_uuid7_in_the_parents_millisecond():
    """Backends such as Data.Rentgen reject any runId but a UUIDv7: a child's is one, whose time
    is its parent's start (the parent id's 48 time bits), with v7 version and RFC 4122 variant."""
    parent = "018f2c3a-1b2c-7d4e-8f00-0123456789ab"
    ids = {ev.child_run_id(parent, t) for t in ("c.d.a", "c.d.b", "c.d.c")}
    assert len(ids) == 3
    for child in ids:
        value = uuid.UUID(child)
        assert (value.version, value.variant) == (7, uuid.RFC_4122)
        assert child[:13] == parent[:13]  # unix_ts_ms: the same 48 bits
    # Deterministic, and a different parent gives different children.
    assert ev.child_run_id(parent, "c.d.a") == ev.child_run_id(parent.upper(), "c.d.a")
    assert ev.child_run_id(RUN, "c.d.a") not in ids
    with pytest.raises(ValueError):
        ev.child_run_id("not-a-uuid", "c.d.a")


def test_a_run_started_by_an_older_release_keeps_its_uuid5_children():
    """A run whose START an older planlineage built (its stored document has no child_run_ids)
    keeps that START's uuid5 child ids on every later event: they must meet that START."""
    stored = two_sink_lineage().to_json_dict()
    assert stored["child_run_ids"] == "uuid7"  # what this release stores for a statement set
    del stored["child_run_ids"]  # ... and what an older one stored
    old = JobLineage.stored(stored)
    assert old.child_run_ids == "uuid5"
    later = build(old, "COMPLETE")
    assert [e["run"]["runId"] for e in later[1:]] == [
        str(uuid.uuid5(uuid.UUID(RUN), "hive.sales.orders_clean")),
        str(uuid.uuid5(uuid.UUID(RUN), "hive.sales.payments_by_order")),
    ]
    # A document this release stored reads back as it was written: UUIDv7 children.
    fresh = JobLineage.stored(two_sink_lineage().to_json_dict())
    assert [uuid.UUID(e["run"]["runId"]).version for e in build(fresh, "COMPLETE")] == [7, 7, 7]
    # One sink: no children, no marker in the document, nothing to keep.
    single = single_sink_lineage().to_json_dict()
    assert "child_run_ids" not in single
    assert JobLineage.stored(single).child_run_ids == "uuid7"


def test_each_job_carries_its_own_statement_as_its_sql_facet():
    """A backend reads an output's kind from the first verb of its job's SQL facet when no
    lifecycleStateChange says it (Data.Rentgen: INSERT -> APPEND, CREATE -> CREATE): each sink's
    job carries its own write, the parent of a statement set the whole script."""
    lineage = two_sink_lineage("batch")
    lineage.sinks[0].statement = "INSERT INTO orders_clean SELECT * FROM orders"
    lineage.sinks[1].statement = "INSERT OVERWRITE payments_by_order SELECT * FROM payments"
    lineage.sinks[1].lifecycle_state_change = "OVERWRITE"
    script = "CREATE TABLE orders (id BIGINT) WITH ('connector' = 'kafka');\nEXECUTE STATEMENT SET BEGIN ... END"
    parent, first, second = build(lineage, "START", sql=script)
    assert parent["job"]["facets"]["sql"]["query"] == script
    assert first["job"]["facets"]["sql"]["query"] == "INSERT INTO orders_clean SELECT * FROM orders"
    assert second["job"]["facets"]["sql"]["query"].startswith("INSERT OVERWRITE payments_by_order")
    assert first["job"]["facets"]["sql"]["dialect"] == "flink"
    assert "lifecycleStateChange" not in first["outputs"][0]["facets"]
    assert second["outputs"][0]["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "OVERWRITE"
    # A statement not known (a document of an older release): the whole script, as before.
    [event] = build(single_sink_lineage(), sql=script)
    assert event["job"]["facets"]["sql"]["query"] == script


def test_spark_jobs_are_sql_jobs_under_an_application_parent():
    """openlineage-spark: SQL_JOB for a SQL execution (SparkSQLExecutionContext), APPLICATION for
    the application around them; processing_engine name spark."""
    lineage = two_sink_lineage("batch")
    lineage.flink_version, lineage.spark_version = None, "3.5.9"
    parent, *children = build(lineage)
    assert parent["job"]["facets"]["jobType"]["jobType"] == "APPLICATION"
    assert {c["job"]["facets"]["jobType"]["jobType"] for c in children} == {"SQL_JOB"}
    assert {e["job"]["facets"]["jobType"]["integration"] for e in (parent, *children)} == {"SPARK"}
    assert parent["run"]["facets"]["processing_engine"]["name"] == "spark"
    # One target too: an APPLICATION parent and its SQL_JOB child with the parent facet, as
    # openlineage-spark sends it (Data.Rentgen's consumer fails on a SQL_JOB without a parent).
    lineage.sinks.pop()
    parent, child = build(lineage)
    assert (parent["job"]["name"], parent["run"]["runId"], parent["outputs"]) == ("orders-etl", RUN, [])
    assert parent["job"]["facets"]["jobType"]["jobType"] == "APPLICATION"
    assert child["job"]["name"] == "orders-etl.hive.sales.orders_clean"
    assert child["job"]["facets"]["jobType"]["jobType"] == "SQL_JOB"
    assert child["run"]["facets"]["parent"]["run"]["runId"] == RUN
    assert uuid.UUID(child["run"]["runId"]).version == 7 and names(child["outputs"])
    # A one-target Spark run whose START an older release built as one job keeps that layout.
    stored = lineage.to_json_dict()
    assert stored["child_run_ids"] == "uuid7"
    del stored["child_run_ids"]
    [old] = build(JobLineage.stored(stored))
    assert (old["job"]["name"], old["run"]["runId"]) == ("orders-etl", RUN) and names(old["outputs"])


def test_a_known_flink_job_id_is_the_flink_job_run_facet():
    """openlineage-flink carries the Flink JobID in the flink_job run facet (FlinkJobDetailsFacet)."""
    job_id = "a8b0c1d2e3f405162738495a6b7c8d9e"
    for event in build(two_sink_lineage(), flink_job_id=job_id):
        assert event["run"]["facets"]["flink_job"]["jobId"] == job_id
        assert validate(event) is None


def test_a_stored_run_of_an_older_release_meets_its_start_through_the_run_row():
    """The lifecycle reads a run's document back from its row (run_rows.row_record): a row an older
    planlineage wrote (its START queued or sent with uuid5 children) builds its later events with
    the same ids; a row this release wrote, with UUIDv7 children."""
    from planlineage.lifecycle import run_rows

    def row(document: dict) -> dict:
        return {
            "app_id": "app-1",
            "run_id": RUN,
            "job_name": "orders-etl",
            "namespace": "planlineage",
            "lineage": json.dumps(document),
            "sql": "INSERT INTO x SELECT 1",
            "platform_state": "RUNNING",
            "last_event": "START",
            "pending": "[]",
            "created": "2026-01-01T00:00:00.000Z",
            "updated": "2026-01-01T00:00:00.000Z",
        }

    old_document = two_sink_lineage().to_json_dict()
    del old_document["child_run_ids"]
    for document, expected in (
        (
            old_document,
            [str(uuid.uuid5(uuid.UUID(RUN), t)) for t in ("hive.sales.orders_clean", "hive.sales.payments_by_order")],
        ),
        (
            two_sink_lineage().to_json_dict(),
            [ev.child_run_id(RUN, t) for t in ("hive.sales.orders_clean", "hive.sales.payments_by_order")],
        ),
    ):
        run = run_rows.row_record(row(document))
        built = run_rows.build_events(run, run.lineage, "COMPLETE", "2026-01-01T00:01:00.000Z")
        assert [json.loads(payload)["run"]["runId"] for _, _, payload in built[1:]] == expected


def test_each_sinks_statement_is_capped_like_the_script():
    from planlineage.lifecycle.sql_facet import cap_statements

    lineage = single_sink_lineage()
    lineage.sinks[0].statement = "INSERT INTO t SELECT " + ", ".join(f"c{i}" for i in range(2000)) + " FROM s"
    cap_statements(lineage, 1024)
    [event] = build(lineage)
    query = event["job"]["facets"]["sql"]["query"]
    assert len(query.encode()) <= 1024 and "SQL truncated to 1024 of" in query
    assert query.startswith("INSERT INTO t SELECT c0")  # its first verb still types the write
