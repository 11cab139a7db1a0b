"""`planlineage watch --dinky-db` against real PostgreSQL and MariaDB servers holding Dinky's
schema, the tests acting as Dinky's console row by row, delivering to a Gravitino-compatible
server.  Compiles go through the real pipeline with the recorded planner (no JVM).  Each
scenario runs on both databases."""

from __future__ import annotations

import json
import time

from lineages import ONE_SINK, THREE_SINKS, datasets, exactly_once, jobs, timeline, types, wait_for
from servers import WATCH_PASSWORD

TABLES, INSERT = ONE_SINK.rsplit("INSERT", 1)
INSERT = "INSERT" + INSERT


def test_first_poll_adopts_running_jobs_and_replays_no_history(dinky, watch, gravitino):
    d = dinky()
    c = d.console
    watch.recorded()
    running = c.create_task("orders_clean", ONE_SINK)
    c.set_status(c.submit(running), "RUNNING")
    done = c.create_task("old_report", ONE_SINK)
    c.set_status(c.submit(done), "FINISHED")  # history: left to --history
    jar = c.create_task("jar_job", "", dialect="FlinkJar")
    c.set_status(c.submit(jar), "RUNNING")  # not Flink SQL

    result = watch.once(d.url)
    assert "Dinky 1.3.0+ (is_delete) schema" in result.stderr
    assert f"dinky:{running} orders_clean: adopted run" in result.stderr
    assert jobs(gravitino) == {"dinky.orders_clean": ["START", "RUNNING"]}
    assert datasets(gravitino, "dinky.orders_clean") == {(("orders", "refunds"), ("out-a",))}
    watch.once(d.url)  # nothing changed: nothing sent
    assert len(gravitino.events) == 2
    exactly_once(gravitino)


def test_start_running_finished_each_once_per_sink_of_a_statement_set(dinky, watch, gravitino):
    d = dinky("1.2")
    c = d.console
    watch.recorded()
    task = c.create_task("clicks", THREE_SINKS)
    watch.once(d.url)  # baseline
    instance = c.submit(task)
    watch.once(d.url)
    c.set_status(instance, "RUNNING")
    watch.once(d.url)
    watch.once(d.url)
    c.set_status(instance, "FINISHED")
    watch.once(d.url)
    children = tuple(f"dinky.clicks.default_catalog.default_database.{sink}" for sink in ("out_a", "out_b", "out_s"))
    for job in ("dinky.clicks", *children):
        assert types(gravitino, job) == ["START", "RUNNING", "COMPLETE"], job
    assert datasets(gravitino, children[1]) == {(("refunds",), ("dw.public.out_b",))}
    # The run id derives from the job instance's id and creation time: a history replay of it is the same run.
    from datetime import UTC

    from planlineage.history.ledger import run_id_for

    created = c.execute("SELECT create_time FROM dinky_job_instance WHERE id = %s", (instance,))[0][0]
    expected = run_id_for(f"dinky:instance={instance}", created.replace(tzinfo=UTC))
    assert {run for run, _ in timeline(gravitino, "dinky.clicks")} == {expected}
    exactly_once(gravitino)


def test_fragments_environment_and_dinky_statements_are_resolved_before_compiling(dinky, watch, gravitino, tmp_path):
    d = dinky()
    c = d.console
    planner = watch.recorded()
    udf = tmp_path / "udf.jar"
    udf.write_bytes(b"PK")
    c.fragment("refunds_topic", "refunds")  # a global variable
    c.fragment("unused", "x", enabled=False)
    env_sql = TABLES.replace("'topic' = 'refunds'", "'topic' = '${refunds_topic}'")
    env = c.create_task("kafka_env", env_sql, dialect="FlinkSqlEnv")
    script = (
        "sink_table := out_a;\n"
        "# Dinky's comment line\n"
        f"ADD CUSTOMJAR '{udf}';\n"
        "ADD JAR 'rs:/jars/missing.jar';\n" + INSERT.replace("INTO out_a", "INTO ${sink_table}") + "PRINT out_a;\n"
    )
    task = c.create_task("orders_union", script, env=env, fragment=True)
    watch.once(d.url)
    c.set_status(c.submit(task), "RUNNING")
    result = watch.once(d.url)
    assert types(gravitino, "dinky.orders_union") == ["START", "RUNNING"], result.stderr
    assert datasets(gravitino, "dinky.orders_union") == {(("orders", "refunds"), ("out-a",))}
    assert planner.jars() == [[str(udf)]]
    assert "`ADD JAR 'rs:/jars/missing.jar'`: the jar is not readable here" in result.stderr
    facet = gravitino.events[0]["job"]["facets"]["sql"]["query"]
    assert "${" not in facet and ":=" not in facet and "PRINT" not in facet


