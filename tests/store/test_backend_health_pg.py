"""Store steps 7 and 8 on PostgreSQL (issue #38): a backend's Retry-After, its recovery after an
outage, and a dropped run's reason, through a real PostgreSQL store."""

from __future__ import annotations

import time

from scripted_server import ScriptedServer

from planlineage.emitter import outbox
from planlineage.emitter.transports import create_transport
from planlineage.lifecycle import drop_reasons
from planlineage.store.postgres import PostgresStore


def event(run: str, kind: str) -> dict:
    return {
        "eventType": kind,
        "eventTime": "2026-01-01T00:00:00Z",
        "producer": "https://example.org/planlineage-test",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent",
        "run": {"runId": run},
        "job": {"namespace": "ns", "name": f"job-{run}"},
        "inputs": [],
        "outputs": [],
    }


def test_retry_after_and_recovery_on_postgresql(pg_url, private_home):
    store = PostgresStore(pg_url, private_home)
    for run in ("r1", "r2"):
        outbox.enqueue(store, run, [event(run, "START")])
    policy = outbox.RetryPolicy(backoff=0.02, max_attempts=100)
    with ScriptedServer() as server:
        transport = create_transport("http", {"url": server.url})
        server.status, server.headers = 503, {"Retry-After": "1"}
        assert outbox.deliver_pending(store, transport, 5, policy=policy).stopped
        server.status, server.headers = 201, {}
        report = outbox.deliver_pending(store, transport, 5, policy=policy)
        assert report.delivered == 0 and "left alone" in report.stopped and len(server.received) == 1
        time.sleep(1.1)
        server.status = 500  # an outage: every event backs off
        outbox.deliver_pending(store, transport, 5, policy=policy)
        assert store.rows("SELECT COUNT(*) AS n FROM outbox WHERE next_attempt IS NOT NULL") == [{"n": 2}]
        store.write(lambda c: c.execute("UPDATE outbox SET next_attempt = ?", (c.clock() + 300,)))
        server.status = 201
        report = outbox.deliver_until(store, transport, 2.0, policy=policy)
        assert report.delivered == 2 and report.remaining == 0  # the probe found it back
    assert store.rows("SELECT COUNT(*) AS n FROM outbox_backends") == [{"n": 0}]


def test_a_dropped_runs_reason_is_kept_once_on_postgresql(pg_url, private_home):
    store = PostgresStore(pg_url, private_home)
    store.write(lambda c: drop_reasons.record(c, "run-1", "app-1", "ExtractError: SQL parse failed"))
    assert drop_reasons.take(store, "run-1") == "its SQL did not compile: SQL parse failed"
    assert drop_reasons.take(store, "run-1") is None  # said once
