"""The PostgreSQL store in one process: dialect, URL, migrations in an own schema, outbox claims
across concurrent flushers, compile-job leases, leadership."""

from __future__ import annotations

import os
import threading
import time
from collections import Counter

import psycopg
import pytest
from databases import PASSWORD
from gravitino_server import GravitinoTestServer

from planlineage.emitter import outbox
from planlineage.emitter.transports import create_transport
from planlineage.errors import StoreError, StoreUrlError
from planlineage.lifecycle import compile_jobs
from planlineage.settings import Settings
from planlineage.store import leadership, migrations, open_store, status
from planlineage.store.dialect import to_pyformat
from planlineage.store.postgres import PostgresStore
from planlineage.store.sqlite import Store
from planlineage.store.url import masked, parse


def event(run: str, job: str, kind: str, seq: int) -> dict:
    return {
        "eventType": kind,
        "eventTime": f"2026-01-01T00:00:{seq:02d}Z",
        "producer": "https://example.org/planlineage-test",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent",
        "run": {"runId": run},
        "job": {"namespace": "ns", "name": job},
        "inputs": [],
        "outputs": [],
    }


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT * FROM t WHERE a = ? AND b = ?", "SELECT * FROM t WHERE a = %s AND b = %s"),
        ("UPDATE t SET x = :x WHERE y < :now_1", "UPDATE t SET x = %(x)s WHERE y < %(now_1)s"),
        ("SELECT 'a?b :c 50%' , \"q?\" FROM t WHERE v LIKE ?", "SELECT 'a?b :c 50%%' , \"q?\" FROM t WHERE v LIKE %s"),
        ("SELECT now()::float8, 5 % 2 FROM t WHERE a = ?", "SELECT now()::float8, 5 %% 2 FROM t WHERE a = %s"),
    ],
)
def test_sqlite_parameters_become_psycopg_parameters(sql, expected):
    assert to_pyformat(sql) == expected


def test_store_url_parsing_and_masking():
    url = parse("postgresql://lin:FAKE-pw@db.example:5432/platform?schema=lineage_a&sslmode=disable")
    assert url.schema == "lineage_a" and "schema" not in url.conninfo and "sslmode=disable" in url.conninfo
    assert url.masked == "postgresql://lin:***@db.example:5432/platform?schema=lineage_a&sslmode=disable"
    assert "FAKE" not in masked("postgres://u:FAKE@h/d?password=FAKE2")
    assert parse("postgres://u@h/d").schema == "planlineage"
    for bad, says in [
        ("mysql://u:p@h/d", "not supported"),
        ("postgresql:///d", "no host"),
        ("postgresql://u:p@h:5432", "no database"),
        ("postgresql://u:p@h/d?schema=Drop;x", "identifier"),
    ]:
        with pytest.raises(StoreUrlError, match=says) as caught:
            parse(bad)
        assert "p@" not in str(caught.value)


def test_migrations_create_only_the_own_schema_and_run_once(postgres, pg_url, private_home):
    store = PostgresStore(pg_url, private_home)
    assert store.schema_version() == 0
    assert Settings(store).get("lineage.namespace") == "planlineage"  # a read creates nothing
    assert outbox.count_pending(store) == 0
    assert (
        postgres.psql("SELECT count(*) FROM pg_namespace WHERE nspname = 'planlineage'", pg_url.rsplit("/", 1)[1])
        == "0\n"
    )
    assert store.migrate() == (0, migrations.LATEST)
    assert PostgresStore(pg_url, private_home).migrate() == (migrations.LATEST, migrations.LATEST)
    database = pg_url.rsplit("/", 1)[1]
    tables = postgres.psql(
        "SELECT table_schema || '.' || table_name FROM information_schema.tables "
        "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1",
        database,
    ).split()
    assert tables == [
        "planlineage.closing",
        "planlineage.compile_jobs",
        "planlineage.dropped_runs",
        "planlineage.gateway_jobs_seen",
        "planlineage.gateway_sessions",
        "planlineage.gateway_statements",
        "planlineage.history_runs",
        "planlineage.leaders",
        "planlineage.outbox",
        "planlineage.outbox_backends",
        "planlineage.runs",
        "planlineage.schema_version",
        "planlineage.settings",
        "planlineage.watch_compiles",
        "planlineage.watch_cursors",
        "planlineage.watch_jobs",
    ]
    assert not private_home.exists()  # nothing of the node's home is written for a PostgreSQL store