def test_what_the_watcher_prints_of_a_task_has_no_terminal_escape_and_no_credential(dinky, watch, gravitino):
    """A task's name and its `ADD JAR` address come from Dinky's database: printed raw, an escape
    sequence in the name clears the reader's screen, and the jar address's password and signed
    query reach the terminal and the service's journal."""
    d = dinky()
    c = d.console
    jar = "https://builder:Hunter2pw@repo.example/udf.jar?token=tok123abc&X-Amz-Signature=sig456def"
    task = c.create_task("orders\x1b[2J\x1b]0;pwned\x07", f"ADD JAR '{jar}';\n{ONE_SINK}")
    watch.once(d.url)
    c.set_status(c.submit(task), "RUNNING")
    result = watch.once(d.url)
    assert "the jar is not readable here" in result.stderr
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert "orders\\x1b[2J" in result.stderr  # shown, escaped
    for secret in ("Hunter2pw", "tok123abc", "sig456def"):
        assert secret not in result.stderr


def test_cdcsource_and_an_unknown_variable_are_warned_and_never_reported(dinky, watch, gravitino):
    d = dinky()
    c = d.console
    watch.recorded()
    cdc = c.create_task(
        "whole_db",
        "EXECUTE CDCSOURCE demo WITH ('connector' = 'mysql-cdc', 'hostname' = 'db', 'table-name' = 'shop\\..*',"
        " 'sink.connector' = 'print');\n" + ONE_SINK,
    )
    unknown = c.create_task("no_value", ONE_SINK.replace("'topic' = 'orders'", "'topic' = '${nowhere}'"), fragment=True)
    fine = c.create_task("fine", ONE_SINK)
    watch.once(d.url)
    for task in (cdc, unknown, fine):
        c.set_status(c.submit(task), "RUNNING")
    result = watch.once(d.url)
    assert f"WARN dinky:{cdc} whole_db: not reported: line 1: `EXECUTE CDCSOURCE demo WITH" in result.stderr
    assert "(Dinky's whole-database sync) decides its tables only when it runs" in result.stderr
    assert f"WARN dinky:{unknown} no_value: not reported: ${{nowhere}} has no value" in result.stderr
    assert jobs(gravitino) == {"dinky.fine": ["START", "RUNNING"]}


def test_unknown_waits_out_the_grace_then_aborts_and_a_short_one_sends_nothing(dinky, watch, gravitino):
    d = dinky()
    c = d.console
    watch.recorded()
    task = c.create_task("flaky", ONE_SINK)
    watch.once(d.url)
    instance = c.submit(task)
    c.set_status(instance, "RUNNING")
    watch.once(d.url)
    c.set_status(instance, "RECONNECTING")
    watch.once(d.url, "--lost-grace", "60")
    c.set_status(instance, "RUNNING")  # it was running all along
    watch.once(d.url, "--lost-grace", "60")
    assert types(gravitino, "dinky.flaky") == ["START", "RUNNING"]
    c.set_status(instance, "UNKNOWN")  # this time it stays
    watch.once(d.url, "--lost-grace", "0.5")
    time.sleep(0.6)
    result = watch.once(d.url, "--lost-grace", "0.5")
    assert f"dinky:{task} flaky: UNKNOWN for" in result.stderr and "ABORT event" in result.stderr
    watch.once(d.url, "--lost-grace", "0.5")
    assert types(gravitino, "dinky.flaky") == ["START", "RUNNING", "ABORT"]  # never FAIL: the verdict is unknown
    exactly_once(gravitino)


