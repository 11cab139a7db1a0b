"""A composite transport delivered through the outbox: one delivery cursor per backend.

Two loopback Gravitino-compatible servers are the backends; one is down, slow or refusing while
the other works.  Each backend must get every event exactly once, in per-run order, whatever the
other does.
"""

from __future__ import annotations

import logging
import time

import pytest
from composite_backends import assert_each_once_in_run_order, composite, http_child, queue_runs, run_of
from gravitino_server import GravitinoTestServer

from planlineage.emitter import outbox
from planlineage.emitter.backends import Backend, open_backends, opened
from planlineage.errors import TransportConfigError
from planlineage.lifecycle import delivery


def down_server() -> GravitinoTestServer:
    """A server that has a port (so a config can name it) but refuses connections until ``up()``."""
    server = GravitinoTestServer().start()
    server.down()
    return server


def test_a_down_backend_neither_holds_nor_duplicates_the_other_and_gets_everything_once_back(store):
    queued = queue_runs(store, 3)
    with GravitinoTestServer() as kept, GravitinoTestServer() as returning:
        returning.down()
        with opened("composite", composite(kept=kept, returning=returning)) as backends:
            report = outbox.deliver_pending(store, backends, 10)
            assert_each_once_in_run_order(kept, queued)  # every event at once
            assert report.delivered == len(queued) and report.remaining == len(queued)
            assert report.backends["returning"].stopped and report.backends["returning"].remaining == len(queued)
            assert report.stopped.startswith("returning: ")
            # while it stays down, passes send nothing more to the one that works
            outbox.deliver_pending(store, backends, 10)
            assert len(kept.events) == len(queued)
            returning.up()
            report = outbox.deliver_pending(store, backends, 10)
        assert report.delivered == len(queued) and report.remaining == 0 and report.ok
        assert_each_once_in_run_order(returning, queued)
        assert_each_once_in_run_order(kept, queued)  # nothing sent to it a second time
    assert store.rows("SELECT * FROM outbox") == []


def test_events_queued_while_a_backend_is_down_reach_it_after_the_others(store):
    first = queue_runs(store, 1)
    with GravitinoTestServer() as kept, GravitinoTestServer() as returning:
        returning.down()
        backends = open_backends("composite", composite(kept=kept, returning=returning))
        outbox.deliver_pending(store, backends, 10)
        later = queue_runs(store, 2)  # queued once, not knowing the backends
        outbox.deliver_pending(store, backends, 10)
        assert_each_once_in_run_order(kept, first + later)
        returning.up()
        report = outbox.deliver_until(store, backends, 10)
    assert report.remaining == 0
    assert_each_once_in_run_order(returning, first + later)


def test_parking_at_one_backend_does_not_hold_the_other(store):
    queued = queue_runs(store, 3)
    refused_run = queued[0]["run"]["runId"]
    policy = outbox.RetryPolicy(backoff=0.0, max_attempts=1)  # the first 500 parks (capped)
    with GravitinoTestServer() as kept, GravitinoTestServer(refuse_runs={refused_run}) as refusing:
        # the refusing one first: what it parks must not hold the other's rows of that run
        backends = open_backends("composite", composite(refusing=refusing, kept=kept))
        report = outbox.deliver_pending(store, backends, 10, policy=policy)
        assert_each_once_in_run_order(kept, queued)
        assert report.backends["refusing"].parked == 1 and report.backends.get("kept").parked == 0
        others = [p for p in queued if run_of(p) != refused_run]
        assert_each_once_in_run_order(refusing, others)  # the other runs flowed at the refusing backend
        listed = outbox.listing(store, refused_run)
        assert {r["backend"] for r in listed} == {"refusing"}
        assert listed[0]["state"] == "parked (capped)" and all(r["state"] == "due" for r in listed[1:])
        refusing.refuse_runs.clear()
        assert outbox.retry(store, backend="kept") == 0  # nothing of it is parked at the other
        assert outbox.retry(store, refused_run, backend="refusing") == 1
        report = outbox.deliver_pending(store, backends, 10, policy=policy)
    assert report.remaining == 0 and report.parked_total == 0
    assert_each_once_in_run_order(refusing, queued)
    assert_each_once_in_run_order(kept, queued)


