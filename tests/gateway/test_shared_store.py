"""Two proxies behind a balancer on one shared PostgreSQL store (a private real server,
tests/databases.py): a session's statements go to either, in order; each job is handed over
once, by whichever proxy saw its job id first; a restarted proxy goes on from the store."""

from __future__ import annotations

import itertools
import os
import time

import pytest
from databases import postgres_server

from planlineage.gateway import ledger
from planlineage.gateway.recorder import Recorder
from planlineage.store.postgres import PostgresStore

_names = itertools.count()


@pytest.fixture(scope="module")
def postgres():
    with postgres_server() as server:
        yield server


@pytest.fixture
def pg_store(postgres, tmp_path):
    url = postgres.create_database(f"gw{os.getpid()}_{next(_names)}")
    store = PostgresStore(url, tmp_path)
    yield url, store
    store.close()


def test_two_proxies_on_one_postgresql_store_share_sessions_and_hand_each_job_over_once(
    upstream, pg_store, start_proxy, client_of, tmp_path
):
    url, store = pg_store
    handed: dict[str, list] = {"a": [], "b": []}
    proxies = {
        name: start_proxy(upstream.url, Recorder(upstream.url, PostgresStore(url, tmp_path), handed[name].append))
        for name in handed
    }
    a, b = client_of(proxies["a"].url), client_of(proxies["b"].url)
    session = a.open({"pipeline.name": "shared"})
    b.call("POST", f"/sessions/{session}/configure-session", {"statement": "SET 'a' = 'b'"})
    assert proxies["b"].recorder.wait_idle(10)
    a.run(session, "CREATE TABLE t (x INT) WITH ('connector' = 'blackhole')")
    assert proxies["a"].recorder.wait_idle(10)
    operation = b.run(session, "INSERT INTO t SELECT 1")
    assert proxies["b"].recorder.wait_idle(10)
    for client, proxy in ((a, proxies["a"]), (b, proxies["b"]), (a, proxies["a"])):
        client.fetch(session, operation)
        assert proxy.recorder.wait_idle(10)

    jobs = handed["a"] + handed["b"]
    assert [job.job_id for job in jobs] == [upstream.jobs[operation]]
    assert jobs[0].statements == (
        "SET 'a' = 'b'",
        "CREATE TABLE t (x INT) WITH ('connector' = 'blackhole')",
        "INSERT INTO t SELECT 1",
    )
    assert jobs[0].properties == {"pipeline.name": "shared"}
    assert store.read(ledger.jobs_seen) == {upstream.jobs[operation]}

    # Proxy a restarts: the session goes on from the store, the job is not handed again.
    proxies["a"].stop()
    again: list = []
    restarted = start_proxy(upstream.url, Recorder(upstream.url, PostgresStore(url, tmp_path), again.append))
    c = client_of(restarted.url)
    c.fetch(session, operation)
    second = c.run(session, "INSERT INTO t SELECT 2")
    c.fetch(session, second)
    assert restarted.recorder.wait_idle(10)
    assert [(job.job_id, len(job.statements)) for job in again] == [(upstream.jobs[second], 4)]
    assert c.call("DELETE", f"/sessions/{session}")[0] == 200
    assert restarted.recorder.wait_idle(10)
    assert store.rows("SELECT * FROM gateway_statements") == []


def test_on_a_shared_store_a_session_used_through_another_proxy_is_kept(upstream, pg_store, start_proxy, client_of):
    """Proxy a looks for unused sessions; the one used through proxy b alone stays, the idle one
    goes with its statements and its job id (the real PostgreSQL, the recorders' clock injected)."""
    url, store = pg_store
    day, now = 86400.0, [time.time()]

    def clock() -> float:
        return now[0]

    proxies = {
        name: start_proxy(
            upstream.url, Recorder(upstream.url, PostgresStore(url, store.home), [].append, retention=day, clock=clock)
        )
        for name in ("a", "b")
    }
    a, b = client_of(proxies["a"].url), client_of(proxies["b"].url)
    used, idle = a.open(), a.open()
    for session in (used, idle):
        a.run(session, "CREATE TABLE t (x INT) WITH ('connector' = 'blackhole')")
        a.fetch(session, a.run(session, "INSERT INTO t SELECT 1"))
    assert proxies["a"].recorder.wait_idle(10)
    assert len(store.read(ledger.jobs_seen)) == 2

    now[0] += day - 3600
    assert b.call("POST", f"/sessions/{used}/heartbeat")[0] == 200
    assert proxies["b"].recorder.wait_idle(10)
    now[0] += 7200
    assert proxies["a"].recorder.wait_idle(10)
    assert [row["session"] for row in store.rows("SELECT session FROM gateway_sessions")] == [used]
    assert {row["session"] for row in store.rows("SELECT session FROM gateway_statements")} == {used}
    assert {row["session"] for row in store.rows("SELECT session FROM gateway_jobs_seen")} == {used}
