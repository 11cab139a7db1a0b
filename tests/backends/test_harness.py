"""The harness itself: an event that a producer writes to Data.Rentgen's topic, or posts to its
http2kafka, is stored and read back through the REST API; a malformed one is rejected, not stored."""

from __future__ import annotations

import time

import httpx
from rentgen_backend import dataset_identity

from planlineage.emitter.run_ids import new_run_id

PRODUCER = "https://github.com/planlineage/planlineage/tests/backends"
SCHEMA = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"


def _facet(name: str) -> dict:
    return {"_producer": PRODUCER, "_schemaURL": f"https://openlineage.io/spec/facets/1-0-0/{name}.json"}


def flink_event(event_type: str, run_id: str, job: str, source: str, sink: str) -> dict:
    """A Flink job's event as openlineage-flink shapes it: jobType JOB, a Kafka input, a JDBC output
    with column lineage."""
    return {
        "eventType": event_type,
        "eventTime": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
        "producer": PRODUCER,
        "schemaURL": SCHEMA,
        "run": {"runId": run_id, "facets": {}},
        "job": {
            "namespace": "flink-harness",
            "name": job,
            "facets": {
                "jobType": {**_facet("JobTypeJobFacet"), "processingType": "STREAMING", "integration": "FLINK",
                            "jobType": "JOB"},
                "sql": {**_facet("SQLJobFacet"), "query": f"INSERT INTO {sink} SELECT id, amount FROM {source}"},
            },
        },
        "inputs": [{"namespace": "kafka://127.0.0.1:9092", "name": source, "facets": {
            "schema": {**_facet("SchemaDatasetFacet"), "fields": [{"name": "id", "type": "BIGINT"},
                                                                   {"name": "amount", "type": "DOUBLE"}]}}}],
        "outputs": [{"namespace": "postgres://127.0.0.1:5432", "name": f"shop.public.{sink}", "facets": {
            "schema": {**_facet("SchemaDatasetFacet"), "fields": [{"name": "id", "type": "BIGINT"},
                                                                   {"name": "total", "type": "DOUBLE"}]},
            "columnLineage": {**_facet("ColumnLineageDatasetFacet"), "fields": {
                "id": {"inputFields": [{"namespace": "kafka://127.0.0.1:9092", "name": source, "field": "id"}]},
                "total": {"inputFields": [{"namespace": "kafka://127.0.0.1:9092", "name": source,
                                           "field": "amount"}]}}}}}],
    }  # fmt: skip


def test_an_event_on_the_topic_is_stored_with_its_datasets_and_column_lineage(rentgen, rentgen_api):
    run_id = new_run_id()
    rentgen.publish([
        flink_event("START", run_id, "harness_kafka_job", "harness_orders", "harness_totals"),
        flink_event("COMPLETE", run_id, "harness_kafka_job", "harness_orders", "harness_totals"),
    ])  # fmt: skip

    output = rentgen_api.wait_dataset("postgres://127.0.0.1:5432", "shop.public.harness_totals")
    source = rentgen_api.wait_dataset("kafka://127.0.0.1:9092", "harness_orders")
    job = rentgen_api.wait_job("harness_kafka_job")
    assert job["data"]["type"] == "FLINK_JOB"
    assert rentgen_api.wait_run(run_id, "SUCCEEDED")["data"]["job_id"] == job["id"]

    lineage = rentgen_api.wait(
        "column lineage of harness_totals",
        lambda: rentgen_api.dataset_lineage(output["id"]),
        lambda answer: answer["relations"].get("direct_column_lineage"),
    )
    edges = {
        (relation["from"]["id"], relation["to"]["id"], target, tuple(sorted(s["field"] for s in sources)))
        for relation in lineage["relations"]["direct_column_lineage"]
        for target, sources in relation["fields"].items()
    }
    assert (str(source["id"]), str(output["id"]), "total", ("amount",)) in edges
    assert (str(source["id"]), str(output["id"]), "id", ("id",)) in edges


def test_an_event_posted_to_http2kafka_with_a_personal_token_is_stored(rentgen, rentgen_api):
    run_id = new_run_id()
    token = rentgen.personal_token()
    event = flink_event("START", run_id, "harness_http_job", "harness_clicks", "harness_click_totals")
    posted = httpx.post(f"{rentgen.http2kafka_url}/v1/openlineage", json=event,
                        headers={"Authorization": f"Bearer {token}"}, timeout=30)  # fmt: skip
    assert posted.status_code in (200, 201, 202, 204), posted.text

    stored = rentgen_api.wait_dataset("postgres://127.0.0.1:5432", "shop.public.harness_click_totals")
    assert dataset_identity(stored) == ("postgres://127.0.0.1:5432", "shop.public.harness_click_totals")
    assert rentgen_api.wait_run(run_id, "STARTED")["data"]["status"] == "STARTED"


def test_http2kafka_refuses_an_event_without_a_token(rentgen):
    event = flink_event("START", new_run_id(), "harness_refused", "harness_a", "harness_b")
    refused = httpx.post(f"{rentgen.http2kafka_url}/v1/openlineage", json=event, timeout=30)
    assert refused.status_code == 401, refused.text


def test_a_run_id_that_is_not_a_uuid7_is_rejected_to_the_malformed_topic(rentgen, rentgen_api):
    run_id = "0b0f5b8a-3f6e-4e2a-9d7c-1f2e3d4c5b6a"  # a UUIDv4
    rentgen.publish([flink_event("START", run_id, "harness_v4_job", "harness_v4_in", "harness_v4_out")])
    rentgen_api.wait("the rejected v4 event", rentgen.malformed, lambda seen: any(run_id in line for line in seen))
    assert not [item for item in rentgen_api.jobs("harness_v4_job") if item["data"]["name"] == "harness_v4_job"]
