"""The job's end as the JobManager saw it, reported once on the START's run: a job that fails at
run time (FAIL), one cancelled through the JobManager (ABORT); a STATEMENT SET (START per sink);
two sessions at once, each reported with its own tables only."""

from __future__ import annotations

import threading

from gateway_clients import RestSession
from gateway_jobs import NOT_A_NUMBER, ROWS, unbounded_source
from gateway_proxy import assert_reported_once, inputs, outputs, sink_runs


def test_a_job_failing_at_run_time_is_a_fail(live, proxy, lineage, tables):
    with RestSession(proxy.url) as session:
        session.run(tables.source("bad", "bad", NOT_A_NUMBER))
        session.run(tables.sink("ints", "ints", "id INT, n INT"))
        job = session.submit("INSERT INTO ints SELECT id, CAST(word AS INT) FROM bad")
    assert live.wait_for_state(job, {"FINISHED", "FAILED"}) == "FAILED"
    assert_reported_once(lineage, proxy, tables.dataset("ints"), "FAIL", {tables.dataset("bad")})


def test_a_job_cancelled_at_the_jobmanager_is_an_abort(live, proxy, lineage, tables):
    with RestSession(proxy.url) as session:
        session.run(unbounded_source("endless"))
        session.run(tables.sink("snk", "snk"))
        job = session.submit("INSERT INTO snk SELECT id, word FROM endless")
    live.wait_for_state(job, {"RUNNING"})
    live.cancel(job)
    assert live.wait_for_state(job, {"CANCELED", "FAILED", "FINISHED"}) == "CANCELED"
    # datagen is no physical dataset (docs/naming.md): the START names the sink only
    assert_reported_once(lineage, proxy, tables.dataset("snk"), "ABORT", set())


def test_a_statement_set_starts_each_sink(live, proxy, lineage, tables):
    with RestSession(proxy.url) as session:
        session.run(tables.source("src", "src", ROWS))
        session.run(tables.sink("sink_one", "sink_one"))
        session.run(tables.sink("sink_two", "sink_two"))
        job = session.submit(
            "EXECUTE STATEMENT SET BEGIN "
            "INSERT INTO sink_one SELECT id, word FROM src; "
            "INSERT INTO sink_two SELECT id, UPPER(word) FROM src WHERE id > 1; "
            "END"
        )
    assert live.wait_for_state(job, {"FINISHED", "FAILED"}) == "FINISHED"
    for sink in ("sink_one", "sink_two"):
        seen = assert_reported_once(lineage, proxy, tables.dataset(sink), "COMPLETE", {tables.dataset("src")})
        assert outputs(seen.starts[0]) == {tables.dataset(sink)}, "one START per sink, naming that sink only"


def test_two_sessions_at_once_keep_their_own_statements(live, proxy, lineage, tables):
    # Same table names in both sessions, different paths: each job must be compiled with its own
    # session's DDL, even with the two sessions' calls interleaved.
    sessions = {side: RestSession(proxy.url).open() for side in ("a", "b")}
    jobs: dict[str, str] = {}
    both_declared = threading.Barrier(2)

    def drive(side: str) -> None:
        session = sessions[side]
        session.run(tables.source("src", f"src_{side}", ROWS))
        both_declared.wait(timeout=60)
        session.run(tables.sink("snk", f"snk_{side}"))
        jobs[side] = session.submit("INSERT INTO snk SELECT id, word FROM src")

    threads = [threading.Thread(target=drive, args=(side,)) for side in sessions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=180)
    for session in sessions.values():
        session.close()
    assert set(jobs) == {"a", "b"}
    for side, job in jobs.items():
        assert live.wait_for_state(job, {"FINISHED", "FAILED"}) == "FINISHED"
        seen = assert_reported_once(
            lineage, proxy, tables.dataset(f"snk_{side}"), "COMPLETE", {tables.dataset(f"src_{side}")}
        )
        assert all(outputs(e) <= {tables.dataset(f"snk_{side}")} for e in seen.events)
    other = {"a": "b", "b": "a"}
    for side in sessions:
        crossed = [
            e
            for e in sink_runs(lineage, tables.dataset(f"snk_{side}")).events
            if tables.dataset(f"src_{other[side]}") in inputs(e)
        ]
        assert not crossed, crossed
