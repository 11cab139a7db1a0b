"""Helpers of the composite-delivery tests: a composite of loopback servers, runs queued in
lifecycle order, and the check that a backend got each event once, in per-run order."""

from __future__ import annotations

import uuid
from typing import Any

from emitter_fixtures import single_sink_lineage, two_sink_lineage

from planlineage.emitter import events as ev
from planlineage.emitter import outbox
from planlineage.emitter.transport_kinds import GRAVITINO_ENDPOINT


def http_child(name: str, server, **extra: Any) -> dict[str, Any]:
    """An openlineage-python style child config posting to a loopback Gravitino-compatible server."""
    return {"name": name, "type": "http", "url": server.address, "endpoint": GRAVITINO_ENDPOINT, **extra}


def composite(**servers) -> dict[str, Any]:
    """``{"transports": [...]}`` with one http child per ``name=server``."""
    return {"transports": [http_child(name, server) for name, server in servers.items()]}


def run_payloads(count: int = 3) -> list[tuple[str, list[dict[str, Any]]]]:
    """``count`` runs (START, RUNNING, COMPLETE; every other one a statement set of two sinks):
    ``(run_id, payloads in lifecycle order)`` each."""
    runs = []
    for index in range(count):
        run_id = str(uuid.uuid4())
        lineage = two_sink_lineage() if index % 2 else single_sink_lineage()
        payloads = [
            ev.to_dict(e)
            for event_type in ("START", "RUNNING", "COMPLETE")
            for e in ev.build_events(
                lineage, job_name=f"job-{run_id[:8]}", job_namespace="planlineage", run_id=run_id, event_type=event_type
            )
        ]
        runs.append((run_id, payloads))
    return runs


def queue_runs(store, count: int = 3) -> list[dict[str, Any]]:
    """:func:`run_payloads` queued as the lifecycle queues them; the payloads in queue order."""
    queued: list[dict[str, Any]] = []
    for run_id, payloads in run_payloads(count):
        outbox.enqueue(store, run_id, payloads)
        queued += payloads
    return queued


def run_of(event: dict[str, Any]) -> str:
    parent = (event["run"].get("facets") or {}).get("parent") or {}
    return parent.get("run", {}).get("runId") or event["run"]["runId"]


def assert_each_once_in_run_order(server, queued: list[dict[str, Any]]) -> None:
    """The server took every queued event exactly once, and each run's events in queue order."""
    counts = server.keys()
    assert set(counts) == {ev.event_key(p) for p in queued}, "an event is missing or foreign"
    assert set(counts.values()) == {1}, "an event was sent twice"
    position = {ev.event_key(p): i for i, p in enumerate(queued)}
    seen: dict[str, list[int]] = {}
    for event in list(server.events):
        seen.setdefault(run_of(event), []).append(position[ev.event_key(event)])
    assert all(order == sorted(order) for order in seen.values()), "a run's events came out of order"
