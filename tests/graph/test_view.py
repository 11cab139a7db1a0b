"""The page's data without a browser: one event once across sources, column lineage merged over
producers, routed edges clear of STATEMENT SET boxes' layers, stable node ids."""

from __future__ import annotations

import json

from planlineage.graph import build
from planlineage.graph.model import from_events
from planlineage.graph.view import node_id, view

RUN = "01890000-0000-7000-8000-00000000abcd"


def _event(
    state: str, when: str, producer: str = "https://github.com/planlineage/planlineage", error: str | None = None
):
    facets = {"errorMessage": {"message": error, "programmingLanguage": "JAVA"}} if error else {}
    return {
        "eventType": state, "eventTime": when, "producer": producer, "run": {"runId": RUN, "facets": facets},
        "job": {"namespace": "planlineage", "name": "orders-sync"},
        "inputs": [{"namespace": "kafka://k:9092", "name": "orders"}], "outputs": [{"namespace": "s3://lake", "name": "orders"}],
    }  # fmt: skip


def test_one_run_state_from_state_and_log_is_listed_once(tmp_path):
    # the state store's event and Gravitino's log line of the same FAIL: times a fraction apart
    state_file = tmp_path / "state.jsonl"
    log_file = tmp_path / "gravitino_lineage.log"
    state_file.write_text(
        json.dumps(_event("START", "2026-12-01T10:00:00.120Z"))
        + "\n"
        + json.dumps(_event("FAIL", "2026-12-01T10:05:00.000Z"))
        + "\n"
    )
    log_file.write_text(
        json.dumps(_event("start", "2026-12-01T10:00:00.480Z")) + "\n"
        + json.dumps(_event("fail", "2026-12-01T10:05:00.310Z", error="Kafka topic orders not found")) + "\n"
    )  # fmt: skip
    graph = build([str(state_file), str(log_file)])
    job = graph.jobs[("planlineage", "orders-sync")]
    assert [r["eventType"] for r in job.runs] == ["START", "FAIL"]
    assert job.runs[-1]["error"] == "Kafka topic orders not found"  # the log's message joins the state's FAIL
    data = view(graph)
    (node,) = [n for n in data["nodes"] if n["kind"] == "job"]
    assert node["state"] == "FAIL" and node["error"] == "Kafka topic orders not found"
    # a second run of the same job is another state, listed
    second = dict(_event("START", "2026-12-01T11:00:00Z"), run={"runId": RUN.replace("abcd", "abce")})
    assert (
        len(from_events([_event("START", "2026-12-01T10:00:00Z"), second]).jobs[("planlineage", "orders-sync")].runs)
        == 2
    )


def test_column_lineage_of_two_producers_is_merged_per_column():
    def out(producer, column, source_field):
        e = _event("COMPLETE", "2026-12-01T10:00:00Z", producer=producer)
        e["outputs"][0]["facets"] = {
            "columnLineage": {
                "fields": {
                    column: {
                        "inputFields": [
                            {
                                "namespace": "kafka://k:9092",
                                "name": "orders",
                                "field": source_field,
                                "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}],
                            }
                        ]
                    }
                }
            }
        }
        return e  # fmt: skip

    graph = from_events([out("https://a.test/flink", "id", "id"), out("https://b.test/spark", "amount", "amount")])
    data = view(graph)
    lake = node_id("dataset", ("s3://lake", "orders"))
    orders = node_id("dataset", ("kafka://k:9092", "orders"))
    assert data["columns"][lake] == {
        "id": [[orders, "kafka://k:9092", "orders", "id", "DIRECT/IDENTITY"]],
        "amount": [[orders, "kafka://k:9092", "orders", "amount", "DIRECT/IDENTITY"]],
    }


def test_node_ids_are_stable_when_the_graph_grows():
    one = view(from_events([_event("START", "2026-12-01T10:00:00Z")]))
    more = dict(_event("START", "2026-12-01T10:00:00Z"), job={"namespace": "planlineage", "name": "aaa-first"})
    two = view(from_events([more, _event("START", "2026-12-01T10:00:00Z")]))
    ids = lambda d: {(n["kind"], n["name"]): n["id"] for n in d["nodes"]}  # noqa: E731
    assert ids(one).items() <= ids(two).items()


def test_served_graph_follows_the_state_store(tmp_path, monkeypatch):
    """`planlineage ui --state`: a state change recorded by the lifecycle is in the next JSON."""
    import os

    from planlineage.document import Dataset, JobLineage, SinkLineage, TableLineage
    from planlineage.graph.server import LiveGraph
    from planlineage.lifecycle import runs
    from planlineage.settings import Settings
    from planlineage.store.sqlite import Store

    for name in list(os.environ):
        if name.startswith("PLANLINEAGE_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("PLANLINEAGE_HOME", str(tmp_path / "home"))
    store = Store()
    settings = Settings(store)
    settings.set("lineage.transport", "file")
    settings.set("lineage.file", str(tmp_path / "events.jsonl"))
    src = TableLineage(table="c.d.a", connector="kafka", datasets=[Dataset(namespace="kafka://k:9092", name="a")])
    sink = SinkLineage(
        table="c.d.b", connector="kafka", datasets=[Dataset(namespace="kafka://k:9092", name="b")], inputs=[src]
    )
    assert runs.record_submission(
        store, "app-1", "copy", JobLineage(flink_version="1.20.5", sinks=[sink]), "INSERT ...", settings
    )
    live = LiveGraph(lambda: build([], state=True), [], True)
    assert live.refresh()
    states = lambda: {n["name"]: n.get("state") for n in json.loads(live.body)["nodes"] if n["kind"] == "job"}  # noqa: E731
    assert states() == {"copy": "RUNNING"}
    assert not live.refresh()  # nothing changed: nothing rebuilt
    runs.record_state(store, "app-1", "FAILED")
    assert live.refresh()
    assert states() == {"copy": "FAIL"}
