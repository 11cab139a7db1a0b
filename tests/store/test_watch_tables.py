"""Step 9 of the store's migrations on both backends: a store at step 8 holding a platform
watcher's cursor, snapshot and compiles under their StreamPark names keeps every row under the
platform-neutral names, and the watcher's ledger continues from them."""

from __future__ import annotations

import psycopg
import pytest
from old_stores import postgres_at, sqlite_at

from planlineage.store import migrations
from planlineage.store.postgres import PostgresStore
from planlineage.store.sqlite import Store
from planlineage.watch import ledger

BEFORE = 9 - 1  # the last step with the StreamPark names

SOURCE = "mysql://db.example:3306/streampark"
_STEP_8_ROWS = (
    ("INSERT INTO streampark_watch (source, cursor, updated) VALUES (?, ?, ?)", [(SOURCE, 41, "then tag")]),
    (
        "INSERT INTO streampark_apps (source, app_key, state, job_id, run_job_id, lost_since, lost_sent) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(SOURCE, "flink:7", 5, "a" * 32, "logged:12", None, 0), (SOURCE, "flink:8", 13, "b" * 32, None, 1.5, 1)],
    ),
    (
        "INSERT INTO streampark_compiles (run_id, source, app_key, job_name, started) VALUES (?, ?, ?, ?, ?)",
        [("0190f1e2-0000-7000-8000-000000000007", SOURCE, "flink:7", "orders", 1700000000.0)],
    ),
)


def _sqlite_at_step_8(path) -> Store:
    conn = sqlite_at(path, BEFORE)
    for insert, rows in _STEP_8_ROWS:
        conn.executemany(insert, rows)
    conn.close()
    return Store(path)


def _postgres_at_step_8(pg_url, home) -> PostgresStore:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        postgres_at(conn, BEFORE)
        with conn.cursor() as cursor:
            for insert, rows in _STEP_8_ROWS:
                cursor.executemany(insert.replace("?", "%s"), rows)
    return PostgresStore(pg_url, home)


@pytest.fixture(params=["sqlite", "postgresql"])
def step_8_store(request, private_home):
    if request.param == "sqlite":
        return _sqlite_at_step_8(private_home / "state.db")
    return _postgres_at_step_8(request.getfixturevalue("pg_url"), private_home)


def test_a_step_8_store_keeps_the_watchers_rows_under_the_platform_neutral_names(step_8_store):
    store = step_8_store
    assert store.migrate() == (BEFORE, migrations.LATEST)
    assert store.rows("SELECT source, cursor, updated FROM watch_cursors") == [
        {"source": SOURCE, "cursor": 41, "updated": "then tag"}
    ]
    assert store.rows(
        "SELECT source, job_key, state, job_id, run_job_id, lost_since, lost_sent FROM watch_jobs ORDER BY job_key"
    ) == [
        {
            "source": SOURCE,
            "job_key": "flink:7",
            "state": 5,
            "job_id": "a" * 32,
            "run_job_id": "logged:12",
            "lost_since": None,
            "lost_sent": 0,
        },
        {
            "source": SOURCE,
            "job_key": "flink:8",
            "state": 13,
            "job_id": "b" * 32,
            "run_job_id": None,
            "lost_since": 1.5,
            "lost_sent": 1,
        },
    ]
    assert store.rows("SELECT run_id, source, job_key, job_name, started FROM watch_compiles") == [
        {
            "run_id": "0190f1e2-0000-7000-8000-000000000007",
            "source": SOURCE,
            "job_key": "flink:7",
            "job_name": "orders",
            "started": 1700000000.0,
        }
    ]
    # The ledger reads them as it read the old tables, and its keys still hold one row per job.
    cursor, snapshot = ledger.load(store, SOURCE)
    assert cursor == 41 and snapshot["flink:8"] == ledger.Snap(13, "b" * 32, None, 1.5, True)
    ledger.save_app(store, SOURCE, "flink:8", ledger.Snap(5, "c" * 32, "job:" + "c" * 32))
    assert ledger.load(store, SOURCE)[1]["flink:8"].job_id == "c" * 32
    assert len(store.rows("SELECT job_key FROM watch_jobs")) == 2
    assert [c["job_key"] for c in ledger.compiles(store, SOURCE)] == ["flink:7"]
