"""The run state machine: submissions, platform states, lineage attached later, fail-open."""

from __future__ import annotations

import logging

import pytest
from emitter_fixtures import single_sink_lineage, two_sink_lineage
from gravitino_server import GravitinoTestServer

from planlineage.emitter import events as ev
from planlineage.emitter import outbox
from planlineage.lifecycle import delivery, runs
from planlineage.settings import Settings
from planlineage.store.sqlite import Store

SQL = "INSERT INTO sink SELECT * FROM orders"


def configured(store, address="http://127.0.0.1:9", **env):
    environ = {"PLANLINEAGE_LINEAGE_ADDRESS": address}
    environ.update({f"PLANLINEAGE_LINEAGE_{k.upper()}": v for k, v in env.items()})
    return Settings(store, environ=environ)


def queued(store):
    runs.close_replaced(store)  # what the compile service and flush do with replaced runs ...
    runs.materialize(store)  # ... and with recorded transitions
    return [(r["job_name"], r["event_type"]) for r in outbox.pending(store)]


def payloads(store):
    import json

    runs.close_replaced(store)
    runs.materialize(store)
    return [json.loads(r["payload"]) for r in store.rows("SELECT payload FROM outbox ORDER BY id")]


def test_nothing_until_configured(store, private_home):
    settings = Settings(store, environ={})
    assert runs.record_submission(store, "app-1", "job", single_sink_lineage(), SQL, settings) is None
    assert runs.record_pending_submission(store, "app-1", "job", SQL, settings) is None
    assert runs.record_state(store, "app-1", "RUNNING") is None
    assert delivery.flush(store, settings) is None
    assert not private_home.exists()


def test_submission_queues_start_for_each_job(store):
    run_id = runs.record_submission(store, "app-1", "etl", two_sink_lineage(), SQL, configured(store))
    assert run_id
    assert queued(store) == [
        ("etl", "START"),
        ("etl.hive.sales.orders_clean", "START"),
        ("etl.hive.sales.payments_by_order", "START"),
    ]
    run = runs.current_run(store, "app-1")
    assert (run.run_id, run.job_name, run.namespace, run.last_event) == (run_id, "etl", "planlineage", "START")
    assert run.lineage == two_sink_lineage() and run.sql == SQL
    assert {p["job"]["facets"]["sql"]["query"] for p in payloads(store)} == {SQL}


@pytest.mark.parametrize(
    "state, event_type",
    [
        ("FINISHED", "COMPLETE"),
        ("SUCCEEDED", "COMPLETE"),
        ("FAILED", "FAIL"),
        ("LOST", "FAIL"),
        ("KILLED", "FAIL"),
        ("TERMINATED", "FAIL"),
        ("CANCELED", "ABORT"),
        ("running", "RUNNING"),
        ("STARTING", None),
        ("RESTARTING", None),
        ("SUSPENDED", None),
        ("POS_TERMINATED", None),
        ("OTHER", None),
        ("", None),
    ],
)
def test_state_mapping(store, state, event_type):
    runs.record_submission(store, "app", "etl", single_sink_lineage(), SQL, configured(store))
    assert runs.record_state(store, "app", state) == event_type
    expected = [("etl", "START")] + ([("etl", event_type)] if event_type else [])
    assert queued(store) == expected
    assert runs.current_run(store, "app").platform_state == state.upper()


def test_each_transition_is_queued_once(store):
    runs.record_submission(store, "app", "etl", single_sink_lineage(), SQL, configured(store))
    assert runs.record_state(store, "app", "RUNNING") == "RUNNING"
    assert runs.record_state(store, "app", "RUNNING") is None
    assert runs.record_state(store, "app", "RESTARTING") is None
    assert runs.record_state(store, "app", "RUNNING") is None
    assert runs.record_state(store, "app", "FINISHED") == "COMPLETE"
    assert runs.record_state(store, "app", "FINISHED") is None
    assert runs.record_state(store, "app", "FAILED") is None  # nothing after a terminal event
    assert queued(store) == [("etl", "START"), ("etl", "RUNNING"), ("etl", "COMPLETE")]


def test_unknown_app_is_a_no_op(store, private_home):
    assert runs.record_state(store, "nobody", "RUNNING") is None
    assert not private_home.exists()
    runs.record_submission(store, "app", "etl", single_sink_lineage(), SQL, configured(store))
    assert runs.record_state(store, "nobody", "FAILED") is None
    assert queued(store) == [("etl", "START")]


