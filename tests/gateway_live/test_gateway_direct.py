"""The harness against the real SQL Gateway, no proxy in between: what the proxy tests rely on (a
gateway of the version under test on its cluster; a job that finishes, one that fails at run time,
one cancelled through the JobManager) holds on each Flink version, so that a failure of the proxy
tests is the proxy's.  The SQL Client and the JDBC driver are driven through the proxy only
(test_gateway_clients.py): their jobs' states are asserted there."""

from __future__ import annotations

import httpx
from gateway_clients import RestSession
from gateway_jobs import NOT_A_NUMBER, ROWS, unbounded_source


def test_the_gateway_runs_on_the_cluster_it_names(live):
    versions = httpx.get(f"{live.gateway}/api_versions", timeout=10).json()["versions"]
    assert {"V1", "V2", "V3"} <= set(versions)
    info = httpx.get(f"{live.gateway}/v1/info", timeout=10).json()
    assert info["version"] == live.jars.version
    overview = httpx.get(f"{live.jobmanager}/overview", timeout=10).json()
    assert overview["taskmanagers"] == 1 and overview["flink-version"] == live.jars.version


def test_rest_jobs_finish_fail_and_cancel(live, tables):
    with RestSession(live.gateway) as session:
        session.run(tables.source("src", "src", ROWS))
        session.run(tables.source("bad", "bad", NOT_A_NUMBER))
        session.run(unbounded_source("endless"))
        session.run(tables.sink("snk", "snk"))
        session.run(tables.sink("ints", "ints", "id INT, n INT"))
        finished = session.submit("INSERT INTO snk SELECT id, word FROM src")
        failing = session.submit("INSERT INTO ints SELECT id, CAST(word AS INT) FROM bad")
        cancelled = session.submit("INSERT INTO snk SELECT id, word FROM endless")
    assert live.wait_for_state(finished, {"FINISHED", "FAILED"}) == "FINISHED"
    assert live.wait_for_state(failing, {"FINISHED", "FAILED"}) == "FAILED"
    assert live.wait_for_state(cancelled, {"RUNNING"}) == "RUNNING"
    live.cancel(cancelled)
    assert live.wait_for_state(cancelled, {"CANCELED", "FINISHED", "FAILED"}) == "CANCELED"
    written = "".join(path.read_text() for path in (tables.root / "snk").rglob("part-*"))
    assert sorted(written.splitlines()) == ["1,one", "2,two", "3,three"]
