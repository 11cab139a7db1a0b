"""The outbox per backend on both stores: an old store migrated in place keeps and delivers its
rows; delivering processes sharing a store never send one event twice to one backend."""

from __future__ import annotations

import json
import multiprocessing

import psycopg
import pytest
from composite_backends import assert_each_once_in_run_order, composite, queue_runs, run_payloads
from gravitino_server import GravitinoTestServer
from old_stores import postgres_at, sqlite_at

from planlineage.emitter import outbox
from planlineage.emitter.backends import open_backends
from planlineage.store import migrations
from planlineage.store.postgres import PostgresStore
from planlineage.store.sqlite import Store

OLD_VERSION = 6 - 1  # the last step before the outbox had backends

# A version-5 outbox row as that release wrote it (no backend column).
_OLD_ROW = (
    "INSERT INTO outbox (run_id, seq, event_type, job_name, payload, status, parked, attempts, created) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'then')"
)


def _old_rows() -> tuple[list[dict], list[dict], list[tuple]]:
    """Two runs pending (one backing off before) and one parked for access: (pending payloads,
    parked payloads, rows to insert)."""
    runs = run_payloads(3)
    rows, pending, parked = [], [], []
    for index, (run_id, payloads) in enumerate(runs):
        status, kind = ("parked", "access") if index == 2 else ("pending", None)
        for seq, payload in enumerate(payloads):
            row_status, row_kind = (status, kind) if seq == 0 else ("pending", None)
            rows.append(
                (
                    run_id,
                    seq,
                    payload["eventType"],
                    payload["job"]["name"],
                    json.dumps(payload),
                    row_status,
                    row_kind,
                    1 if index == 0 and seq == 0 else 0,
                )
            )
        (parked if index == 2 else pending).extend(payloads)
    return pending, parked, rows


def _old_sqlite_store(path) -> list:
    conn = sqlite_at(path, OLD_VERSION)
    pending, parked, rows = _old_rows()
    conn.executemany(_OLD_ROW, rows)
    conn.close()
    return [pending, parked]


def _old_postgres_store(pg_url) -> list:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        postgres_at(conn, OLD_VERSION)
        pending, parked, rows = _old_rows()
        with conn.cursor() as cursor:
            cursor.executemany(_OLD_ROW.replace("?", "%s"), rows)
    return [pending, parked]


@pytest.fixture(params=["sqlite", "postgresql"])
def old_store(request, private_home):
    """A store at the version before backends, holding pending and parked rows; (store, pending, parked)."""
    if request.param == "sqlite":
        pending, parked = _old_sqlite_store(private_home / "state.db")
        return Store(private_home / "state.db"), pending, parked
    pg_url = request.getfixturevalue("pg_url")
    pending, parked = _old_postgres_store(pg_url)
    return PostgresStore(pg_url, private_home), pending, parked


def test_an_old_store_is_migrated_in_place_and_its_pending_rows_deliver_as_before(old_store):
    store, pending, parked = old_store
    assert store.migrate() == (OLD_VERSION, migrations.LATEST)
    rows = store.rows("SELECT backend, status, parked, attempts FROM outbox ORDER BY id")
    assert len(rows) == len(pending) + len(parked) and {r["backend"] for r in rows} == {""}
    assert [r["status"] for r in rows].count("parked") == 1 and rows[0]["attempts"] == 1
    with GravitinoTestServer() as server:
        report = outbox.deliver_pending(store, open_backends("gravitino", {"address": server.address}), 10)
        assert_each_once_in_run_order(server, pending)  # through the one transport, as before
    assert report.remaining == len(parked) - 1 and report.parked_total == 1  # the parked run still waits
    assert outbox.retry(store) == 1
    with GravitinoTestServer() as a, GravitinoTestServer() as b:  # then a composite takes over
        more = queue_runs(store, 1)
        report = outbox.deliver_pending(store, open_backends("composite", composite(a=a, b=b)), 10)
        assert report.remaining == 0 and report.parked_total == 0
        assert_each_once_in_run_order(a, parked + more)
        assert_each_once_in_run_order(b, parked + more)


