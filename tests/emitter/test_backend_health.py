"""A backend as a whole (issue #38): Retry-After, jittered backoff, prompt recovery after an
outage, hard backoff for a backend that hangs; each per backend of a composite."""

from __future__ import annotations

import time
from email.utils import formatdate

import pytest
from emitter_fixtures import single_sink_lineage
from scripted_server import HangingServer, ScriptedServer

from planlineage.emitter import events as ev
from planlineage.emitter import outbox
from planlineage.emitter.backends import open_backends
from planlineage.emitter.transports import create_transport
from planlineage.emitter.transports.http import retry_after


def queue_runs(store, count: int, event_types=("START",)) -> list[dict]:
    payloads = []
    for _ in range(count):
        run_id = ev.new_run_id()
        run = [
            ev.to_dict(e)
            for t in event_types
            for e in ev.build_events(
                single_sink_lineage(), job_name=f"job-{run_id[-4:]}", job_namespace="n", run_id=run_id, event_type=t
            )
        ]
        outbox.enqueue(store, run_id, run)
        payloads += run
    return payloads


def http(url: str, **options):
    return create_transport("http", {"url": url, **options})


def test_retry_after_reads_seconds_and_http_dates():
    assert retry_after("120") == 120.0
    assert retry_after(formatdate(1_000_030, usegmt=True), now=1_000_000) == pytest.approx(30.0)
    assert retry_after(formatdate(999_000, usegmt=True), now=1_000_000) == 0.0  # in the past: now
    assert retry_after("soon") is None and retry_after(None) is None and retry_after("") is None


@pytest.mark.parametrize("status", [429, 503])
def test_retry_after_keeps_the_backend_quiet_for_as_long_as_it_asked(store, status):
    queue_runs(store, 2)
    with ScriptedServer() as server:
        server.status, server.headers = status, {"Retry-After": "1"}
        transport = http(server.url)
        report = outbox.deliver_pending(store, transport, 5)
        assert report.delivered == 0 and report.stopped and len(server.received) == 1
        assert 0.5 < outbox.next_due(store) <= 1.0  # the backend's wish, not 0.5 s of pause
        assert [r["state"] for r in outbox.listing(store)] == ["waiting", "waiting"]  # outbox list says so
        server.status, server.headers = 201, {}
        report = outbox.deliver_pending(store, transport, 5)
        assert report.delivered == 0 and "left alone" in report.stopped and len(server.received) == 1
        report = outbox.deliver_until(store, transport, 5)
        assert report.delivered == 2 and report.remaining == 0
        waited = server.received[1][0] - server.received[0][0]
        assert waited >= 0.9, waited  # not one request before the second it asked for


def test_retry_after_holds_only_its_own_child_of_a_composite(store):
    queue_runs(store, 3)
    with ScriptedServer() as busy, ScriptedServer() as fine:
        busy.status, busy.headers = 429, {"Retry-After": "60"}
        config = {
            "transports": [
                {"type": "http", "name": "busy", "url": busy.url},
                {"type": "http", "name": "fine", "url": fine.url},
            ]
        }
        backends = open_backends("composite", config)
        for _ in range(3):
            report = outbox.deliver_pending(store, backends, 5)
        assert len(fine.received) == 3 and len(busy.received) == 1  # asked once, then left alone
        assert report.backends["busy"].stopped and report.backends["busy"].remaining == 3
        assert all(r["backend"] == "busy" for r in outbox.pending(store))


def test_events_refused_together_come_back_spread_out(store):
    queue_runs(store, 12)
    policy = outbox.RetryPolicy(backoff=100.0)
    with ScriptedServer() as server:
        server.status = 500
        outbox.deliver_pending(store, http(server.url), 5, policy=policy)
    rows = store.rows("SELECT next_attempt FROM outbox")
    clock = store.read(lambda c: c.clock())
    waits = [r["next_attempt"] - clock for r in rows]
    assert len(rows) == 12 and all(70.0 <= w <= 100.0 for w in waits), waits  # within [0.75, 1] x backoff
    assert max(waits) - min(waits) > 5.0 and len({round(w) for w in waits}) > 4  # not one instant for all


def test_after_an_outage_waiting_events_go_as_soon_as_the_backend_answers(store):
    """HTTP 500 for a while: every event's backoff grew; when the backend answers again they are
    delivered within a probe interval, not when their own grown backoff ends."""
    queue_runs(store, 4)
    policy = outbox.RetryPolicy(backoff=0.02, max_attempts=100)  # probes every 0.3 s
    with ScriptedServer() as server:
        server.status = 500
        transport = http(server.url)
        for _ in range(3):
            report = outbox.deliver_pending(store, transport, 1, policy=policy)
            time.sleep(0.1)
        assert report.retry_later and report.delivered == 0
        # What ten minutes of HTTP 500 leave behind: every event waits a grown backoff (5 minutes).
        store.write(lambda c: c.execute("UPDATE outbox SET next_attempt = ?", (c.clock() + 300,)))
        assert outbox.next_due(store) <= 0.3  # a pass wakes for the probe, not in 5 minutes
        server.status = 201
        back = time.monotonic()
        report = outbox.deliver_until(store, transport, 1.0, policy=policy)
        assert report.delivered == 4 and report.remaining == 0
        assert time.monotonic() - back < 0.9  # within a probe interval, far below the grown backoff
        assert store.rows("SELECT COUNT(*) AS n FROM outbox_backends") == [{"n": 0}]  # healthy again


def test_a_backend_that_hangs_is_left_alone_not_resent_every_few_seconds(store):
    payloads = queue_runs(store, 1, event_types=("START", "RUNNING"))
    policy = outbox.RetryPolicy(backoff=0.1)  # a timeout leaves the backend alone 1.5 s, then 3 s
    with HangingServer() as server:
        transport = http(server.url, timeout=0.3)
        started = time.monotonic()
        report = outbox.deliver_until(store, transport, 4.0, policy=policy)
        transport.close()
        assert time.monotonic() - started < 5.0
    # Backing off per event (0.1 s doubling after each 0.3 s timeout) sent the same START 5 times in these 4 s.
    assert len(server.accepted) == 2, [round(t - started, 2) for t in server.accepted]
    assert server.accepted[1] - server.accepted[0] >= 1.5
    assert report.delivered == 0 and "left alone" in report.stopped
    [start, running] = outbox.listing(store)
    assert start["event_type"] == "START" and start["attempts"] == 2
    assert running["attempts"] == 0 and len(payloads) == 2  # the hanging backend never got the later event
