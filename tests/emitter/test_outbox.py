"""The outbox: order, RetryLater stops a pass, Rejected kept aside, deadline, claims."""

from __future__ import annotations

import multiprocessing
import time
import uuid

from emitter_fixtures import single_sink_lineage, two_sink_lineage
from gravitino_server import GravitinoTestServer

from planlineage.clock import lease_clock
from planlineage.emitter import events as ev
from planlineage.emitter import outbox
from planlineage.emitter.transports import create_transport
from planlineage.store.sqlite import Store


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
    assert (report.delivered, report.parked, report.remaining) == (len(first) + len(second), 0, 0)
    assert report.ok
    assert keys(server.events) == keys(first + second)
    assert store.rows("SELECT * FROM outbox") == []


def test_a_refused_run_waits_alone_while_the_others_flow(store):
    refused = queue_run(store)
    others = queue_run(store) + queue_run(store, two_sink_lineage())
    run = refused[0]["run"]["runId"]
    with GravitinoTestServer(refuse_runs={run}) as srv:
        for _ in range(2):  # the head jam of before: "delivered 0, pending 6 after two flushes"
            report = outbox.deliver_pending(store, transport_for(srv), deadline_seconds=10)
        assert keys(srv.events) == keys(others)
        assert report.remaining == len(refused)
        rows = store.rows("SELECT attempts, next_attempt, last_error, claimed_by FROM outbox ORDER BY seq")
        assert rows[0]["attempts"] == 1 and "HTTP 500" in rows[0]["last_error"]  # backing off: no 2nd try yet
        assert rows[0]["next_attempt"] > lease_clock()
        assert all(r["attempts"] == 0 for r in rows[1:])  # later events of the run were never sent
        assert all(r["claimed_by"] is None for r in rows)  # claims released
        srv.refuse_runs.clear()
        assert outbox.retry(store, run) == 1  # due now
        report = outbox.deliver_pending(store, transport_for(srv), deadline_seconds=10)
        assert report.delivered == len(refused) and report.remaining == 0
        assert keys(srv.events) == keys(others + refused)


def test_backoff_doubles_and_a_capped_event_is_parked_and_holds_its_run(store):
    refused = queue_run(store)
    run = refused[0]["run"]["runId"]
    policy = outbox.RetryPolicy(backoff=0.05, max_attempts=3)
    with GravitinoTestServer(refuse_runs={run}) as srv:
        waits = []
        for _ in range(3):
            outbox.deliver_pending(store, transport_for(srv), 5, policy=policy)
            waits.append(outbox.next_due(store))
            time.sleep(0.25)
        [head, *rest] = outbox.listing(store, run)
        assert head["state"] == "parked (capped)" and head["attempts"] == 3
        assert [r["state"] for r in rest] == ["due", "due"]
        assert len(srv.requests) == 3  # never the later events: order holds
        report = outbox.deliver_pending(store, transport_for(srv), 5, policy=policy)
        assert report.delivered == 0 and len(srv.requests) == 3  # parked: not retried by passes
        assert policy.delay(1) == 0.05 and policy.delay(2) == 0.1 and policy.delay(30) == outbox.MAX_BACKOFF_SECONDS
        srv.refuse_runs.clear()
        assert outbox.retry(store) == 1
        report = outbox.deliver_pending(store, transport_for(srv), 5, policy=policy)
        assert report.delivered == 3 and keys(srv.events) == keys(refused)


def test_event_past_its_age_cap_is_parked(store):
    refused = queue_run(store, event_types=("START",))
    policy = outbox.RetryPolicy(backoff=0.0, max_attempts=100, max_age=0.0)
    with GravitinoTestServer(refuse_runs={refused[0]["run"]["runId"]}) as srv:
        report = outbox.deliver_pending(store, transport_for(srv), 5, policy=policy)
    assert report.parked == 1 and outbox.parked(store)[0]["parked"] == "capped"


