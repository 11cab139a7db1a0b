"""The outbox: order, RetryLater stops a pass, Rejected kept aside, deadline, claims."""

from __future__ import annotations

import multiprocessing
import time
import uuid

from emitter_fixtures import single_sink_lineage, two_sink_lineage
from gravitino_server import GravitinoTestServer

from planlineage.emitter import events as ev
from planlineage.emitter import outbox
from planlineage.emitter.store import Store, lease_clock
from planlineage.emitter.transports import create_transport


def queue_run(store, lineage=None, event_types=("START", "RUNNING", "COMPLETE"), run_id=None):
    """Queue every event of one run in lifecycle order; the payloads."""
    run_id = run_id or ev.new_run_id()
    payloads = [
        ev.to_dict(e)
        for t in event_types
        for e in ev.build_events(
            lineage or single_sink_lineage(),
            job_name=f"job-{run_id[-4:]}",
            job_namespace="planlineage",
            run_id=run_id,
            event_type=t,
        )
    ]
    outbox.enqueue(store, run_id, payloads)
    return payloads


def keys(events):
    return [ev.event_key(e) for e in events]


def transport_for(srv):
    return create_transport("gravitino", {"address": srv.address})


def test_delivers_everything_oldest_first_and_removes_it(store, server):
    first = queue_run(store, two_sink_lineage())
    second = queue_run(store)
    report = outbox.deliver_pending(store, transport_for(server), deadline_seconds=10)
    assert (report.delivered, report.rejected, report.remaining) == (len(first) + len(second), 0, 0)
    assert report.ok
    assert keys(server.events) == keys(first + second)
    assert store.rows("SELECT * FROM outbox") == []


def test_retry_later_stops_the_pass_and_keeps_order(store):
    payloads = queue_run(store) + queue_run(store)
    with GravitinoTestServer(mode="500") as srv:
        report = outbox.deliver_pending(store, transport_for(srv), deadline_seconds=10)
        assert report.delivered == 0 and report.retry_later == 1 and report.stopped
        assert len(srv.requests) == 1  # stopped at the first RetryLater
        rows = store.rows("SELECT attempts, last_error, claimed_by FROM outbox ORDER BY id")
        assert rows[0]["attempts"] == 1 and "HTTP 500" in rows[0]["last_error"]
        assert all(r["attempts"] == 0 for r in rows[1:])
        assert all(r["claimed_by"] is None for r in rows)  # claims released
        srv.set_mode("normal")
        report = outbox.deliver_pending(store, transport_for(srv), deadline_seconds=10)
        assert report.delivered == len(payloads) and report.remaining == 0
        assert keys(srv.events) == keys(payloads)


def test_server_down_then_up_delivers_in_order(store, server):
    payloads = queue_run(store, two_sink_lineage()) + queue_run(store)
    server.down()
    report = outbox.deliver_pending(store, transport_for(server), deadline_seconds=5)
    assert report.delivered == 0 and report.remaining == len(payloads)
    assert "unreachable" in report.stopped
    server.up()
    report = outbox.deliver_pending(store, transport_for(server), deadline_seconds=10)
    assert report.delivered == len(payloads)
    assert keys(server.events) == keys(payloads)


def test_rejected_rows_are_kept_aside_with_the_reason(store):
    forbidden = ("kafka://broker:9092", "orders")
    with GravitinoTestServer(forbidden={forbidden}) as srv:
        from emitter_fixtures import hive_table, sink, table

        from planlineage.document import JobLineage

        clean = JobLineage(
            flink_version="1.19.1",
            sinks=[sink("c.d.t", [hive_table("db", "t")], [table("c.d.s", hive_table("db", "s"))])],
        )
        bad = queue_run(store, event_types=("START",))
        good = queue_run(store, clean, event_types=("START",))
        report = outbox.deliver_pending(store, transport_for(srv), deadline_seconds=10)
        assert (report.delivered, report.rejected, report.remaining) == (1, 1, 0)
        assert keys(srv.events) == keys(good)
        [row] = outbox.rejected(store)
        assert (row["run_id"], row["event_type"]) == (bad[0]["run"]["runId"], "START")
        assert "403" in row["last_error"] and "not authorized" in row["last_error"]
        # not retried by later passes ...
        assert outbox.deliver_pending(store, transport_for(srv), 10).delivered == 0
        # ... until put back once the cause is fixed
        srv.forbidden.clear()
        assert outbox.requeue_rejected(store) == 1
        assert outbox.deliver_pending(store, transport_for(srv), 10).delivered == 1
        assert outbox.rejected(store) == []


