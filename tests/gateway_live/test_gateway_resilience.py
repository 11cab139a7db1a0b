"""What the proxy survives without losing or repeating an event: its own crash mid-job (a new
process on the same state store reports the job's end, and nothing twice) and the lineage backend
away while a job runs (the events are kept and delivered once when it is back)."""

from __future__ import annotations

import time

from gateway_clients import RestSession
from gateway_jobs import ROWS, slow_source
from gateway_proxy import assert_reported_once, sink_runs
from marked_jvms import wait_until


def test_a_proxy_killed_mid_job_and_started_again_reports_the_end_once(live, proxy, lineage, tables):
    with RestSession(proxy.url) as session:
        session.run(slow_source("slow", seconds=12))
        session.run(tables.sink("snk", "snk"))
        job = session.submit("INSERT INTO snk SELECT id, word FROM slow")
    sink = tables.dataset("snk")
    assert wait_until(lambda: sink_runs(lineage, sink).starts, 90), f"no START for {sink}:\n{proxy.output()}"
    assert live.job(job)["state"] in {"CREATED", "INITIALIZING", "RUNNING"}, "the job ended before the crash"
    proxy.kill()
    # the job ends while no proxy is there to see it
    assert live.wait_for_state(job, {"FINISHED", "FAILED"}) == "FINISHED"
    assert not sink_runs(lineage, sink).terminal
    proxy.start()  # the same home (state store) and port
    assert_reported_once(lineage, proxy, sink, "COMPLETE", set())


def test_the_lineage_backend_down_and_back_gets_each_event_once(live, proxy, lineage, tables):
    lineage.down()
    with RestSession(proxy.url) as session:
        session.run(tables.source("src", "src", ROWS))
        session.run(tables.sink("snk", "snk"))
        job = session.submit("INSERT INTO snk SELECT id, word FROM src")
    assert live.wait_for_state(job, {"FINISHED", "FAILED"}) == "FINISHED"
    time.sleep(5)  # the START and COMPLETE were due meanwhile: their sends are refused
    assert not lineage.events
    lineage.up()
    assert_reported_once(lineage, proxy, tables.dataset("snk"), "COMPLETE", {tables.dataset("src")})
