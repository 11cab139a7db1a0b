"""The columnLineage facet on output datasets, built from a document's per-sink `columns`."""

from __future__ import annotations

import json
from pathlib import Path

from emitter_fixtures import hive_table, kafka, sink, table
from gravitino_server import validate

from planlineage.document import ColumnInput, ColumnTransformation, Dataset, JobLineage
from planlineage.emitter import events as ev
from planlineage.planner.stages import attach_columns

RUN = "01900000-0000-7000-8000-000000000001"
D = "default_catalog.default_database."
IDENTITY = ColumnTransformation(type="DIRECT", subtype="IDENTITY")
JOIN = ColumnTransformation(type="INDIRECT", subtype="JOIN")
SUM = ColumnTransformation(type="DIRECT", subtype="AGGREGATION")


def build(lineage, event_type="START"):
    return [
        ev.to_dict(e)
        for e in ev.build_events(
            lineage, job_name="orders-etl", job_namespace="planlineage", run_id=RUN, event_type=event_type
        )
    ]


def column(table_name, name, *transformations):
    return ColumnInput(table=table_name, column=name, transformations=list(transformations))


def joined_lineage():
    orders = table(D + "orders", kafka("orders"))
    customers = table(D + "customers", Dataset(namespace="mysql://db:3306", name="crm.customers"))
    out = sink(D + "enriched", [hive_table("sales", "enriched")], [orders, customers])
    out.columns = {
        "id": [column(D + "orders", "id", IDENTITY), column(D + "customers", "customer_id", JOIN)],
        "amount": [column(D + "orders", "amount", SUM)],
    }
    return JobLineage(flink_version="1.20.5", sinks=[out])


def facet_of(event, index=0):
    return event["outputs"][index]["facets"]["columnLineage"]


def test_each_output_dataset_carries_the_facet_naming_input_datasets_and_fields():
    [event] = build(joined_lineage())
    assert validate(event) is None
    facet = facet_of(event)
    assert facet["_schemaURL"].endswith("/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet")
    assert facet["_producer"] == ev.PRODUCER
    assert facet["fields"] == {
        "id": {
            "inputFields": [
                {
                    "namespace": "kafka://broker:9092",
                    "name": "orders",
                    "field": "id",
                    "transformations": [{"type": "DIRECT", "subtype": "IDENTITY", "masking": False}],
                },
                {
                    "namespace": "mysql://db:3306",
                    "name": "crm.customers",
                    "field": "customer_id",
                    "transformations": [{"type": "INDIRECT", "subtype": "JOIN", "masking": False}],
                },
            ]
        },
        "amount": {
            "inputFields": [
                {
                    "namespace": "kafka://broker:9092",
                    "name": "orders",
                    "field": "amount",
                    "transformations": [{"type": "DIRECT", "subtype": "AGGREGATION", "masking": False}],
                },
            ]
        },
    }
    # The per-field form: dataset-wide influences are already on every field.
    assert facet.get("dataset", []) == []
    # Every input field names a dataset the event lists as an input.
    inputs = {(d["namespace"], d["name"]) for d in event["inputs"]}
    assert {(f["namespace"], f["name"]) for fs in facet["fields"].values() for f in fs["inputFields"]} <= inputs


def test_every_event_type_repeats_the_facet():
    for event_type in ev.EVENT_TYPES:
        [event] = build(joined_lineage(), event_type)
        assert facet_of(event)["fields"]["amount"]["inputFields"][0]["field"] == "amount"


def test_a_table_of_several_datasets_gives_one_input_field_per_dataset():
    lineage = joined_lineage()
    lineage.sinks[0].inputs[0].datasets.append(kafka("orders-replay"))
    [event] = build(lineage)
    assert [(f["name"], f["field"]) for f in facet_of(event)["fields"]["amount"]["inputFields"]] == [
        ("orders", "amount"),
        ("orders-replay", "amount"),
    ]