def test_deadline_bounds_a_pass(store):
    queue_run(store, event_types=("START", "RUNNING", "COMPLETE", "FAIL", "ABORT"))
    queue_run(store, event_types=("START", "RUNNING", "COMPLETE", "FAIL", "ABORT"))
    with GravitinoTestServer(delay=0.25) as srv:
        started = time.monotonic()
        report = outbox.deliver_pending(store, transport_for(srv), deadline_seconds=0.6)
        elapsed = time.monotonic() - started
    assert report.timed_out or report.stopped
    assert report.delivered < 10 and report.remaining == 10 - report.delivered
    assert elapsed < 1.5
    assert all(r["claimed_by"] is None for r in store.rows("SELECT claimed_by FROM outbox"))


def test_live_claim_of_another_process_blocks_its_row_and_later_rows_of_the_run(store, server):
    blocked = queue_run(store)
    free = queue_run(store)
    store.write(
        lambda c: c.execute(
            "UPDATE outbox SET claimed_by = 'other', claim_until = ? WHERE id = (SELECT MIN(id) FROM outbox)",
            (lease_clock() + 60,),
        )
    )
    report = outbox.deliver_pending(store, transport_for(server), deadline_seconds=10)
    assert keys(server.events) == keys(free)
    assert report.remaining == len(blocked)
    # the other process died: once its lease expires, the run goes out, in order
    store.write(lambda c: c.execute("UPDATE outbox SET claim_until = ?", (lease_clock() - 1,)))
    outbox.deliver_pending(store, transport_for(server), deadline_seconds=10)
    assert keys(server.events) == keys(free + blocked)


def test_nothing_to_do_without_a_store(store, server):
    report = outbox.deliver_pending(store, transport_for(server), 1)
    assert report.delivered == 0 and not store.exists() and server.requests == []
    assert outbox.requeue_rejected(store) == 0 and not store.exists()


def _flush_worker(db_path: str, address: str, barrier) -> None:
    transport = create_transport("gravitino", {"address": address})
    barrier.wait(10)
    for _ in range(3):
        outbox.deliver_pending(Store(db_path), transport, deadline_seconds=20, batch=3)


def test_concurrent_flushes_deliver_each_event_exactly_once_and_in_run_order(store):
    queued = []
    for index in range(8):
        lineage = two_sink_lineage() if index % 2 else single_sink_lineage()
        queued += queue_run(store, lineage, run_id=str(uuid.uuid4()))
    context = multiprocessing.get_context("fork")
    with GravitinoTestServer(delay=0.01) as srv:
        barrier = context.Barrier(4)
        workers = [
            context.Process(target=_flush_worker, args=(str(store.path), srv.address, barrier)) for _ in range(4)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(60)
        assert all(w.exitcode == 0 for w in workers)
        counts = srv.keys()
        received = list(srv.events)
    assert len(queued) == 8 * 3 + 4 * 3 * 2  # 8 runs x 3 states x (1 or 3 jobs)
    assert set(counts) == set(keys(queued))
    assert set(counts.values()) == {1}, "an event was sent twice"
    assert store.rows("SELECT * FROM outbox") == []
    # within each run, the server saw the events in the order they were queued
    position = {k: i for i, k in enumerate(keys(queued))}
    runs = {}
    for event in received:
        run = event["run"]["facets"].get("parent", {}).get("run", {}).get("runId") or event["run"]["runId"]
        runs.setdefault(run, []).append(position[ev.event_key(event)])
    assert len(runs) == 8 and all(seen == sorted(seen) for seen in runs.values())


def test_describe_is_one_line():
    report = outbox.FlushReport(delivered=2, rejected=1, remaining=3, stopped="Gravitino at x answered HTTP 429")
    line = outbox.describe(report)
    assert "\n" not in line and "2 delivered" in line and "3 kept for later" in line