def test_other_schema_and_newer_schema_refused(postgres, pg_url, private_home):
    other = PostgresStore(pg_url + "?schema=lineage_b", private_home)
    Settings(other).set("lineage.namespace", "b")
    assert Settings(PostgresStore(pg_url, private_home)).get("lineage.namespace") == "planlineage"
    with psycopg.connect(pg_url) as conn:
        conn.execute("INSERT INTO lineage_b.schema_version VALUES (99, 'from the future', 'now', 'x')")
    with pytest.raises(StoreError, match="newer than this planlineage knows") as caught:
        PostgresStore(pg_url + "?schema=lineage_b", private_home).write(lambda c: None)
    assert PASSWORD not in str(caught.value)


def test_unreachable_store_is_one_masked_line_within_the_bound(private_home):
    from databases import free_port

    store = PostgresStore(f"postgresql://u:{PASSWORD}@127.0.0.1:{free_port()}/db", private_home)
    started = time.monotonic()
    with pytest.raises(StoreError) as caught:
        store.write(lambda c: None)
    assert time.monotonic() - started < 4
    assert PASSWORD not in str(caught.value) and "\n" not in str(caught.value) and "cannot connect" in str(caught.value)


def test_open_store_follows_env_then_local_file(pg_url, private_home, monkeypatch):
    assert isinstance(open_store(), Store)
    Settings().set("lineage.store", pg_url)
    assert isinstance(open_store(), PostgresStore)
    monkeypatch.setenv("PLANLINEAGE_STORE", "postgresql://x:FAKE@127.0.0.1:1/other")
    assert "other" in open_store().describe() and "FAKE" not in open_store().describe()
    monkeypatch.setenv("PLANLINEAGE_STORE", "sqlite:///tmp/x")
    with pytest.raises(StoreError, match="PLANLINEAGE_STORE: store URL scheme 'sqlite'"):
        open_store()


