"""The watcher core fed by typed records, as a third adapter (the SQL Gateway's JobManager poller)
feeds it: a JobSeen becomes the lifecycle's state call and one line per event; a run a history
replay reported is continued, never started twice.  Real store, real lifecycle, no platform."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest
from emitter_fixtures import single_sink_lineage

from planlineage.history import ledger as history_ledger
from planlineage.lifecycle import runs
from planlineage.settings import Settings
from planlineage.store.sqlite import Store
from planlineage.watch import transitions
from planlineage.watch.loop import PlatformWatcher
from planlineage.watch.records import JobSeen
from planlineage.watch.url import parse

SQL = "INSERT INTO sink SELECT * FROM orders"


@pytest.fixture
def store(clean_env) -> Store:
    return Store(clean_env / "state.db")


@pytest.fixture
def settings(store) -> Settings:
    return Settings(store, environ={"PLANLINEAGE_LINEAGE_ADDRESS": "http://127.0.0.1:9"})


def _watcher(store, settings, lines: list[str]) -> PlatformWatcher:
    target = parse("postgresql://watcher@db.example:5432/jobs", platform="Test", flag="--test-db")
    return PlatformWatcher(target, store, settings, SimpleNamespace(verbose=True), say=lines.append)


def _events(store) -> list[dict]:
    runs.materialize(store)
    return [json.loads(r["payload"]) for r in store.rows("SELECT payload FROM outbox ORDER BY id")]


def test_a_job_seen_in_a_state_is_told_to_its_run_once_with_its_time_and_error(store, settings):
    lines: list[str] = []
    watcher = _watcher(store, settings, lines)
    run_id = runs.record_submission(store, "test:1", "orders", single_sink_lineage(), SQL, settings)
    assert watcher.report(JobSeen("test:1", "orders", "RUNNING", "a" * 32), "CREATED -> RUNNING") == "RUNNING"
    assert watcher.report(JobSeen("test:1", "orders", "RUNNING", "a" * 32)) is None  # told once
    assert watcher.report(JobSeen("test:1", "orders", "RESTARTING", "a" * 32)) is None  # no event for it
    failed = JobSeen("test:1", "orders", "FAILED", "a" * 32, error="boom: the sink is gone", at="2026-01-02T03:04:05Z")
    assert watcher.report(failed) == "FAIL"
    assert lines == [
        "test:1 orders: CREATED -> RUNNING: RUNNING event",
        "test:1 orders: RUNNING (no event)",
        "test:1 orders: RESTARTING (no event)",
        "test:1 orders: FAILED: FAIL event",
    ]
    [fail] = [e for e in _events(store) if e["eventType"] == "FAIL"]
    assert fail["run"]["runId"] == run_id and fail["eventTime"].startswith("2026-01-02T03:04:05")
    assert "boom: the sink is gone" in fail["run"]["facets"]["errorMessage"]["message"]
    assert transitions.open_run(store, "test:1") is None


def test_a_replayed_run_is_continued_while_open_and_never_started_again(store, settings):
    began = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    key = "test:instance=7"
    assert transitions.replayed(store, key, "test:7") is None  # never reported: the watcher starts it
    run_id = runs.record_submission(
        store, "test:7", "orders", single_sink_lineage(), SQL, settings, run_id=history_ledger.run_id_for(key, began)
    )
    history_ledger.mark(store, key, run_id, "test:7", began, "replay")
    assert transitions.replayed(store, key, "test:7") is True  # its open run: continued
    assert transitions.replayed(store, key, "test:7", known={key: run_id}) is True
    lines: list[str] = []
    _watcher(store, settings, lines).close_open_run("test:7", "orders")  # a new start replaces it
    assert lines == ["test:7 orders: previous run never ended, closed: ABORT event"]
    assert transitions.replayed(store, key, "test:7") is False  # reported and ended: nothing to start
