"""Each client the SQL Gateway has (raw REST, the SQL Client in gateway mode, the Flink JDBC driver)
submits an INSERT through ``planlineage gateway``: START naming the job's sink and source, then
COMPLETE when the JobManager says FINISHED, each exactly once."""

from __future__ import annotations

from gateway_clients import JOB_ID, RestSession, sql_client
from gateway_jobs import ROWS
from gateway_proxy import assert_reported_once, outputs


def test_rest_insert_is_reported_once(live, proxy, lineage, tables):
    # the session's pipeline.name names the Flink job, and the OpenLineage job after it
    name = f"gateway-live-{tables.root.parent.name}"
    with RestSession(proxy.url, properties={"pipeline.name": name}) as session:
        session.run(tables.source("src", "src", ROWS))
        session.run(tables.sink("snk", "snk"))
        job = session.submit("INSERT INTO snk SELECT id, word FROM src")
    assert live.wait_for_state(job, {"FINISHED", "FAILED"}) == "FINISHED"
    assert live.job(job)["name"] == name
    seen = assert_reported_once(lineage, proxy, tables.dataset("snk"), "COMPLETE", {tables.dataset("src")})
    assert {event["job"]["name"] for event in seen.events} == {name}


def test_sql_client_insert_is_reported_once(live, proxy, lineage, tables):
    script = f"{tables.source('src', 'src', ROWS)};\n{tables.sink('snk', 'snk')};\nINSERT INTO snk SELECT * FROM src;\n"
    output = sql_client(live.jars, live.gateway_jar, proxy.endpoint, script, tables.root, live.run_id)
    [job] = JOB_ID.findall(output.split("Job ID:")[-1])
    assert live.wait_for_state(job, {"FINISHED", "FAILED"}) == "FINISHED"
    assert_reported_once(lineage, proxy, tables.dataset("snk"), "COMPLETE", {tables.dataset("src")})


def test_jdbc_insert_is_reported_once(live, jdbc, proxy, lineage, tables):
    statements = [tables.source("src", "src", ROWS), tables.sink("snk", "snk"), "INSERT INTO snk SELECT * FROM src"]
    [job] = [value for value in jdbc.run(proxy.endpoint, statements) if JOB_ID.fullmatch(value)]
    assert live.wait_for_state(job, {"FINISHED", "FAILED"}) == "FINISHED"
    assert_reported_once(lineage, proxy, tables.dataset("snk"), "COMPLETE", {tables.dataset("src")})


def test_sql_client_statement_set_block_starts_each_sink(live, proxy, lineage, tables):
    # BEGIN STATEMENT SET; … END; : the gateway's session keeps the INSERTs until END submits them
    script = ";\n".join(
        [
            tables.source("src", "src", ROWS),
            tables.sink("sink_one", "sink_one"),
            tables.sink("sink_two", "sink_two"),
            "BEGIN STATEMENT SET",
            "INSERT INTO sink_one SELECT * FROM src",
            "INSERT INTO sink_two SELECT id, UPPER(word) FROM src",
            "END",
        ]
    )
    output = sql_client(live.jars, live.gateway_jar, proxy.endpoint, script + ";\n", tables.root, live.run_id)
    [job] = JOB_ID.findall(output.split("Job ID:")[-1])
    assert live.wait_for_state(job, {"FINISHED", "FAILED"}) == "FINISHED"
    for sink in ("sink_one", "sink_two"):
        seen = assert_reported_once(lineage, proxy, tables.dataset(sink), "COMPLETE", {tables.dataset("src")})
        assert outputs(seen.starts[0]) == {tables.dataset(sink)}, "one START per sink, naming that sink only"
