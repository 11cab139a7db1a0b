"""The recorder: each session's properties and statements in order, every REST version; each job
handed over once, with the statements up to its own, across a restart on the same store; a
refused or unreadable call changes nothing; lineage work never holds a client up."""

from __future__ import annotations

import threading
import time

import pytest

from planlineage.gateway import ledger
from planlineage.gateway.recorder import Recorder
from planlineage.store.sqlite import Store


def settle(proxy) -> None:
    assert proxy.recorder.wait_idle(10)


def rows(store: Store, sql: str) -> list[dict]:
    return store.rows(sql)


def test_two_sessions_interleaved_each_get_their_own_statements_in_order(upstream, recording_proxy, client_of):
    a, b = client_of(recording_proxy.url, "v3"), client_of(recording_proxy.url, "v3")
    first = a.open({"pipeline.name": "orders-job", "execution.runtime-mode": "batch"})
    second = b.open({})
    assert (
        a.call("POST", f"/sessions/{first}/configure-session", {"statement": "SET 'parallelism.default' = '2'"})[0]
        == 200
    )
    a.run(first, "CREATE TABLE src (x INT) WITH ('connector' = 'datagen')")
    b.run(second, "CREATE TABLE other (y INT) WITH ('connector' = 'datagen')")
    a.run(first, "CREATE TABLE snk (x INT) WITH ('connector' = 'blackhole')")
    b.run(second, "CREATE TABLE sink2 (y INT) WITH ('connector' = 'blackhole')")
    insert_a = a.run(first, "INSERT INTO snk SELECT x FROM src")
    insert_b = b.run(second, "INSERT INTO sink2 SELECT y FROM other")
    a.run(first, "CREATE TABLE later (z INT) WITH ('connector' = 'datagen')")  # after the job: not in its script
    answer_b = b.fetch(second, insert_b)
    answer_a = a.fetch(first, insert_a)
    settle(recording_proxy)

    jobs = {job.session: job for job in recording_proxy.jobs}
    assert set(jobs) == {first, second}
    job_a, job_b = jobs[first], jobs[second]
    assert job_a.job_id == answer_a["jobID"] and job_b.job_id == answer_b["jobID"]
    assert job_a.statements == (
        "SET 'parallelism.default' = '2'",
        "CREATE TABLE src (x INT) WITH ('connector' = 'datagen')",
        "CREATE TABLE snk (x INT) WITH ('connector' = 'blackhole')",
        "INSERT INTO snk SELECT x FROM src",
    )
    assert job_a.properties == {"pipeline.name": "orders-job", "execution.runtime-mode": "batch"}
    assert (job_a.operation, job_a.gateway, job_a.flink_version) == (insert_a, upstream.url, "2.3.0")
    assert job_b.statements == (
        "CREATE TABLE other (y INT) WITH ('connector' = 'datagen')",
        "CREATE TABLE sink2 (y INT) WITH ('connector' = 'blackhole')",
        "INSERT INTO sink2 SELECT y FROM other",
    )
    assert job_b.properties == {}
    assert [job.job_id for job in recording_proxy.jobs].count(job_a.job_id) == 1


@pytest.mark.parametrize("version", ["v1", "v2", "v4", ""])
def test_the_job_id_is_read_on_every_version(upstream, recording_proxy, client_of, version):
    client = client_of(recording_proxy.url, version)
    session = client.open({"pipeline.name": "p"})
    client.run(session, "CREATE TABLE t (x INT) WITH ('connector' = 'datagen')")
    operation = client.run(session, "INSERT INTO t SELECT 1")
    answer = client.fetch(session, operation)
    assert ("jobID" in answer) == (version != "v1")  # v1 carries it only as the one-row result
    client.fetch(session, operation, 1)
    settle(recording_proxy)
    assert [(job.job_id, job.statements[-1]) for job in recording_proxy.jobs] == [
        (upstream.jobs[operation], "INSERT INTO t SELECT 1")
    ]


def test_a_v4_script_is_recorded_as_one_statement(upstream, recording_proxy, client_of):
    client = client_of(recording_proxy.url, "v4")
    session = client.open()
    script = "CREATE TABLE t (x INT) WITH ('connector' = 'datagen');\nINSERT INTO t SELECT 1;"
    status, answer = client.call("POST", f"/sessions/{session}/scripts", {"script": "EXECUTE " + script})
    assert status == 200
    client.fetch(session, answer["operationHandle"])
    settle(recording_proxy)
    assert [job.statements for job in recording_proxy.jobs] == [("EXECUTE " + script,)]


