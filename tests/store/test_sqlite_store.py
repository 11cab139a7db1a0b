"""The SQLite state store: created only on writes, WAL, corruption moved aside."""

from __future__ import annotations

import logging
import os
import stat

import pytest

from planlineage.emitter import outbox
from planlineage.errors import StoreError
from planlineage.settings import Settings
from planlineage.store.sqlite import DB_NAME, Store, home_dir


def test_home_dir_from_env_and_default(monkeypatch, tmp_path):
    assert home_dir({"PLANLINEAGE_HOME": str(tmp_path)}) == tmp_path
    import platformdirs

    assert home_dir({}) == __import__("pathlib").Path(platformdirs.user_data_dir("planlineage"))
    assert Store().path == home_dir() / DB_NAME  # the autouse fixture points it at tmp


def test_reads_do_not_create_anything(store, private_home):
    assert store.read(lambda c: 1, default="nothing") == "nothing"
    assert store.rows("SELECT * FROM settings") == []
    assert Settings(store).get("lineage.namespace") == "planlineage"
    assert outbox.pending(store) == [] and outbox.count_pending(store) == 0
    assert not private_home.exists()


def test_write_creates_private_wal_database(store, private_home):
    store.write(
        lambda c: c.execute(
            "INSERT INTO runs (app_id, run_id, job_name, namespace, created, updated) VALUES ('k', 'v', 'j', 'n', 'now', 'now')"
        )
    )
    assert store.exists()
    assert store.journal_mode() == "wal"
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(private_home).st_mode) == 0o700
    assert store.rows("SELECT app_id, run_id FROM runs") == [{"app_id": "k", "run_id": "v"}]
    tables = {r["name"] for r in store.rows("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"runs", "outbox"} <= tables and "settings" not in tables  # settings live in their own file


def test_failed_write_rolls_back(store):
    store.write(lambda c: None)

    def boom(conn):
        conn.execute(
            "INSERT INTO runs (app_id, run_id, job_name, namespace, created, updated) VALUES ('k', 'v', 'j', 'n', 'now', 'now')"
        )
        raise RuntimeError("midway")

    with pytest.raises(RuntimeError):
        store.write(boom)
    assert store.rows("SELECT * FROM runs") == []


def test_outbox_uniqueness_per_run_job_and_event_type(store):
    payload = {"job": {"name": "j"}, "eventType": "START"}
    assert outbox.enqueue(store, "run-1", [payload, payload]) == 1
    assert outbox.enqueue(store, "run-1", [payload]) == 0
    assert outbox.enqueue(store, "run-2", [payload]) == 1
    assert [r["seq"] for r in outbox.pending(store)] == [0, 0]


@pytest.mark.parametrize("garbage", [b"this is not a database at all" * 100, b"\x00" * 10])
def test_corrupt_database_is_moved_aside_and_replaced(store, private_home, caplog, garbage):
    private_home.mkdir(parents=True)
    store.path.write_bytes(garbage if len(garbage) > 100 else b"SQLite format 3\x00" + b"\xff" * 4000)
    caplog.set_level(logging.WARNING, logger="planlineage.emitter")
    settings = Settings(store)
    settings.set("lineage.address", "http://127.0.0.1:9")
    assert settings.get("lineage.address") == "http://127.0.0.1:9"
    moved = [p.name for p in private_home.iterdir() if ".corrupt-" in p.name]
    assert len(moved) == 1 and moved[0].startswith("state.db.corrupt-")
    records = [r for r in caplog.records if "corrupt" in r.getMessage()]
    assert len(records) == 1 and records[0].exc_info is None
    assert "\n" not in records[0].getMessage()


def test_corrupt_database_on_a_read_answers_default(store, private_home):
    private_home.mkdir(parents=True)
    store.path.write_bytes(b"garbage" * 1000)
    assert Settings(store).get("lineage.address") is None
    assert not store.exists()  # moved aside, not recreated by a read


def test_unusable_location_is_a_store_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(StoreError) as info:
        Store(blocker / "state.db").write(lambda c: None)
    assert "Traceback" not in str(info.value)