def test_four_concurrent_flushers_deliver_each_event_once_in_run_order(pg_url, private_home):
    runs = [f"0190f1e2-0000-7000-8000-{i:012d}" for i in range(20)]
    kinds = ["START", "RUNNING", "COMPLETE"]
    store = PostgresStore(pg_url, private_home)
    for kind_index, kind in enumerate(kinds):  # interleaved across runs, as the lifecycle queues them
        for run in runs:
            outbox.enqueue(store, run, [event(run, "job", kind, kind_index)])
    with GravitinoTestServer() as server:
        reports = []

        def flusher():
            own = PostgresStore(pg_url, private_home)  # one connection per flusher, like separate nodes
            with create_transport("gravitino", {"address": server.address}) as transport:
                reports.append(outbox.deliver_pending(own, transport, 30, batch=5))
            own.close()

        threads = [threading.Thread(target=flusher) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sum(r.delivered for r in reports) == 60
        assert sum(1 for r in reports if r.delivered) >= 2  # the flushers really ran side by side
        assert set(server.keys().values()) == {1} and len(server.keys()) == 60
        order: dict[str, list[str]] = {}
        for item in server.events:
            order.setdefault(item["run"]["runId"], []).append(item["eventType"])
        assert all(seen == kinds for seen in order.values())
    assert outbox.count_pending(store) == 0


def test_compile_job_lease_expires_and_is_claimed_once(pg_url, private_home):
    store = PostgresStore(pg_url, private_home)
    compile_jobs.put(store, {"run_id": "r1", "app_id": "a1", "sql": "x"})
    assert compile_jobs.expired(store) == 1  # new: waits for any node's service
    job, attempt = compile_jobs.claim_next(store, "node-a:1:aa", 0.6)
    assert job["app_id"] == "a1" and attempt == 1
    assert compile_jobs.expired(store) == 0
    assert compile_jobs.claim_next(store, "node-b:2:bb", 10) is None  # leased to node-a
    assert status.collect(store)["leases"] == {"node-a": {"compile": 1}}
    assert compile_jobs.renew_all(store, "node-a:1:aa", 0.6) == 1
    assert compile_jobs.renew_all(store, "node-c:3:cc", 10) == 0
    time.sleep(0.8)  # node-a died: no more renewals
    assert compile_jobs.expired(store) == 1
    results = []
    threads = [
        threading.Thread(
            target=lambda h=h: results.append(compile_jobs.claim_next(PostgresStore(pg_url, private_home), h, 10))
        )
        for h in ("node-b:2:bb", "node-c:3:cc")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    claimed = [r for r in results if r is not None]
    assert len(claimed) == 1 and claimed[0][0]["app_id"] == "a1" and claimed[0][1] == 2
    assert compile_jobs.renew_all(store, "node-a:1:aa", 10) == 0  # the dead node's lease is gone
    compile_jobs.finish(store, "r1")
    assert compile_jobs.expired(store) == 0


def test_leadership_one_leader_renew_release(pg_url, private_home):
    one = leadership.Leadership(PostgresStore(pg_url, private_home), "watch", interval=0.4, holder="node-a:1:aa")
    two = leadership.Leadership(PostgresStore(pg_url, private_home), "watch", interval=0.4, holder="node-b:2:bb")
    assert one.acquire() and not two.acquire()
    assert one.renew() and one.acquire() and not two.renew()
    current = one.leader()
    assert current.node == "node-a" and current.alive
    one.release()
    assert two.acquire() and not one.acquire()
    assert status.collect(two.store)["leaders"][0]["node"] == "node-b"


def test_leadership_passes_within_two_intervals_when_the_leader_stops_renewing(pg_url, private_home):
    interval = 0.6
    leader = leadership.Leadership(PostgresStore(pg_url, private_home), "watch", interval=interval, holder="a:1:x")
    follower = leadership.Leadership(PostgresStore(pg_url, private_home), "watch", interval=interval, holder="b:2:y")
    assert leader.acquire()
    died = time.monotonic()  # the leader dies right after renewing: the worst case
    while not follower.acquire():
        time.sleep(follower.follower_poll)
    took = time.monotonic() - died
    assert 1.5 * interval - 0.1 <= took <= 2 * interval + 0.2, took
    assert Counter(item.holder for item in leadership.leaders(follower.store)) == Counter({"b:2:y": 1})


LEADER_LOOP = """
import sys, time
from planlineage.store.leadership import Leadership
from planlineage.store.postgres import PostgresStore
lead = Leadership(PostgresStore(sys.argv[1]), "watch", interval=float(sys.argv[2]), holder="node-a:leader:1")
while True:
    if lead.acquire():
        print("leading", flush=True)
        time.sleep(lead.interval)
    else:
        time.sleep(lead.follower_poll)
"""


def test_a_killed_leader_is_replaced_within_two_intervals(pg_url, private_home):
    import signal
    import subprocess
    import sys

    interval = 1.0
    process = subprocess.Popen(
        [sys.executable, "-c", LEADER_LOOP, pg_url, str(interval)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout.readline().strip() == "leading"
        follower = leadership.Leadership(PostgresStore(pg_url, private_home), "watch", interval=interval)
        for _ in range(3):  # a live leader keeps the lead
            assert not follower.acquire()
            time.sleep(follower.follower_poll)
        assert follower.leader().node == "node-a"
        process.send_signal(signal.SIGKILL)
        process.wait()
        died = time.monotonic()
        while not follower.acquire():
            time.sleep(follower.follower_poll)
        assert time.monotonic() - died <= 2 * interval + 0.3
        assert follower.leader().holder == follower.holder
    finally:
        process.kill()
        process.wait()


def test_the_core_never_imports_psycopg_without_a_postgresql_url(private_home):
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from planlineage.cli import main\n"
        "from planlineage.store import open_store, status\n"
        "from planlineage.settings import Settings\n"
        "store = open_store(); Settings(store).set('lineage.namespace', 'x'); status.collect(store)\n"
        "assert 'psycopg' not in sys.modules, 'psycopg imported'\n"
        "print(type(store).__name__)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Store"


def test_a_version_1_store_is_migrated_in_place_keeping_its_rows(pg_url, private_home):
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA planlineage")
        conn.execute("SET search_path TO planlineage")
        for statement in migrations.steps_after(0, "postgresql")[0][2]:
            conn.execute(statement)
        conn.execute(
            "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, description TEXT NOT NULL, "
            "applied TEXT NOT NULL, node TEXT NOT NULL)"
        )
        conn.execute("INSERT INTO schema_version VALUES (1, 'v1', 'then', 'old-node')")
        for status_value in ("pending", "rejected"):
            conn.execute(
                "INSERT INTO outbox (run_id, seq, event_type, job_name, payload, status, created) "
                "VALUES ('r', %s, %s, 'j', '{}', %s, 'then')",
                (
                    0 if status_value == "pending" else 1,
                    "START" if status_value == "pending" else "RUNNING",
                    status_value,
                ),
            )
    store = PostgresStore(pg_url, private_home)
    assert store.migrate() == (1, migrations.LATEST)
    rows = store.rows("SELECT event_type, status, parked FROM outbox ORDER BY seq")
    assert rows == [
        {"event_type": "START", "status": "pending", "parked": None},
        {"event_type": "RUNNING", "status": "parked", "parked": "access"},
    ]
    outbox.enqueue(store, "r", [event("r", "j", "COMPLETE", 2)])  # ids continue after the old rows
    assert [r["event_type"] for r in store.rows("SELECT event_type FROM outbox ORDER BY id")] == [
        "START",
        "RUNNING",
        "COMPLETE",
    ]
    assert status.collect(store)["outbox"] == {"pending": 2, "parked": 1, "parked access": 1}


def _kafka_to_jdbc():
    from planlineage.document import JobLineage, SinkLineage, TableLineage
    from planlineage.registry import resolve

    def table(name: str, options: dict) -> TableLineage:
        return TableLineage(table=name, connector=options["connector"], datasets=resolve(options, table=name).datasets)

    orders = table(
        "default_catalog.default_database.orders",
        {"connector": "kafka", "topic": "orders", "properties.bootstrap.servers": "kafka-1.prod:9092"},
    )
    sink = table(
        "default_catalog.default_database.summary",
        {"connector": "jdbc", "url": "jdbc:postgresql://warehouse.prod:5432/analytics", "table-name": "summary"},
    )
    return JobLineage(
        flink_version="1.20.5",
        sinks=[SinkLineage(table=sink.table, connector="jdbc", datasets=sink.datasets, inputs=[orders])],
    )


def test_doctor_and_graph_read_the_runs_of_the_shared_store(pg_url, private_home, monkeypatch, capsys, tmp_path):
    from planlineage.cli.main import main
    from planlineage.lifecycle import runs

    monkeypatch.setenv("PLANLINEAGE_STORE", pg_url)
    store = open_store()
    settings = Settings(store)
    settings.set("lineage.transport", "file")
    settings.set("lineage.file", str(tmp_path / "events.jsonl"))
    assert runs.record_submission(store, "app-1", "orders-summary", _kafka_to_jdbc(), None, settings)
    runs.record_state(store, "app-1", "RUNNING")
    capsys.readouterr()

    assert main(["doctor", "--state"]) == 0
    out = capsys.readouterr().out
    assert "PostgreSQL postgresql://postgres:***@" in out and "1 recorded run(s)" in out, out
    assert "2 dataset(s)" in out and PASSWORD not in out
    assert main(["graph", "--state", "--format", "dot"]) == 0
    dot = capsys.readouterr().out
    assert "orders-summary" in dot and "summary" in dot and PASSWORD not in dot

    monkeypatch.setenv("PLANLINEAGE_STORE", f"postgresql://u:{PASSWORD}@127.0.0.1:1/nowhere")
    assert main(["doctor", "--state"]) == 2  # unreachable: said, not "nothing to fix"
    err = capsys.readouterr().err
    assert "cannot connect" in err and "lineage.store" in err and PASSWORD not in err


@pytest.mark.parametrize(
    ("url", "part"),
    [
        (f"postgresql://u:{PASSWORD}%zz@127.0.0.1:5432/db", "password"),
        (f"postgresql://u:{PASSWORD}%@127.0.0.1:5432/db", "password"),
        (f"postgresql://u%g1:{PASSWORD}@127.0.0.1:5432/db", "user name"),
        (f"postgresql://u:{PASSWORD}@127.0.0.1:5432/d%zzb", "database name"),
    ],
)
def test_an_invalid_percent_escape_is_a_clear_error_naming_the_setting(url, part, private_home):
    import subprocess
    import sys

    with pytest.raises(StoreUrlError, match=f"the {part} of the store URL holds a % that starts no %XX escape"):
        parse(url)
    assert parse(url.replace("%zz", "%25zz").replace("%@", "%25@").replace("%g1", "%25g1")).schema == "planlineage"
    env = {
        "PLANLINEAGE_HOME": str(private_home),
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }
    for args, extra, setting in (
        (["state", "--app-id", "a", "--state", "RUNNING"], {"PLANLINEAGE_STORE": url}, "PLANLINEAGE_STORE"),
        (["store", "status"], {"PLANLINEAGE_STORE": url}, "PLANLINEAGE_STORE"),
        (["settings", "set", "lineage.store", url], {}, "lineage.store"),
    ):
        result = subprocess.run(
            [sys.executable, "-P", "-m", "planlineage", *args], capture_output=True, text=True, env={**env, **extra}
        )
        assert "Traceback" not in result.stderr and PASSWORD not in result.stderr + result.stdout
        assert f"{setting}: the {part} of the store URL" in result.stderr, result.stderr
        assert "write a literal % as %25" in result.stderr
    assert not (private_home / "spool").exists()  # a wrong URL is no outage: nothing kept for later


def test_settings_version_follows_a_setting_made_by_another_node(pg_url, private_home, tmp_path):
    here = Settings(PostgresStore(pg_url, private_home))
    before = here.version()
    assert here.version() == before  # nothing changed: a delivery under way goes on
    Settings(PostgresStore(pg_url, tmp_path / "other-node")).set("lineage.token", "FAKE-token-two")
    changed = here.version()
    assert changed != before and "FAKE-token-two" not in repr(changed)  # a digest, never the value
    Settings(PostgresStore(pg_url, tmp_path / "other-node")).unset("lineage.token")
    assert here.version() == before  # the same settings again: the same version


def test_an_unreadable_spooled_item_is_dropped_with_a_warning_and_the_rest_replayed(pg_url, private_home, caplog):
    from planlineage.lifecycle import runs, spool

    store = PostgresStore(pg_url, private_home)
    Settings(store).set("lineage.address", "http://127.0.0.1:9")
    assert runs.submit_pending(store, "app-1", "etl", Settings(store), "01a234d2-0000-7000-8000-000000000001")
    (private_home / "spool").mkdir(mode=0o700, parents=True)
    (private_home / "spool" / "00000000000000000001-1.json").write_text('{"kind": "submit", "job": {}}')
    spool.put(store, "app-1", "RUNNING", None, "2026-01-01T00:00:00.000Z")
    assert runs.replay_spooled(store) == 2
    assert "is not a report planlineage can read: dropped" in caplog.text
    assert store.rows("SELECT last_event FROM runs") == [{"last_event": "RUNNING"}]
    assert not spool.waiting(store)


def test_a_compile_service_whose_store_is_away_tries_once_a_second_and_logs_as_often(private_home, caplog):
    import logging

    from databases import free_port

    from planlineage.lifecycle import compile_service, spool

    store = PostgresStore(f"postgresql://u:{PASSWORD}@127.0.0.1:{free_port()}/db", private_home)
    spool.put(store, "app-1", "RUNNING", None, "2026-01-01T00:00:00.000Z")  # waits for the store
    service = compile_service.Service(store, 1, idle_seconds=60)
    caplog.set_level(logging.WARNING, "planlineage.compile_service")
    thread = threading.Thread(target=service.serve, args=(0,), daemon=True)
    thread.start()
    time.sleep(2.5)
    service.stopping.set()
    thread.join(10)
    claims = [r for r in caplog.records if "shared compile jobs not claimed" in r.getMessage()]
    assert 2 <= len(claims) <= 4, len(claims)  # not one every 0.2 s poll
    assert spool.waiting(store)  # kept for when the store is back
    assert PASSWORD not in caplog.text