def test_every_event_repeats_the_datasets_and_fail_has_the_error(store):
    runs.record_submission(store, "app", "etl", two_sink_lineage("batch"), SQL, configured(store))
    runs.record_state(store, "app", "RUNNING")
    runs.record_state(store, "app", "FAILED", error="java.lang.Exception: boom")
    by_type = {}
    for payload in payloads(store):
        by_type.setdefault(payload["eventType"], []).append(payload)
    assert list(by_type) == ["START", "RUNNING", "FAIL"]

    def shape(events):
        return [
            (e["job"]["name"], e["run"]["runId"], e["inputs"], e["outputs"], e["job"]["facets"]["jobType"])
            for e in events
        ]

    assert shape(by_type["START"]) == shape(by_type["RUNNING"]) == shape(by_type["FAIL"])
    assert all(e["run"]["facets"]["errorMessage"]["message"] == "java.lang.Exception: boom" for e in by_type["FAIL"])


def test_error_message_secrets_are_redacted(store):
    runs.record_submission(store, "app", "etl", single_sink_lineage(), SQL, configured(store))
    runs.record_state(store, "app", "FAILED", error="cannot connect jdbc:mysql://etl:hunter22@db:3306/x")
    [fail] = [p for p in payloads(store) if p["eventType"] == "FAIL"]
    assert "hunter22" not in fail["run"]["facets"]["errorMessage"]["message"]


def test_states_before_lineage_are_replayed_after_start_in_order(store):
    settings = configured(store)
    run_id = runs.record_pending_submission(store, "app", "etl", SQL, settings)
    assert run_id and queued(store) == []
    assert runs.record_state(store, "app", "RUNNING") == "RUNNING"
    assert runs.record_state(store, "app", "RUNNING") is None
    assert runs.record_state(store, "app", "FAILED", error="boom") == "FAIL"
    assert queued(store) == []  # nothing can be sent without datasets
    assert runs.attach_lineage(store, "app", run_id, two_sink_lineage()) is True
    assert [t for _, t in queued(store)] == ["START"] * 3 + ["RUNNING"] * 3 + ["FAIL"] * 3
    events = payloads(store)
    times = [e["eventTime"] for e in events]
    assert times == sorted(times)
    assert {e["run"]["runId"] for e in events if e["job"]["name"] == "etl"} == {run_id}
    assert runs.current_run(store, "app").pending == []
    assert runs.attach_lineage(store, "app", run_id, two_sink_lineage()) is False  # once
    assert runs.record_state(store, "app", "FINISHED") is None  # already terminal


def test_stale_worker_cannot_attach_to_a_newer_run(store):
    settings = configured(store)
    old = runs.record_pending_submission(store, "app", "etl", SQL, settings)
    new = runs.record_pending_submission(store, "app", "etl", SQL, settings)
    assert old != new
    assert runs.attach_lineage(store, "app", old, single_sink_lineage()) is False
    assert runs.abandon_lineage(store, "app", old) is False
    assert runs.attach_lineage(store, "app", new, single_sink_lineage()) is True
    assert {p["run"]["runId"] for p in payloads(store)} == {new}


def test_abandoned_lineage_sends_nothing(store):
    run_id = runs.record_pending_submission(store, "app", "etl", SQL, configured(store))
    runs.record_state(store, "app", "RUNNING")
    assert runs.abandon_lineage(store, "app", run_id, "compile failed") is True
    assert runs.record_state(store, "app", "FINISHED") is None
    assert runs.current_run(store, "app") is None and queued(store) == []


def test_resubmission_starts_a_new_run(store):
    settings = configured(store)
    first = runs.record_submission(store, "app", "etl", single_sink_lineage(), SQL, settings)
    runs.record_state(store, "app", "CANCELED")
    second = runs.record_submission(store, "app", "etl", single_sink_lineage(), SQL, settings)
    assert first != second
    assert runs.record_state(store, "app", "RUNNING") == "RUNNING"
    # order holds per run (the outbox's contract); the replaced run's ABORT went in once
    assert sorted(((p["run"]["runId"], p["eventType"]) for p in payloads(store)), key=lambda k: k[0] != first) == [
        (first, "START"),
        (first, "ABORT"),
        (second, "START"),
        (second, "RUNNING"),
    ]


def test_state_queued_while_start_is_undelivered_goes_out_after_it(store):
    with GravitinoTestServer() as srv:
        settings = configured(store, address=srv.address)
        srv.down()
        runs.record_submission(store, "app", "etl", single_sink_lineage(), SQL, settings)
        report = delivery.flush(store, settings, deadline_seconds=2)
        assert report.delivered == 0 and report.remaining == 1
        runs.record_state(store, "app", "RUNNING")
        runs.record_state(store, "app", "FINISHED")
        srv.up()
        report = delivery.flush(store, settings, deadline_seconds=5)
        assert report.delivered == 3
        assert [e["eventType"] for e in srv.events] == ["START", "RUNNING", "COMPLETE"]


def test_flush_uses_the_configured_token(store):
    token = "a-long-gravitino-token-42"
    with GravitinoTestServer(token=token) as srv:
        settings = configured(store, address=srv.address, token=token)
        runs.record_submission(store, "app", "etl", single_sink_lineage(), SQL, settings)
        assert delivery.flush(store, settings).delivered == 1
        assert srv.requests[0].headers["Authorization"] == f"Bearer {token}"