def test_a_restart_aborts_the_open_run_and_starts_a_new_one(dinky, watch, gravitino):
    d = dinky()
    c = d.console
    watch.recorded()
    task = c.create_task("orders_clean", ONE_SINK)
    watch.once(d.url)
    first = c.submit(task)
    c.set_status(first, "RUNNING")
    watch.once(d.url)
    second = c.submit(task)  # resubmitted without an end state reaching the watcher
    c.set_status(second, "RUNNING")
    result = watch.once(d.url)
    assert "previous run never ended, closed: ABORT event" in result.stderr
    c.set_status(first, "CANCELED")  # the old instance's late end changes nothing
    c.set_status(second, "FAILED")
    watch.once(d.url)
    runs = timeline(gravitino, "dinky.orders_clean")
    assert [t for _, t in runs] == ["START", "RUNNING", "ABORT", "START", "RUNNING", "FAIL"]
    assert runs[0][0] == runs[2][0] != runs[3][0] == runs[5][0]
    exactly_once(gravitino)


def test_a_deleted_task_or_instance_ends_nothing(dinky, watch, gravitino):
    d = dinky("1.3")
    c = d.console
    watch.recorded()
    task = c.create_task("short_lived", ONE_SINK)
    watch.once(d.url)
    instance = c.submit(task)
    c.set_status(instance, "RUNNING")
    watch.once(d.url)
    c.delete_task(task)
    c.update("dinky_job_instance", instance, {"is_delete": True, "status": "CANCELED"})
    watch.once(d.url)
    assert types(gravitino, "dinky.short_lived") == ["START", "RUNNING"]
    again = c.submit(task)  # a new submission replaces the open run, but of a deleted task is not reported
    c.set_status(again, "RUNNING")
    result = watch.once(d.url, "--verbose")
    assert f"dinky:{task} short_lived: not reported: the task is deleted (is_delete)" in result.stderr
    assert timeline(gravitino, "dinky.short_lived")[-1][1] == "ABORT" and len(gravitino.events) == 3


def test_a_cluster_of_flink_1_16_compiles_with_1_16_and_an_unknown_version_is_warned(dinky, watch, gravitino):
    d = dinky()
    c = d.console
    planner = watch.recorded()
    # Only 1.16 answers ONE_SINK with its plan: a compile with any other version fails the run.
    for minor in ("1.19", "1.20"):
        path = planner.folder / f"answers-{minor}.json"
        answers = json.loads(path.read_text())
        for key in answers:
            answers[key] = {"ok": False, "error": {"statement": 0, "message": f"compiled with {minor}"}}
        path.write_text(json.dumps(answers))
    on_116 = c.create_task("on_1_16", ONE_SINK, cluster=c.cluster("1.16.3"))
    on_199 = c.create_task("on_1_99", ONE_SINK, cluster=c.cluster("1.99.0"))
    watch.once(d.url)
    for task in (on_116, on_199):
        c.set_status(c.submit(task), "RUNNING")
    result = watch.once(d.url)
    assert f"dinky:{on_116} on_1_16: submitted run (job instance" in result.stderr
    assert "Flink 1.16.3: compiling" in result.stderr
    assert jobs(gravitino) == {"dinky.on_1_16": ["START", "RUNNING"]}, result.stderr
    assert datasets(gravitino, "dinky.on_1_16") == {(("orders", "refunds"), ("out-a",))}
    warning = f"WARN dinky:{on_199} on_1_99: not reported: Flink 1.99.0 (cluster "
    assert result.stderr.count(warning) == 1
    assert not (planner.cache / "1.99.0").exists()