def test_tables_without_datasets_are_left_out_and_so_are_fields_left_empty():
    lineage = joined_lineage()
    lineage.sinks[0].inputs[1].datasets.clear()  # customers: unknown connector, no dataset
    lineage.sinks[0].columns["region"] = [column(D + "customers", "region", IDENTITY)]
    [event] = build(lineage)
    fields = facet_of(event)["fields"]
    assert [f["name"] for f in fields["id"]["inputFields"]] == ["orders"]
    assert "region" not in fields


def test_descriptions_and_masking_are_carried_and_absent_subtypes_omitted():
    lineage = joined_lineage()
    lineage.sinks[0].columns = {
        "id": [
            column(
                D + "orders",
                "id",
                ColumnTransformation(type="DIRECT", subtype="TRANSFORMATION", masking=True),
                ColumnTransformation(type="INDIRECT", description="not analysed: stream-exec-foo"),
            )
        ]
    }
    [event] = build(lineage)
    assert facet_of(event)["fields"]["id"]["inputFields"][0]["transformations"] == [
        {"type": "DIRECT", "subtype": "TRANSFORMATION", "masking": True},
        {"type": "INDIRECT", "description": "not analysed: stream-exec-foo", "masking": False},
    ]


def test_without_columns_there_is_no_facet():
    lineage = joined_lineage()
    lineage.sinks[0].columns = None
    [event] = build(lineage)
    assert "columnLineage" not in event["outputs"][0]["facets"]
    lineage.sinks[0].columns = {"constant": []}
    [event] = build(lineage)
    assert "columnLineage" not in event["outputs"][0]["facets"]


def test_statement_set_children_carry_only_their_own_sink_columns():
    orders = table(D + "orders", kafka("orders"))
    payments = table(D + "payments", kafka("payments"))
    a = sink(D + "a", [hive_table("s", "a")], [orders])
    b = sink(D + "b", [hive_table("s", "b")], [payments])
    a.columns = {"id": [column(D + "orders", "id", IDENTITY)]}
    b.columns = {"id": [column(D + "payments", "id", IDENTITY)]}
    parent, child_a, child_b = build(JobLineage(flink_version="1.20.5", sinks=[a, b]))
    assert parent["outputs"] == []
    assert facet_of(child_a)["fields"]["id"]["inputFields"][0]["name"] == "orders"
    assert facet_of(child_b)["fields"]["id"]["inputFields"][0]["name"] == "payments"


def test_from_a_real_plan_through_the_document():
    record = json.loads((Path(__file__).parent.parent / "fixtures" / "plans" / "2.3" / "regular_join.json").read_text())
    orders, refunds = table(D + "orders", kafka("orders")), table(D + "refunds", kafka("refunds"))
    out = sink(D + "out_b", [Dataset(namespace="postgres://pg:5432", name="dw.public.out_b")], [orders, refunds])
    assert attach_columns([out], record["plan"], record["tables"]) == []
    [event] = build(JobLineage(flink_version="2.3.0", sinks=[out]))
    assert validate(event) is None
    fields = facet_of(event)["fields"]
    summary = {
        name: sorted(
            (f["name"], f["field"], t["type"], t["subtype"]) for f in spec["inputFields"] for t in f["transformations"]
        )
        for name, spec in fields.items()
    }
    assert summary == {
        "k": [
            ("orders", "order_id", "DIRECT", "IDENTITY"),
            ("orders", "order_id", "INDIRECT", "JOIN"),
            ("refunds", "order_id", "INDIRECT", "JOIN"),
        ],
        "v": [
            ("orders", "amount", "DIRECT", "TRANSFORMATION"),
            ("orders", "order_id", "INDIRECT", "JOIN"),
            ("refunds", "amount", "DIRECT", "TRANSFORMATION"),
            ("refunds", "order_id", "INDIRECT", "JOIN"),
        ],
    }