def test_a_slow_backend_does_not_eat_the_others_time(store):
    queued = queue_runs(store, 2)
    with GravitinoTestServer(hang_requests=100, hang_seconds=3.0) as slow, GravitinoTestServer() as fast:
        # the slow one first: it may use its share of the pass, never the fast one's
        backends = open_backends(
            "composite", {"transports": [http_child("slow", slow, timeout=5), http_child("fast", fast)]}
        )
        started = time.monotonic()
        report = outbox.deliver_pending(store, backends, 2.0)
        took = time.monotonic() - started
        assert_each_once_in_run_order(fast, queued)
        assert took < 3.0, took  # the pass kept its deadline
        assert report.backends["slow"].delivered == 0 and report.backends["slow"].remaining == len(queued)


def test_rows_of_a_backend_no_longer_configured_are_parked_saying_so_and_go_when_it_returns(store):
    queued = queue_runs(store, 2)
    with GravitinoTestServer() as a, GravitinoTestServer() as b:
        b.down()
        outbox.deliver_pending(store, open_backends("composite", composite(a=a, b=b)), 10)
        assert outbox.count_pending(store, "b") == len(queued)
        # the composite loses b: its rows are kept, parked, and no longer count as work
        report = outbox.deliver_pending(store, open_backends("composite", composite(a=a)), 10)
        assert report.remaining == 0 and report.parked_total == len(queued)
        listed = outbox.listing(store)
        assert {(r["backend"], r["state"]) for r in listed} == {("b", "parked (backend)")}
        assert "no transport named b is configured" in listed[0]["last_error"]
        assert not delivery.has_work(store)
        # a single transport is not b either
        outbox.deliver_pending(store, open_backends("http", {"url": a.address, "endpoint": "api/lineage"}), 10)
        assert outbox.count_parked(store) == len(queued)
        b.up()
        report = outbox.deliver_pending(store, open_backends("composite", composite(a=a, b=b)), 10)
        assert report.delivered == len(queued) and report.parked_total == 0
        assert_each_once_in_run_order(b, queued)
        assert_each_once_in_run_order(a, queued)


def test_a_single_transport_delivers_what_a_composite_has_not_fanned_out_yet(store):
    queued = queue_runs(store, 1)
    with GravitinoTestServer() as server:
        report = outbox.deliver_pending(store, open_backends("gravitino", {"address": server.address}), 10)
    assert report.delivered == len(queued) and report.backends == {}
    assert_each_once_in_run_order(server, queued)


def test_an_event_already_queued_at_a_backend_is_not_queued_again(store):
    queued = queue_runs(store, 1)
    with GravitinoTestServer() as a, GravitinoTestServer() as b:
        b.down()
        backends = open_backends("composite", composite(a=a, b=b))
        outbox.deliver_pending(store, backends, 10)
        run = queued[0]["run"]["runId"]
        assert outbox.enqueue(store, run, queued[:1]) == 0  # still waiting for b: not queued again
        b.up()
        outbox.deliver_pending(store, backends, 10)
    assert_each_once_in_run_order(a, queued)
    assert_each_once_in_run_order(b, queued)


def test_a_child_that_cannot_be_built_keeps_its_events_while_the_others_deliver(store, caplog):
    queued = queue_runs(store, 1)
    with GravitinoTestServer() as good:
        options = {"transports": {"good": http_child("good", good), "broken": {"type": "http"}}}
        backends = open_backends("composite", options)
        assert [b.name for b in backends] == ["good", "broken"]
        assert backends[1].transport is None and "needs an address" in backends[1].error
        report = outbox.deliver_pending(store, backends, 10)
    assert_each_once_in_run_order(good, queued)
    assert report.backends["broken"].stopped and outbox.count_pending(store, "broken") == len(queued)


def test_open_backends_reads_openlineage_pythons_composite_shapes():
    single = open_backends("http", {"url": "http://127.0.0.1:9"})
    assert [(b.name, b.transport.kind) for b in single] == [("", "http")]
    listed = open_backends(
        "composite",
        {
            "transports": [
                {"type": "console"},
                {"type": "http", "name": "marquez", "url": "http://127.0.0.1:9", "priority": 1},
            ],
            "sort_transports": True,
            "continue_on_failure": False,
        },
    )
    assert [b.name for b in listed] == ["marquez", "console"]  # the higher priority first; unnamed: its type
    assert listed[0].describe() == "marquez (http http://127.0.0.1:9)"
    as_json = open_backends("composite", {"transports": '{"c": {"type": "console"}}'})
    assert [b.name for b in as_json] == ["c"]
    for bad, said in (
        ({"transports": []}, "has no transports"),
        ({"transports": [{"type": "console"}, {"type": "console"}]}, "named 'console'"),
        ({"transports": [{"name": "x"}]}, "has no type"),
        ({"transports": [{"type": "composite", "transports": []}]}, "is a composite"),
        ({"transports": 3}, "must be a list"),
        ({"transports": [{"type": "console", "priority": "high"}], "sort_transports": True}, "must be a number"),
    ):
        with pytest.raises(TransportConfigError, match=said):
            open_backends("composite", bad)