def test_an_old_store_with_a_composite_fans_its_pending_rows_out_to_every_backend(old_store):
    store, pending, parked = old_store
    with GravitinoTestServer() as a, GravitinoTestServer() as b:
        b.down()
        backends = open_backends("composite", composite(a=a, b=b))
        outbox.deliver_pending(store, backends, 10)  # migrates on its first write
        assert_each_once_in_run_order(a, pending + parked)  # a parked '' row goes to each backend afresh
        # b leaves the composite: its rows are parked saying so (the migrated CHECK takes the kind)
        report = outbox.deliver_pending(store, open_backends("composite", composite(a=a)), 10)
        assert report.parked_total == len(pending + parked) and report.remaining == 0
        assert {r["state"] for r in outbox.listing(store, backend="b")} == {"parked (backend)"}
        b.up()
        report = outbox.deliver_pending(store, backends, 10)  # b is back: its rows go again
        assert report.remaining == 0
        assert_each_once_in_run_order(b, pending + parked)
    # a new row of a backend and its uniqueness: (backend, run, job, eventType)
    assert store.rows("SELECT COUNT(*) AS n FROM outbox") == [{"n": 0}]


def _deliver_worker(where: str, home: str, options: dict, barrier) -> None:
    from pathlib import Path

    store = PostgresStore(where, Path(home)) if where.startswith("postgresql") else Store(where)
    backends = open_backends("composite", options)
    barrier.wait(20)
    for _ in range(4):
        outbox.deliver_pending(store, backends, 20, batch=3)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_delivering_processes_sharing_a_store_never_send_an_event_twice_to_one_backend(backend, private_home, request):
    if backend == "sqlite":
        store, where = Store(private_home / "state.db"), str(private_home / "state.db")
    else:
        where = request.getfixturevalue("pg_url")
        store = PostgresStore(where, private_home)
    queued = queue_runs(store, 8)
    context = multiprocessing.get_context("fork")
    with GravitinoTestServer(delay=0.01) as a, GravitinoTestServer(delay=0.005) as b:
        barrier = context.Barrier(3)
        workers = [
            context.Process(target=_deliver_worker, args=(where, str(private_home), composite(a=a, b=b), barrier))
            for _ in range(3)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(120)
        assert [w.exitcode for w in workers] == [0, 0, 0]
        assert_each_once_in_run_order(a, queued)
        assert_each_once_in_run_order(b, queued)
    assert outbox.count_pending(store) == 0


def test_an_old_store_not_written_since_the_upgrade_is_listed_without_migrating_it(old_store):
    store, pending, parked = old_store
    listed = outbox.listing(store)
    assert len(listed) == len(pending) + len(parked) and {r["backend"] for r in listed} == {""}
    assert outbox.listing(store, backend="a") == []
    assert store.schema_version() == OLD_VERSION  # reading changed nothing


def test_a_salvaged_store_keeps_each_rows_backend(store, private_home):
    from planlineage.store import recovery

    queued = queue_runs(store, 1)
    with GravitinoTestServer() as a, GravitinoTestServer() as b:
        b.down()
        outbox.deliver_pending(store, open_backends("composite", composite(a=a, b=b)), 10)
    queue_runs(store, 1)  # and one not fanned out yet
    salvaged = recovery.read_salvage(store.path)
    fresh = Store(private_home / "fresh.db")
    assert fresh.write(lambda conn: recovery.copy_into(conn, salvaged))[1] == len(queued) + 3
    assert fresh.rows("SELECT backend, COUNT(*) AS n FROM outbox GROUP BY backend ORDER BY backend") == [
        {"backend": "", "n": 3},
        {"backend": "b", "n": len(queued)},
    ]