def test_each_job_is_handed_over_once_across_pages_refetches_and_a_restart(
    upstream, store, recording_proxy, client_of, start_proxy
):
    client = client_of(recording_proxy.url)
    session = client.open({"pipeline.name": "p"})
    client.run(session, "CREATE TABLE t (x INT) WITH ('connector' = 'datagen')")
    first_insert = client.run(session, "INSERT INTO t SELECT 1")
    for _ in range(3):
        client.fetch(session, first_insert)
    settle(recording_proxy)
    assert len(recording_proxy.jobs) == 1
    recording_proxy.stop()

    # A new proxy on the same store: the session goes on, the old job is not handed again.
    jobs: list = []
    restarted = start_proxy(upstream.url, Recorder(upstream.url, Store(store.path), jobs.append))
    client = client_of(restarted.url)
    client.fetch(session, first_insert)
    client.run(session, "CREATE TABLE u (y INT) WITH ('connector' = 'datagen')")
    second_insert = client.run(session, "INSERT INTO u SELECT 2")
    client.fetch(session, second_insert)
    client.fetch(session, second_insert)
    assert restarted.recorder.wait_idle(10)
    assert [job.job_id for job in jobs] == [upstream.jobs[second_insert]]
    assert jobs[0].statements == (
        "CREATE TABLE t (x INT) WITH ('connector' = 'datagen')",
        "INSERT INTO t SELECT 1",
        "CREATE TABLE u (y INT) WITH ('connector' = 'datagen')",
        "INSERT INTO u SELECT 2",
    )
    assert jobs[0].properties == {"pipeline.name": "p"}
    assert store.read(ledger.jobs_seen) == {upstream.jobs[first_insert], upstream.jobs[second_insert]}


def test_closing_a_session_ends_its_record_and_keeps_the_jobs_handed_over(upstream, store, recording_proxy, client_of):
    client = client_of(recording_proxy.url)
    session = client.open({"pipeline.name": "p"})
    operation = client.run(session, "INSERT INTO t SELECT 1")
    client.fetch(session, operation)
    assert client.call("DELETE", f"/sessions/{session}")[0] == 200
    client.fetch(session, operation)  # a late fetch of the closed session's job
    settle(recording_proxy)
    assert rows(store, "SELECT * FROM gateway_sessions") == []
    assert rows(store, "SELECT * FROM gateway_statements") == []
    assert store.read(ledger.jobs_seen) == {upstream.jobs[operation]}
    assert len(recording_proxy.jobs) == 1


def test_a_refused_or_unreadable_statement_is_not_recorded_and_the_client_sees_the_gateways_answer(
    upstream, store, recording_proxy, client_of
):
    client = client_of(recording_proxy.url)
    session = client.open()
    client.conn.request("POST", f"/v3/sessions/{session}/statements", body=b"\x00\xff\xfe", headers={})
    response = client.conn.getresponse()
    assert response.status == 400 and b"ExecuteStatementRequestBody" in response.read()
    status, answer = client.call("POST", f"/sessions/{session}/configure-session", {"statement": 7})
    assert status == 200  # the fake accepts it; the recorder cannot read a statement that is no text
    operation = client.run(session, "INSERT INTO t SELECT 1")
    client.fetch(session, operation)
    settle(recording_proxy)
    assert [job.statements for job in recording_proxy.jobs] == [("INSERT INTO t SELECT 1",)]


@pytest.mark.parametrize("how", ["fetch", "fetch after NOT_READY", "status"])
def test_a_statement_the_gateway_failed_to_run_is_left_out_of_the_script(
    upstream, store, recording_proxy, client_of, how
):
    client = client_of(recording_proxy.url)
    session = client.open()
    client.run(session, "CREATE TABLE t (x INT) WITH ('connector' = 'blackhole')")
    failed = client.run(session, "BAD STATEMENT")  # accepted, as the real gateway accepts it
    if how == "status":
        assert client.call("GET", f"/sessions/{session}/operations/{failed}/status") == (200, {"status": "ERROR"})
    else:
        if how == "fetch after NOT_READY":
            upstream.not_ready.add(failed)
            assert client.fetch(session, failed)["resultType"] == "NOT_READY"
        status, answer = client.call("GET", f"/sessions/{session}/operations/{failed}/result/0")
        assert status == 500 and answer["errors"][0] == "Internal server error."
    operation = client.run(session, "INSERT INTO t SELECT 1")
    client.fetch(session, operation)
    settle(recording_proxy)
    assert [job.statements for job in recording_proxy.jobs] == [
        ("CREATE TABLE t (x INT) WITH ('connector' = 'blackhole')", "INSERT INTO t SELECT 1")
    ]