def test_wrong_password_fails_open_and_no_password_is_ever_written(dinky, watch, gravitino, server):
    d = dinky()
    c = d.console
    watch.recorded()
    task = c.create_task("secretive", ONE_SINK)
    with_password = server.url(d.database, with_password=True)
    watch.once(with_password, "--verbose")
    c.set_status(c.submit(task), "RUNNING")
    watch.once(with_password, "--verbose")
    watch("--check", "--dinky-db", with_password)
    wrong = watch.once(d.url, PLANLINEAGE_DINKY_PASSWORD="FAKE-wrong-password")
    assert "cannot connect to the Dinky database" in wrong.stderr and "FAKE-wrong-password" not in wrong.stderr
    assert types(gravitino, "dinky.secretive") == ["START", "RUNNING"]
    assert WATCH_PASSWORD not in watch.everything_written()
    assert all(WATCH_PASSWORD.encode() not in r.body for r in gravitino.requests)


def test_database_down_mid_watch_and_back(dinky, watch, gravitino):
    d = dinky()
    c = d.console
    watch.recorded()
    task = c.create_task("steady", ONE_SINK)
    daemon = watch.daemon(d.url, "--interval", "0.2")
    try:
        wait_for(lambda: "schema" in watch.log.read_text(), what="the first poll")
        instance = c.submit(task)
        c.set_status(instance, "RUNNING")
        wait_for(lambda: types(gravitino, "dinky.steady") == ["START", "RUNNING"], what="START, RUNNING")
        c.close()
        d.server.stop()
        wait_for(lambda: "retrying with backoff" in watch.log.read_text(), what="the outage line")
        d.server.start()
        c.conn = d.server.admin(d.database)
        c.set_status(instance, "FINISHED")
        wait_for(
            lambda: types(gravitino, "dinky.steady")[-1:] == ["COMPLETE"], timeout=40, what="COMPLETE after the outage"
        )
        wait_for(lambda: "the Dinky database is readable again" in watch.log.read_text(), what="the recovery line")
    finally:
        code = watch.stop(daemon)
    assert code == 0
    log = watch.log.read_text()
    assert log.count("retrying with backoff") == 1, log
    assert log.count(f"dinky:{task} steady: RUNNING -> FINISHED: COMPLETE event") == 1, log
    assert types(gravitino, "dinky.steady") == ["START", "RUNNING", "COMPLETE"]
    exactly_once(gravitino)


def test_a_job_that_also_runs_the_flink_listener_is_reported_on_the_listeners_job(dinky, watch, gravitino):
    """Its script names openlineage-flink's listener: the runs go to the listener's job
    (``openlineage.job.namespace``, ``pipeline.name``), with Dinky's own run id."""
    from planlineage.listener_conf import FLINK_LISTENER_FACTORY, FLINK_LISTENER_OPTION

    d = dinky()
    c = d.console
    script = (
        f"SET '{FLINK_LISTENER_OPTION}' = '{FLINK_LISTENER_FACTORY}';\n"
        "SET 'openlineage.job.namespace' = 'flink-prod';\nSET 'pipeline.name' = 'orders-union';\n" + ONE_SINK
    )
    watch.recorded().record(script, "union_all")
    listened = c.create_task("orders_clean", script)
    plain = c.create_task("orders_copy", ONE_SINK)
    watch.once(d.url)  # baseline
    for task in (listened, plain):
        c.set_status(c.submit(task), "RUNNING")
    watch.once(d.url)
    assert jobs(gravitino) == {"orders-union": ["START", "RUNNING"], "dinky.orders_copy": ["START", "RUNNING"]}
    namespaces = {e["job"]["name"]: e["job"]["namespace"] for e in gravitino.events}
    assert namespaces == {
        "orders-union": "flink-prod",
        "dinky.orders_copy": "planlineage",
    }  # the listener's job: no prefix
    c.set_status(c.execute("SELECT MAX(id) FROM dinky_job_instance WHERE task_id = %s", (listened,))[0][0], "FINISHED")
    watch.once(d.url)
    assert types(gravitino, "orders-union") == ["START", "RUNNING", "COMPLETE"]
    exactly_once(gravitino)
