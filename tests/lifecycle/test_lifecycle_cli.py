"""submit / state / flush as a platform calls them: fresh processes, the compile service compiling
with the recorded planner (real pipeline, recorded plans, no JVM), the Gravitino-compatible test
server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections import Counter

import pytest
from lifecycle_helpers import wait_for
from recorded_planner import case_sql

from planlineage.store.sqlite import Store

SECRET = "hunter2-FAKE-Sup3rSecret"
#: The regular_join fixture case with secrets around it (tables the plan does not use, SETs of
#: options the planner ignores): it compiles to the plan recorded for regular_join.
SQL = f"""-- password: {SECRET}
SET s3.secret-key = {SECRET};
SET 'fs.s3a.secret.key' = '{SECRET}';
CREATE TABLE audit (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'audit',
  'properties.sasl.jaas.config' = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="{SECRET}";');
CREATE TABLE archive (id BIGINT) WITH ('connector' = 'jdbc', 'url' = 'jdbc:mysql://db:3306/x', 'password' = '{SECRET}');
""" + case_sql("regular_join")
#: What the real walk and registry make of regular_join's recorded plan: out_b <- orders, refunds.
REGULAR_JOIN = (
    [("kafka://k1:9092", "orders"), ("kafka://k1:9092", "refunds")],
    [("postgres://pg:5432", "dw.public.out_b")],
)


@pytest.fixture
def sql_file(cli, tmp_path):
    path = tmp_path / "job.sql"
    path.write_text(cli.planner.record(SQL, "regular_join"), encoding="utf-8")
    return path


def configure(cli, server, **more):
    assert cli("settings", "set", "lineage.address", server.address).returncode == 0
    for key, value in more.items():
        assert cli("settings", "set", key, value).returncode == 0


def submit(cli, sql_file, app="app-1", job="etl", *extra, **env):
    result = cli(
        "submit",
        "--app-id",
        app,
        "--job-name",
        job,
        "--flink-version",
        "1.20",
        "--sql-file",
        str(sql_file),
        "--lineage-enable",
        *extra,
        **env,
    )
    assert result.returncode == 0, result.stderr
    return result


def state(cli, app, value, *extra, wait=True, **env):
    """`state`, then (``wait``) until the compile service it may have handed events to is done."""
    result = cli("state", "--app-id", app, "--state", value, *extra, **env)
    assert result.returncode == 0, result.stderr
    if wait:
        cli.wait_workers(60)
    return result


def by_type(server):
    found: dict[str, list[dict]] = {}
    for event in server.events:
        found.setdefault(event["eventType"], []).append(event)
    return found


def datasets(event):
    return (
        [(d["namespace"], d["name"]) for d in event.get("inputs") or []],
        [(d["namespace"], d["name"]) for d in event.get("outputs") or []],
    )


def test_statement_set_lifecycle_start_running_complete(cli, server, tmp_path):
    sql_file = tmp_path / "statement_set.sql"
    sql_file.write_text(cli.planner.record(case_sql("statement_set"), "statement_set"), encoding="utf-8")
    configure(cli, server)
    submit(cli, sql_file, "application_1", "etl")
    cli.wait_workers()
    state(cli, "application_1", "RUNNING")
    state(cli, "application_1", "FINISHED")
    types = [e["eventType"] for e in server.events]
    assert types == ["START"] * 4 + ["RUNNING"] * 4 + ["COMPLETE"] * 4
    assert len({e["run"]["runId"] for e in server.events if e["job"]["name"] == "etl"}) == 1
    # One job per sink (out_s prints: no dataset to name, its inputs still count) with the
    # datasets the real walk and registry read from the recorded plan.
    sinks = {e["job"]["name"]: datasets(e) for e in server.events if e["job"]["name"] != "etl"}
    kafka = "kafka://k1:9092"
    assert sinks == {
        "etl.default_catalog.default_database.out_a": ([(kafka, "orders")], [(kafka, "out-a")]),
        "etl.default_catalog.default_database.out_b": (
            [(kafka, "refunds")],
            [("postgres://pg:5432", "dw.public.out_b")],
        ),
        "etl.default_catalog.default_database.out_s": ([(kafka, "orders"), ("mysql://db:3306", "crm.customers")], []),
    }
    jobs = {e["job"]["name"] for e in server.events}
    for job in jobs:
        per_job = [e for e in server.events if e["job"]["name"] == job]
        assert [e["eventType"] for e in per_job] == ["START", "RUNNING", "COMPLETE"]
        assert len({e["run"]["runId"] for e in per_job}) == 1
        assert len({json.dumps(datasets(e)) for e in per_job}) == 1
    assert server.keys() and max(server.keys().values()) == 1


def test_state_before_start_is_sent_after_it_in_order(cli, server, sql_file):
    configure(cli, server)
    cli.planner.hold()
    submit(cli, sql_file)
    state(cli, "app-1", "RUNNING", wait=False)
    state(cli, "app-1", "FAILED", "--error", "TaskManager lost", wait=False)
    wait_for(cli.planner.compiling, what="the compile to begin")
    assert server.events == []  # lineage not known yet: nothing sent, nothing lost
    cli.planner.release()
    cli.wait_workers(60)
    assert [e["eventType"] for e in server.events] == ["START", "RUNNING", "FAIL"]
    assert {json.dumps(datasets(e)) for e in server.events} == {json.dumps(REGULAR_JOIN)}
    fail = server.events[-1]
    assert fail["run"]["facets"]["errorMessage"]["message"] == "TaskManager lost"
    assert len({e["run"]["runId"] for e in server.events}) == 1


def test_each_submission_is_a_new_run_and_unknown_app_is_noop(cli, server, sql_file, private_home):
    configure(cli, server)
    state(cli, "never-submitted", "RUNNING")
    submit(cli, sql_file)
    cli.wait_workers()
    submit(cli, sql_file)
    cli.wait_workers()
    starts = [e for e in server.events if e["eventType"] == "START"]
    assert len(starts) == 2 and starts[0]["run"]["runId"] != starts[1]["run"]["runId"]
    state(cli, "never-submitted", "FINISHED")
    # the second submission replaced the open first run: it ended with ABORT
    assert [e["eventType"] for e in server.events] == ["START", "ABORT", "START"]


def test_server_down_during_start_then_flush_delivers_in_order(cli, server, sql_file):
    configure(cli, server)
    server.down()
    submit(cli, sql_file)
    cli.wait_workers()
    state(cli, "app-1", "RUNNING")
    state(cli, "app-1", "FINISHED")
    assert server.events == []
    server.up()
    result = cli("flush")
    assert result.returncode == 0
    assert [e["eventType"] for e in server.events] == ["START", "RUNNING", "COMPLETE"]
    assert cli("flush").returncode == 0
    assert len(server.events) == 3


def test_slow_server_never_hangs_state(cli, sql_file):
    from gravitino_server import GravitinoTestServer

    with GravitinoTestServer(delay=20) as slow:
        configure(cli, slow)
        submit(cli, sql_file)
        began = time.monotonic()
        result = cli("state", "--app-id", "app-1", "--state", "RUNNING")
        took = time.monotonic() - began
        assert result.returncode == 0
        assert took < 8, took


def test_concurrent_submit_and_state_nothing_lost_or_duplicated(cli, server, tmp_path):
    configure(cli, server)
    path = tmp_path / "job.sql"
    path.write_text(cli.planner.record(case_sql("union_all"), "union_all"), encoding="utf-8")
    apps = [f"app-{i}" for i in range(10)]
    errors: list[str] = []

    def platform(app):
        for args in (
            ("submit", "--app-id", app, "--job-name", f"job-{app}", "--sql-file", str(path), "--lineage-enable"),
            ("state", "--app-id", app, "--state", "RUNNING"),
            ("state", "--app-id", app, "--state", "FINISHED"),
        ):
            result = cli(*args)
            if result.returncode != 0:
                errors.append(result.stderr.decode())

    threads = [threading.Thread(target=platform, args=(app,)) for app in apps]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors
    cli.wait_workers(60)
    assert cli("flush").returncode == 0
    keys = server.keys()
    assert max(keys.values()) == 1, "an event was sent twice"
    per_job = Counter()
    for event in server.events:
        per_job[event["job"]["name"]] += 1
    assert per_job == Counter({f"job-{app}": 3 for app in apps}), (
        per_job,
        [cli.home.joinpath(f).read_text() for f in ("compile-service.log",) if cli.home.joinpath(f).exists()],
    )
    for app in apps:
        events = [e for e in server.events if e["job"]["name"] == f"job-{app}"]
        assert [e["eventType"] for e in events] == ["START", "RUNNING", "COMPLETE"]
        assert len({e["run"]["runId"] for e in events}) == 1


def _kill_worker_mid_compile(cli):
    """Kills the compile service whose compile the recorded planner holds."""
    pid = wait_for(
        lambda: next((p for p in cli.workers() if p in cli.planner.compiling()), None),
        what="a compile service compiling",
    )
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: pid not in cli.workers(), what="the worker to die")


def test_killed_worker_compile_is_attempted_again(cli, server, sql_file):
    configure(cli, server)
    cli.planner.hold()
    submit(cli, sql_file)
    _kill_worker_mid_compile(cli)
    cli.planner.release()
    state(cli, "app-1", "RUNNING")  # finds the dead job, starts it again
    cli.wait_workers()
    state(cli, "app-1", "FINISHED")
    assert [e["eventType"] for e in server.events] == ["START", "RUNNING", "COMPLETE"]
    assert not list((cli.home / "jobs").glob("*.json"))


def test_worker_killed_twice_abandons_the_run_cleanly(cli, server, sql_file):
    configure(cli, server)
    cli.planner.hold()
    submit(cli, sql_file)
    _kill_worker_mid_compile(cli)
    state(cli, "app-1", "RUNNING", wait=False)  # second attempt
    _kill_worker_mid_compile(cli)
    state(cli, "app-1", "FINISHED")  # gives up: no garbage for this run
    cli.wait_workers()
    assert cli("flush").returncode == 0
    assert server.events == []
    assert Store(cli.home / "state.db").rows("SELECT * FROM runs") == []
    assert not list((cli.home / "jobs").glob("*"))


def test_broken_sql_and_missing_jar_fail_open(cli, server, tmp_path):
    configure(cli, server)
    broken = tmp_path / "broken.sql"
    text = case_sql("union_all").rsplit("INSERT", 1)[0] + "INSERT INTO out_a SELEC order_id FROM orders;\n"
    parse_error = 'SQL parse failed. Encountered "order_id" at line 1, column 25.'
    broken.write_text(cli.planner.record_error(text, parse_error), encoding="utf-8")
    result = submit(cli, broken, "app-b")
    assert result.stderr == b""
    result = submit(cli, tmp_path / "job-does-not-exist.sql", "app-c")
    assert len(result.stderr.decode().strip().splitlines()) == 1
    ok = tmp_path / "ok.sql"
    ok.write_text("INSERT INTO a SELECT * FROM b;", encoding="utf-8")
    result = submit(cli, ok, "app-d", "j", "--jar", str(tmp_path / "missing.jar"))
    lines = result.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and "missing.jar" in lines[0]
    cli.wait_workers()
    for app in ("app-b", "app-c", "app-d"):
        state(cli, app, "RUNNING")
        state(cli, app, "FAILED", "--error", "boom")
    assert server.events == []
    log = (cli.home / "compile-service.log").read_text()
    assert "SQL parse failed" in log


def test_corrupt_state_file_fails_open(cli, server, sql_file, private_home):
    private_home.mkdir(parents=True)
    (private_home / "state.db").write_bytes(b"this is not a database" * 100)
    for args in (("state", "--app-id", "x", "--state", "RUNNING"), ("flush",)):
        result = cli(*args, PLANLINEAGE_LINEAGE_ADDRESS=server.address)
        assert result.returncode == 0
    result = submit(cli, sql_file, PLANLINEAGE_LINEAGE_ADDRESS=server.address)
    assert len(result.stderr.decode().strip().splitlines()) <= 1
    cli.env["PLANLINEAGE_LINEAGE_ADDRESS"] = server.address
    cli.wait_workers()
    state(cli, "app-1", "FINISHED")
    assert [e["eventType"] for e in server.events] == ["START", "COMPLETE"]


def test_secrets_of_the_sql_reach_neither_server_nor_output(cli, sql_file):
    from gravitino_server import GravitinoTestServer

    with GravitinoTestServer(token="tok-ABCDEFGH-123456") as server:
        configure(cli, server, **{"lineage.token": "tok-ABCDEFGH-123456"})
        outputs = [submit(cli, sql_file)]
        cli.wait_workers()
        outputs.append(state(cli, "app-1", "FAILED", "--error", f"jdbc:mysql://u:{SECRET}@db/x failed"))
        outputs.append(cli("flush"))
        outputs.append(cli("settings", "list"))
        outputs.append(cli("settings", "get", "lineage.token"))
        assert [e["eventType"] for e in server.events] == ["START", "FAIL"]
        assert "sql" in server.events[0]["job"]["facets"]
        for request in server.requests:
            assert SECRET.encode() not in request.body
        for result in outputs:
            assert SECRET.encode() not in result.stdout + result.stderr
            assert b"tok-ABCDEFGH-123456" not in result.stdout + result.stderr
        sql_facet = server.events[0]["job"]["facets"]["sql"]["query"]
        assert sql_facet.startswith("INSERT INTO out_b")  # the job's own statement (issue #37), no secret in it
        # nothing on disk holds it either: store, its WAL, logs, notices; no job file is left
        for path in cli.home.rglob("*"):
            if path.is_file():
                assert SECRET.encode() not in path.read_bytes(), path
        assert not list(cli.home.rglob("*.tmp"))


def test_sql_facet_is_capped_with_a_marker_and_a_warning(cli, server, tmp_path):
    configure(cli, server, **{"lineage.sql-max-bytes": "4096"})
    big = tmp_path / "big.sql"
    # the filler inside the INSERT: the job's SQL facet is its own statement (issue #37)
    text = SQL.rstrip().rstrip(";") + "\n" + "".join(f"-- filler line {i} {'x' * 80}\n" for i in range(2000)) + ";\n"
    big.write_text(cli.planner.record(text, "regular_join"), encoding="utf-8")
    submit(cli, big)
    cli.wait_workers()
    state(cli, "app-1", "FINISHED")
    query = server.events[0]["job"]["facets"]["sql"]["query"]
    assert len(query.encode()) <= 4096 and "SQL truncated to 4096 of" in query
    assert "truncated" in (cli.home / "compile-service.log").read_text()
    assert all(len(r.body) < 64 * 1024 for r in server.requests)


def test_submit_loads_no_model_no_transport_and_starts_no_jvm(cli, server, sql_file):
    """Exact where a wall-clock limit would flake on a busy machine (figures: bench/lifecycle_load.py):
    the submission's path imports neither pydantic, openlineage, httpx nor the planner, and
    only queues the compile."""
    configure(cli, server)
    cli.planner.hold()  # the job file stays until the compile ends
    result = cli(
        "submit",
        "--app-id",
        "a",
        "--job-name",
        "j",
        "--sql-file",
        str(sql_file),
        "--lineage-enable",
        PYTHONPROFILEIMPORTTIME="1",
    )
    assert result.returncode == 0
    imported = {line.split("|")[-1].strip() for line in result.stderr.decode().splitlines() if "|" in line}
    assert "planlineage.lifecycle.runner" in imported  # the profile is real
    for heavy in ("pydantic", "openlineage.client", "httpx", "planlineage.pipeline", "planlineage.planner.compiler"):
        assert heavy not in imported, heavy
    assert [p.name for p in (cli.home / "jobs").iterdir()] == [
        f"{Store(cli.home / 'state.db').rows('SELECT run_id FROM runs')[0]['run_id']}.json"
    ]
    cli.planner.release()
    cli.wait_workers(60)


def test_401_parks_until_settings_set_token_then_outbox_list_and_retry(cli, sql_file):
    from gravitino_server import GravitinoTestServer

    with GravitinoTestServer(token="FAKE-right-token") as srv:
        configure(cli, srv)
        assert cli("settings", "set", "lineage.token", "FAKE-wrong-token").returncode == 0
        submit(cli, sql_file)
        cli.wait_workers()
        state(cli, "app-1", "RUNNING")
        listed = cli("outbox", "list")
        assert listed.returncode == 0
        lines = listed.stdout.decode().splitlines()
        assert [line.split()[1] for line in lines] == ["START", "RUNNING"]
        assert "parked (access)" in lines[0] and "HTTP 401" in lines[0] and "due" in lines[1]
        assert srv.events == []
        # the fix: a new token requeues what 401 parked; the next command delivers it, in order
        assert cli("settings", "set", "lineage.token", "-", input=b"FAKE-right-token\n").returncode == 0
        flushed = cli("flush", "--verbose")
        assert "delivered 2, parked 0, pending 0" in flushed.stderr.decode()
        assert [e["eventType"] for e in srv.events] == ["START", "RUNNING"]
        assert b"FAKE-right-token" not in flushed.stderr + listed.stdout + listed.stderr


def test_a_run_the_server_refuses_waits_alone_and_outbox_retry_sends_it(cli, sql_file, tmp_path):
    from gravitino_server import GravitinoTestServer

    with GravitinoTestServer() as srv:
        configure(cli, srv, **{"lineage.retry-attempts": "1"})
        submit(cli, sql_file, "app-bad", "bad")
        cli.wait_workers()
        run = Store(cli.home / "state.db").rows("SELECT run_id FROM runs")[0]["run_id"]
        srv.refuse_runs.add(run)
        state(cli, "app-bad", "RUNNING")  # START went out; RUNNING is refused and parked (1 attempt)
        submit(cli, sql_file, "app-good", "good")
        cli.wait_workers()
        state(cli, "app-good", "FINISHED")
        assert [(e["job"]["name"], e["eventType"]) for e in srv.events] == [
            ("bad", "START"),
            ("good", "START"),
            ("good", "COMPLETE"),
        ]
        listed = cli("outbox", "list", "--run", run).stdout.decode()
        assert "RUNNING" in listed and "parked (capped)" in listed and "HTTP 500" in listed
        srv.refuse_runs.clear()
        retried = cli("outbox", "retry", "--run", run)
        assert "1 lineage event(s) put back in line" in retried.stderr.decode()
        assert srv.events[-1]["eventType"] == "RUNNING" and srv.events[-1]["run"]["runId"] == run
        assert cli("outbox", "list").stderr.decode().strip() == "no lineage events are waiting"


def test_flush_and_outbox_list_say_that_runs_are_still_compiling(cli, server, sql_file):
    configure(cli, server)
    cli.planner.hold()  # the compile does not end until released
    submit(cli, sql_file)
    wait_for(cli.planner.compiling, what="the compile under way")
    flushed = cli("flush")
    assert flushed.returncode == 0
    assert "1 run(s) still compiling: their lineage events follow" in flushed.stderr.decode()
    listed = cli("outbox", "list").stderr.decode()
    assert listed.startswith("no lineage events are waiting; 1 run(s) still compiling"), listed
    verbose = cli("flush", "--verbose").stderr.decode()
    assert "no lineage events are waiting; 1 run(s) still compiling" in verbose
    cli.planner.release()
    wait_for(lambda: server.events, what="START once the compile is done")
    cli.wait_workers(60)
    assert cli("outbox", "list").stderr.decode().strip() == "no lineage events are waiting"
    assert cli("flush").stderr.decode() == ""


def test_a_job_file_that_cannot_be_written_ends_the_run_says_so_and_the_next_submission_is_reported(
    cli, server, sql_file
):
    configure(cli, server)
    (cli.home / "jobs").write_text("a file where the jobs folder should be")  # every job file write fails
    result = submit(cli, sql_file)
    said = result.stderr.decode()
    assert "the compile of app-1 could not be queued (Not a directory" in said and "the run is dropped" in said
    assert "Traceback" not in said
    status = json.loads(cli("store", "status", "--json").stdout)
    assert status["runs"] == {}  # not COMPILING for ever
    (cli.home / "jobs").unlink()
    submit(cli, sql_file)
    cli.wait_workers(60)
    assert [e["eventType"] for e in server.events] == ["START"]


def test_a_fixed_token_reaches_the_running_compile_service_and_releases_what_401_parked(cli, sql_file):
    from gravitino_server import GravitinoTestServer

    cli.env["PLANLINEAGE_COMPILE_IDLE_SECONDS"] = "60"  # the service keeps running, delivering
    cli.env["PLANLINEAGE_COMPILE_FLUSH_SECONDS"] = "20"  # in passes as long as by default
    with GravitinoTestServer(token="FAKE-right-token") as srv:
        configure(cli, srv)
        assert cli("settings", "set", "lineage.token", "FAKE-wrong-token").returncode == 0
        for i in range(3):
            submit(cli, sql_file, f"app-{i}", f"job{i}")
        wait_for(lambda: srv.statuses().count(401) >= 3, 60, "3 refusals")
        for i in range(3):  # each run's RUNNING waits behind its parked START: the service keeps delivering
            state(cli, f"app-{i}", "RUNNING", wait=False)
        time.sleep(1)  # the service is in its delivery passes, made with the wrong token
        assert cli.workers()
        assert cli("settings", "set", "lineage.token", "-", input=b"FAKE-right-token\n").returncode == 0
        wait_for(lambda: len(srv.events) == 6, 30, "the 3 runs' START and RUNNING from the running service")
        order: dict[str, list[str]] = {}
        for event in srv.events:
            order.setdefault(event["job"]["name"], []).append(event["eventType"])
        assert order == {f"job{i}": ["START", "RUNNING"] for i in range(3)}
        assert Counter(srv.keys().values()) == Counter({1: 6})
    assert "parked" not in cli("outbox", "list").stdout.decode()


def test_the_console_transport_prints_the_background_services_events_into_its_log(cli, sql_file, private_home):
    """The compile service runs detached (its standard error is nowhere): the `console`
    transport recorded the run and printed its events nowhere at all."""
    assert cli("settings", "set", "lineage.transport", "console").returncode == 0
    submit(cli, sql_file)
    state(cli, "app-1", "RUNNING")
    log = (private_home / "compile-service.log").read_text(encoding="utf-8")
    printed = [json.loads(line[line.index("{") :]) for line in log.splitlines() if '"eventType"' in line]
    assert [e["eventType"] for e in printed] == ["START", "RUNNING"], log
    assert {json.dumps(datasets(e)) for e in printed} == {json.dumps(REGULAR_JOIN)}
    assert SECRET not in log
