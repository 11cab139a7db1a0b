"""Lineage documents the fake planner answers, and helpers to read what the server received."""

from __future__ import annotations

from collections import defaultdict

from planlineage.document import Dataset, JobLineage, SinkLineage, TableLineage

KAFKA = "kafka://kafka-1:9092"
D = "default_catalog.default_database."


def kafka(topic: str) -> Dataset:
    return Dataset(namespace=KAFKA, name=topic)


def one_sink(source: str = "orders", sink: str = "orders_clean") -> JobLineage:
    return JobLineage(
        flink_version="1.20.5",
        sinks=[
            SinkLineage(
                table=f"{D}{sink}",
                connector="kafka",
                datasets=[kafka(sink)],
                inputs=[TableLineage(table=f"{D}{source}", connector="kafka", datasets=[kafka(source)])],
            )
        ],
    )


def two_sinks() -> JobLineage:
    """A STATEMENT SET: clicks -> click_counts and views -> view_counts (two pairings)."""
    return JobLineage(
        flink_version="1.20.5",
        sinks=[
            SinkLineage(
                table=f"{D}{out}",
                connector="kafka",
                datasets=[kafka(out)],
                inputs=[TableLineage(table=f"{D}{src}", connector="kafka", datasets=[kafka(src)])],
            )
            for src, out in (("clicks", "click_counts"), ("views", "view_counts"))
        ],
    )


def timeline(server, job: str) -> list[tuple[str, str]]:
    """``(runId, eventType)`` of one OpenLineage job, in arrival order."""
    return [(e["run"]["runId"], e["eventType"]) for e in server.events if e["job"]["name"] == job]


def types(server, job: str) -> list[str]:
    return [t for _, t in timeline(server, job)]


def datasets(server, job: str) -> set[tuple[tuple[str, ...], tuple[str, ...]]]:
    """The distinct ``(inputs, outputs)`` dataset names the job's events carried."""
    return {
        (
            tuple(sorted(d["name"] for d in e.get("inputs") or [])),
            tuple(sorted(d["name"] for d in e.get("outputs") or [])),
        )
        for e in server.events
        if e["job"]["name"] == job
    }


def exactly_once(server) -> None:
    counts = server.keys()
    repeated = {k: n for k, n in counts.items() if n != 1}
    assert not repeated, f"delivered more than once: {repeated}"


def jobs(server) -> dict[str, list[str]]:
    found = defaultdict(list)
    for e in server.events:
        found[e["job"]["name"]].append(e["eventType"])
    return dict(found)