def test_fail_open_on_an_unusable_store(tmp_path, caplog):
    caplog.set_level(logging.DEBUG, logger="planlineage")
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    broken = Store(blocker / "state.db")
    settings = Settings(broken, environ={"PLANLINEAGE_LINEAGE_ADDRESS": "http://127.0.0.1:9"})
    assert runs.record_submission(broken, "app", "etl", single_sink_lineage(), SQL, settings) is None
    [record] = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert record.exc_info is None and "\n" not in record.getMessage()
    assert record.getMessage().startswith("planlineage: ")


def test_fail_open_on_unexpected_errors(store, monkeypatch, caplog):
    def explode(*args, **kwargs):
        raise RuntimeError("unexpected")

    monkeypatch.setattr(ev, "build_events", explode)
    caplog.set_level(logging.WARNING, logger="planlineage")
    result = runs.record_submission(store, "app", "etl", single_sink_lineage(), SQL, configured(store))
    assert result is None
    assert "RuntimeError: unexpected" in caplog.text and "Traceback" not in caplog.text
    assert runs.current_run(store, "app") is None  # the transaction was rolled back


def test_flush_with_a_broken_transport_setting_fails_open(store, caplog):
    settings = configured(store)
    runs.record_submission(store, "app", "etl", single_sink_lineage(), SQL, settings)
    bad = Settings(
        store, environ={"PLANLINEAGE_LINEAGE_ADDRESS": "http://127.0.0.1:9", "PLANLINEAGE_LINEAGE_TRANSPORT": "file"}
    )
    caplog.set_level(logging.WARNING, logger="planlineage")
    assert delivery.flush(store, bad) is None  # file transport without a file: not configured
    assert outbox.count_pending(store) == 1


def test_a_state_report_the_busy_database_cannot_take_is_spooled_not_lost(store):
    import sqlite3

    settings = configured(store)
    run_id = runs.record_pending_submission(store, "app", "etl", SQL, settings)
    assert runs.attach_lineage(store, "app", run_id, single_sink_lineage())
    impatient = Store(store.path, busy_timeout=0.2)
    holder = sqlite3.connect(store.path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock for long
    try:
        assert runs.record_state(impatient, "app", "RUNNING") == "RUNNING"
        assert runs.record_state(impatient, "app", "FINISHED") == "COMPLETE"
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    spooled = sorted((store.path.parent / runs.SPOOL).glob("*.json"))
    assert len(spooled) == 2 and [t for _, t in queued(store)] == ["START"]
    assert runs.replay_spooled(store) == 2  # what the next command (or the compile service) does
    assert [t for _, t in queued(store)] == ["START", "RUNNING", "COMPLETE"]
    assert not list((store.path.parent / runs.SPOOL).glob("*.json"))


def test_a_transition_decided_on_a_changed_run_is_decided_again(store, monkeypatch):
    settings = configured(store)
    run_id = runs.record_pending_submission(store, "app", "etl", SQL, settings)
    real_build = runs.build_events
    calls = []

    def build_while_another_process_reports(*args, **kwargs):
        if not calls:  # between the decision and the write, RUNNING arrives from elsewhere
            calls.append(1)
            store.write(
                lambda c: c.execute(
                    "UPDATE runs SET pending = ?, last_event = 'RUNNING' WHERE app_id = 'app'",
                    ('[{"event": "RUNNING", "time": "2026-01-01T00:00:00.000Z", "error": null, "state": "RUNNING"}]',),
                )
            )
        return real_build(*args, **kwargs)

    monkeypatch.setattr(runs, "build_events", build_while_another_process_reports)
    assert runs.attach_lineage(store, "app", run_id, single_sink_lineage()) is True
    assert [t for _, t in queued(store)] == ["START", "RUNNING"]  # the late RUNNING was not lost


def test_a_store_locked_past_its_timeout_delays_the_lineage_but_never_loses_it(store):
    """A burst of adoptions held SQLite's lock past the busy timeout: the compile's lineage was
    taken for "superseded" and the run's every event was lost. Now the lock is waited out."""
    import sqlite3
    import threading
    import time

    run_id = runs.record_pending_submission(store, "app", "etl", SQL, configured(store))
    runs.record_state(store, "app", "RUNNING")
    impatient = Store(store.path, busy_timeout=0.2)
    holder = sqlite3.connect(store.path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock for a while
    release = threading.Timer(1.0, lambda: holder.execute("ROLLBACK"))
    release.start()
    started = time.monotonic()
    try:
        assert runs.attach_lineage(impatient, "app", run_id, single_sink_lineage()) is True
    finally:
        release.join()
        holder.close()
    assert time.monotonic() - started >= 0.9
    assert [t for _, t in queued(store)] == ["START", "RUNNING"]