def test_delivery_logs_what_stays_behind_per_backend_without_secrets(store, caplog, monkeypatch):
    from planlineage.settings import Settings

    queue_runs(store, 1)
    with GravitinoTestServer() as kept, GravitinoTestServer(token="FAKE-secret-token") as returning:
        returning.down()
        options = {
            "transports": [http_child("kept", kept), http_child("returning", returning, token="FAKE-secret-token")]
        }
        settings = Settings(store)
        monkeypatch.setattr(Settings, "configured", lambda self: True)
        monkeypatch.setattr(Settings, "transport_options", lambda self: ("composite", options))
        with caplog.at_level(logging.WARNING, logger="planlineage.emitter"):
            report = delivery.flush(store, settings, deadline_seconds=5)
    assert report is not None and report.backends["kept"].remaining == 0
    lines = [r.getMessage() for r in caplog.records]
    assert any("lineage events to returning (" in line and "kept for later" in line for line in lines), lines
    assert not any("kept (" in line for line in lines)  # the backend that took everything says nothing
    assert not any("FAKE-secret-token" in line for line in lines)


def test_a_backend_object_describes_itself_without_its_secret():
    backend = Backend("b", open_backends("http", {"url": "http://user:pw@127.0.0.1:9", "token": "FAKE-t"})[0].transport)
    assert (
        "pw" not in backend.describe() and "FAKE-t" not in backend.describe() and backend.describe().startswith("b (")
    )


def test_outbox_list_and_retry_show_and_take_the_backend(store):
    import subprocess
    import sys

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "planlineage", *args], capture_output=True, text=True, timeout=60)

    queued = queue_runs(store, 1)
    with GravitinoTestServer() as a, GravitinoTestServer() as b:
        b.down()
        outbox.deliver_pending(store, open_backends("composite", composite(a=a, b=b)), 10)
        outbox.deliver_pending(store, open_backends("composite", composite(a=a)), 10)  # b is gone: parked
    listed = cli("outbox", "list")
    lines = listed.stdout.splitlines()
    assert len(lines) == len(queued) and all(" -> b  parked (backend)" in line for line in lines), listed
    assert "no transport named b is configured" in lines[0]
    assert cli("outbox", "list", "--backend", "a").stderr.strip() == "no lineage events are waiting"
    assert cli("outbox", "retry", "--backend", "a").stderr.strip() == "0 lineage event(s) put back in line"
    assert cli("outbox", "retry", "--backend", "b").stderr.strip() == f"{len(queued)} lineage event(s) put back in line"
    assert all(r["state"] == "due" and r["backend"] == "b" for r in outbox.listing(store))


def test_a_queued_event_another_node_still_holds_keeps_its_runs_later_events_back(store):
    """A node with older settings (one transport) holds a run's first event while this node fans
    the run's later events out: they must not reach a backend before the first one."""
    queued = queue_runs(store, 1)
    first = store.rows("SELECT id FROM outbox ORDER BY seq LIMIT 1")[0]["id"]
    store.write(
        lambda c: c.execute(
            "UPDATE outbox SET claimed_by = 'old-node', claim_until = ? WHERE id = ?", (time.time() + 600, first)
        )
    )
    with GravitinoTestServer() as a:
        backends = open_backends("composite", composite(a=a))
        report = outbox.deliver_pending(store, backends, 10)
        assert report.delivered == 0 and a.events == []  # fanned out, but held behind the first
        store.write(
            lambda c: c.execute("UPDATE outbox SET claimed_by = NULL, claim_until = NULL WHERE id = ?", (first,))
        )
        report = outbox.deliver_until(store, backends, 10)
    assert report.remaining == 0
    assert_each_once_in_run_order(a, queued)
