"""Sessions a client never closed are forgotten after the retention (lineage.gateway-session-retention):
any call naming a session keeps it, its last use is written at most once a minute, an unused one goes
with its statements, and a job id goes only once its session is gone, so it is never handed over twice.
The recorder's clock is injected: no sleeping."""

from __future__ import annotations

import time

import pytest

from planlineage.gateway.proxy import Upstream
from planlineage.gateway.recorder import PRUNE_SECONDS, USED_WRITE_SECONDS, Recorder

HOUR = 3600.0
USED_WRITE_SECONDS_STEPS = 20
RETENTION = 24 * HOUR


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def proxy(upstream, store, clock, start_proxy):
    jobs: list = []
    recorder = Recorder(
        upstream.url, store, jobs.append, Upstream(upstream.url).ask_version, retention=RETENTION, clock=clock
    )
    running = start_proxy(upstream.url, recorder)
    running.jobs = jobs  # type: ignore[attr-defined]
    return running


def settle(proxy) -> None:
    assert proxy.recorder.wait_idle(10)


def sessions(store) -> dict[str, float]:
    return {row["session"]: row["used"] for row in store.rows("SELECT session, used FROM gateway_sessions")}


def statements_of(store, session: str) -> list[str]:
    return [
        row["statement"]
        for row in store.rows(f"SELECT statement FROM gateway_statements WHERE session = '{session}' ORDER BY seq")
    ]


def test_a_session_used_recently_stays_and_one_unused_past_the_retention_is_forgotten(proxy, store, clock, client_of):
    client = client_of(proxy.url)
    kept, dropped = client.open({"pipeline.name": "kept"}), client.open({"pipeline.name": "dropped"})
    client.run(kept, "CREATE TABLE t (x INT) WITH ('connector' = 'datagen')")
    client.run(dropped, "CREATE TABLE s (password STRING) WITH ('connector' = 'jdbc', 'password' = 'FAKE-secret')")
    settle(proxy)
    assert set(sessions(store)) == {kept, dropped}

    clock.now += RETENTION - HOUR
    client.run(kept, "CREATE TABLE u (y INT) WITH ('connector' = 'datagen')")
    settle(proxy)
    assert set(sessions(store)) == {kept, dropped}  # neither is past the retention yet

    clock.now += 2 * HOUR
    settle(proxy)
    assert set(sessions(store)) == {kept}
    assert statements_of(store, dropped) == []
    assert statements_of(store, kept) == [
        "CREATE TABLE t (x INT) WITH ('connector' = 'datagen')",
        "CREATE TABLE u (y INT) WITH ('connector' = 'datagen')",
    ]

    # The client comes back to the forgotten session: the proxy is transparent, and records it anew
    # as a session first seen after it was opened.
    assert client.call("POST", f"/sessions/{dropped}/configure-session", {"statement": "SET 'a' = 'b'"})[0] == 200
    operation = client.run(dropped, "CREATE TABLE v (z INT) WITH ('connector' = 'datagen')")
    assert operation
    settle(proxy)
    assert statements_of(store, dropped) == ["SET 'a' = 'b'", "CREATE TABLE v (z INT) WITH ('connector' = 'datagen')"]
    assert store.rows(f"SELECT opened FROM gateway_sessions WHERE session = '{dropped}'") == [{"opened": 0}]


def test_a_heartbeat_or_a_fetch_keeps_a_session(proxy, store, clock, client_of):
    client = client_of(proxy.url)
    beating, fetching, idle = client.open(), client.open(), client.open()
    operation = client.run(fetching, "CREATE TABLE t (x INT) WITH ('connector' = 'datagen')")
    for session in (beating, idle):
        client.run(session, "CREATE TABLE t (x INT) WITH ('connector' = 'datagen')")
    settle(proxy)
    for _ in range(3):  # a day of heartbeats and polls, the idle session untouched
        clock.now += RETENTION / 3
        assert client.call("POST", f"/sessions/{beating}/heartbeat")[0] == 200
        client.fetch(fetching, operation)
        settle(proxy)
    clock.now += HOUR
    settle(proxy)
    assert set(sessions(store)) == {beating, fetching}
    assert statements_of(store, beating) == ["CREATE TABLE t (x INT) WITH ('connector' = 'datagen')"]


def test_last_use_is_written_at_most_once_a_minute(proxy, store, clock, client_of):
    client = client_of(proxy.url)
    session = client.open()
    settle(proxy)
    start = clock.now  # the first look for unused sessions was at the first call; the next is not due
    clock.now += USED_WRITE_SECONDS
    assert client.call("POST", f"/sessions/{session}/heartbeat")[0] == 200
    settle(proxy)
    assert sessions(store)[session] == start + USED_WRITE_SECONDS  # a minute since the last write: written
    for _ in range(USED_WRITE_SECONDS_STEPS):
        clock.now += 1
        assert client.call("POST", f"/sessions/{session}/heartbeat")[0] == 200
        settle(proxy)
    assert sessions(store)[session] == start + USED_WRITE_SECONDS  # within the minute: kept in memory
    last_use = clock.now
    clock.now = start + 2 * USED_WRITE_SECONDS
    assert clock.now < start + PRUNE_SECONDS
    settle(proxy)
    assert sessions(store)[session] == last_use  # one write, the latest use


def test_a_pruned_job_id_is_not_handed_over_again(proxy, upstream, store, clock, client_of, start_proxy):
    client = client_of(proxy.url)
    alive, gone = client.open({"pipeline.name": "alive"}), client.open({"pipeline.name": "gone"})
    inserts = {}
    for session in (alive, gone):
        client.run(session, "CREATE TABLE t (x INT) WITH ('connector' = 'datagen')")
        inserts[session] = client.run(session, "INSERT INTO t SELECT 1")
        client.fetch(session, inserts[session])
    settle(proxy)
    assert sorted(job.session for job in proxy.jobs) == sorted([alive, gone])
    handed = {job.session: job.job_id for job in proxy.jobs}

    for _ in range(2):  # past the retention twice; one session kept alive by heartbeats
        clock.now += RETENTION * 0.75
        assert client.call("POST", f"/sessions/{alive}/heartbeat")[0] == 200
        settle(proxy)
    seen = {row["job_id"] for row in store.rows("SELECT job_id FROM gateway_jobs_seen")}
    assert seen == {handed[alive]}  # the live session's job is kept however old; the gone one's went
    assert set(sessions(store)) == {alive}

    # A late fetch of either result, through a restarted proxy (nothing remembered in memory):
    # neither job is handed over again.
    proxy.stop()
    again: list = []
    restarted = start_proxy(upstream.url, Recorder(upstream.url, store, again.append, retention=RETENTION, clock=clock))
    client = client_of(restarted.url)
    for session in (alive, gone):
        client.fetch(session, inserts[session])
        client.fetch(session, inserts[session])
    settle(restarted)
    assert again == []


def test_an_unused_session_is_forgotten_by_a_restarted_proxy_at_once(upstream, store, clock, client_of, start_proxy):
    first = start_proxy(upstream.url, Recorder(upstream.url, store, [].append, retention=RETENTION, clock=clock))
    client = client_of(first.url)
    session = client.open()
    client.run(session, "CREATE TABLE t (x INT) WITH ('connector' = 'datagen')")
    settle(first)
    first.stop()
    clock.now += RETENTION + HOUR
    second = start_proxy(upstream.url, Recorder(upstream.url, store, [].append, retention=RETENTION, clock=clock))
    settle(second)
    assert sessions(store) == {}
    assert store.rows("SELECT * FROM gateway_statements") == []