def test_a_statement_whose_result_came_stays_when_a_later_fetch_fails(upstream, store, recording_proxy, client_of):
    client = client_of(recording_proxy.url)
    session = client.open()
    created = client.run(session, "CREATE TABLE t (x INT) WITH ('connector' = 'blackhole')")
    client.fetch(session, created)
    upstream.failing.add(created)  # as a fetch of an operation closed since answers
    assert client.call("GET", f"/sessions/{session}/operations/{created}/result/0")[0] == 500
    client.fetch(session, client.run(session, "INSERT INTO t SELECT 1"))
    settle(recording_proxy)
    assert [len(job.statements) for job in recording_proxy.jobs] == [2]


def test_a_job_whose_statement_the_proxy_never_saw_is_not_handed_over(upstream, recording_proxy, client_of):
    direct, through = client_of(upstream.url), client_of(recording_proxy.url)
    session = direct.open()
    operation = direct.run(session, "INSERT INTO t SELECT 1")  # before the proxy stood in front
    assert through.fetch(session, operation)["jobID"] == upstream.jobs[operation]
    settle(recording_proxy)
    assert recording_proxy.jobs == []


def test_a_hand_over_that_fails_is_tried_again_on_the_next_answer(upstream, store, start_proxy, client_of):
    handed: list = []

    def on_job(job):
        handed.append(job.job_id)
        if len(handed) == 1:
            raise RuntimeError("the lineage side is not ready")

    proxy = start_proxy(upstream.url, Recorder(upstream.url, store, on_job))
    client = client_of(proxy.url)
    session = client.open()
    operation = client.run(session, "INSERT INTO t SELECT 1")
    client.fetch(session, operation)
    assert proxy.recorder.wait_idle(10)
    assert store.read(ledger.jobs_seen) == set()
    client.fetch(session, operation)
    assert proxy.recorder.wait_idle(10)
    assert handed == [upstream.jobs[operation]] * 2
    assert store.read(ledger.jobs_seen) == {upstream.jobs[operation]}


def test_the_gateways_version_is_asked_once(upstream, recording_proxy, client_of):
    client = client_of(recording_proxy.url)
    session = client.open()
    for _ in range(3):
        client.fetch(session, client.run(session, "INSERT INTO t SELECT 1"))
    settle(recording_proxy)
    assert [job.flink_version for job in recording_proxy.jobs] == ["2.3.0"] * 3
    assert [path for method, path, _ in upstream.calls if path.endswith("/info")] == ["/v1/info"]


def test_slow_lineage_work_never_holds_a_client_up(upstream, store, start_proxy, client_of):
    release = threading.Event()
    proxy = start_proxy(upstream.url, Recorder(upstream.url, store, lambda job: release.wait(10)))
    client = client_of(proxy.url)
    session = client.open()
    client.fetch(session, client.run(session, "INSERT INTO t SELECT 1"))
    started = time.monotonic()
    for _ in range(20):  # while the lineage side is busy with the job
        client.fetch(session, client.run(session, "INSERT INTO t SELECT 1"))
    assert time.monotonic() - started < 2
    release.set()
    assert proxy.recorder.wait_idle(10)


def test_when_the_recorder_falls_behind_calls_are_dropped_not_waited_for(upstream, store, start_proxy, client_of):
    release = threading.Event()
    recorder = Recorder(upstream.url, store, lambda job: release.wait(10), queue_limit=2)
    proxy = start_proxy(upstream.url, recorder)
    client = client_of(proxy.url)
    session = client.open()
    client.fetch(session, client.run(session, "INSERT INTO t SELECT 1"))
    time.sleep(0.2)  # the worker is in the hand-over now
    for _ in range(5):
        client.run(session, "CREATE TABLE t (x INT)")
    assert recorder.dropped >= 3
    release.set()


def test_the_queue_is_bounded_by_the_bytes_it_holds_too(upstream, store, start_proxy, client_of):
    # 10 000 calls of up to 16 MiB each would be 160 GB: past its byte bound a call is dropped.
    release = threading.Event()
    recorder = Recorder(upstream.url, store, lambda job: release.wait(10), queue_bytes_limit=1024 * 1024)
    proxy = start_proxy(upstream.url, recorder)
    client = client_of(proxy.url)
    session = client.open()
    client.fetch(session, client.run(session, "INSERT INTO t SELECT 1"))
    time.sleep(0.2)  # the worker is in the hand-over now
    padding = "x" * (300 * 1024)
    for _ in range(6):
        client.run(session, f"CREATE TABLE t (x INT) COMMENT '{padding}'")
    assert recorder.dropped >= 3 and recorder.pending() <= 4
    release.set()
    assert recorder.wait_idle(10)