def test_401_parks_the_run_until_the_token_changes_and_order_holds(store):
    payloads = queue_run(store)
    with GravitinoTestServer(token="FAKE-right-token") as srv:
        wrong = create_transport("gravitino", {"address": srv.address, "token": "FAKE-wrong-token"})
        report = outbox.deliver_pending(store, wrong, 10)
        assert report.parked == 1 and report.parked_total == 1 and report.remaining == 2
        assert [r["state"] for r in outbox.listing(store)] == ["parked (access)", "due", "due"]
        assert "parked in all" in outbox.describe(report)
        report = outbox.deliver_pending(store, wrong, 10)
        assert report.delivered == 0 and len(srv.requests) == 1  # later events wait behind it
        assert outbox.requeue_access(store) == 1  # what `settings set lineage.token` calls
        right = create_transport("gravitino", {"address": srv.address, "token": "FAKE-right-token"})
        report = outbox.deliver_pending(store, right, 10)
        assert report.delivered == 3 and keys(srv.events) == keys(payloads)


def test_timed_out_event_is_resent_with_identical_content(store):
    payloads = queue_run(store, event_types=("START", "COMPLETE"))
    with GravitinoTestServer(hang_requests=1, hang_seconds=1.0) as srv:
        transport = create_transport("gravitino", {"address": srv.address, "timeout": 0.3})
        report = outbox.deliver_pending(store, transport, 10, policy=outbox.RetryPolicy(backoff=0.0))
        assert report.retry_later == 1 and report.delivered == 0  # COMPLETE waited behind START
        report = outbox.deliver_pending(store, transport, 10, policy=outbox.RetryPolicy(backoff=0.0))
        assert report.delivered == 2
        time.sleep(1.0)  # the hung request is handled after all
        bodies = [r.body for r in srv.requests]
    start = [b for b in bodies if b'"START"' in b]
    assert len(start) == 2 and start[0] == start[1]  # a repeat, byte for byte: same eventTime
    assert srv.keys()[ev.event_key(payloads[0])] == 2


def test_server_dying_mid_run_loses_nothing(store):
    payloads = queue_run(store) + queue_run(store)
    with GravitinoTestServer(die_after=2) as srv:
        report = outbox.deliver_pending(store, transport_for(srv), 5)
        assert report.delivered == 2 and report.stopped and report.remaining == 4
        srv.up()
        outbox.deliver_pending(store, transport_for(srv), 5)
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


def test_forbidden_rows_are_parked_with_the_reason(store):
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
        assert (report.delivered, report.parked, report.remaining) == (1, 1, 0)
        assert keys(srv.events) == keys(good)
        [row] = outbox.parked(store)
        assert (row["run_id"], row["event_type"]) == (bad[0]["run"]["runId"], "START")
        assert "403" in row["last_error"] and "not authorized" in row["last_error"]
        # not retried by later passes ...
        assert outbox.deliver_pending(store, transport_for(srv), 10).delivered == 0
        # ... until put back once the cause is fixed
        srv.forbidden.clear()
        assert outbox.retry(store) == 1
        assert outbox.deliver_pending(store, transport_for(srv), 10).delivered == 1
        assert outbox.parked(store) == []


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
    assert outbox.retry(store) == 0 and not store.exists()


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


def test_a_pass_costs_a_few_store_transactions_per_batch_not_one_per_event(store, server, monkeypatch):
    queued = []
    for _ in range(20):
        queued += queue_run(store)  # 20 runs x 3 events
    transactions = []
    for name in ("read", "write"):
        real = getattr(store, name)

        def counted(fn, *args, _real=real, **kwargs):
            transactions.append(fn)
            return _real(fn, *args, **kwargs)

        monkeypatch.setattr(store, name, counted)
    report = outbox.deliver_pending(store, transport_for(server), deadline_seconds=30, batch=20)
    assert report.delivered == len(queued) == 60 and report.remaining == 0
    assert set(server.keys().values()) == {1} and len(server.keys()) == 60
    # 60 events in batches of 20: one claim per batch (which also removes the batch before), an
    # empty claim, the release and the two counts; one transaction per event would be 60 or more
    assert len(transactions) <= 60 // 20 + 4, len(transactions)
    assert store.rows("SELECT * FROM outbox") == []


def test_describe_is_one_line():
    report = outbox.FlushReport(delivered=2, parked=1, remaining=3, stopped="Gravitino at x answered HTTP 429")
    line = outbox.describe(report)
    assert "\n" not in line and "2 delivered" in line and "3 kept for later" in line
