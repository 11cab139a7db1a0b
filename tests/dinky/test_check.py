"""`planlineage watch --dinky-db --check`, exactly-once across a watcher killed mid-poll, two
nodes sharing a store (one leads), and one process watching StreamPark and Dinky at once."""

from __future__ import annotations

import itertools
import os
import signal
import time

from lineages import ONE_SINK, exactly_once, jobs, types, wait_for
from servers import ADMIN_PASSWORD, WATCH_USER

from planlineage.store.leadership import leaders
from planlineage.store.postgres import PostgresStore

_names = itertools.count()


def test_check_prints_schema_tasks_versions_and_why_not(dinky, watch):
    d = dinky("1.3")
    c = d.console
    reported = c.create_task("orders_clean", ONE_SINK, cluster=c.cluster("1.16.3"))
    env = c.create_task("kafka_env", "CREATE TABLE t (a INT) WITH ('connector' = 'datagen')", dialect="FlinkSqlEnv")
    jar = c.create_task("a_jar", "", dialect="FlinkJar")
    gone = c.create_task("gone", ONE_SINK)
    c.delete_task(gone)
    result = watch("--check", "--dinky-db", d.url)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert f"Dinky database: {d.server.dialect}://{WATCH_USER}:***@127.0.0.1:{d.server.port}/{d.database}\n" in out
    assert "schema: Dinky 1.3.0+ (is_delete) schema" in out
    assert "grants: every table the watcher reads is readable" in out
    assert "tasks: 4 (2 FlinkSql)" in out
    assert f"reported: 1: dinky:{reported} orders_clean" in out
    assert f"  dinky:{reported} orders_clean: Flink 1.16.3" in out
    assert f"not reported: dinky:{env} kafka_env: dialect FlinkSqlEnv is not FlinkSql" in out
    assert f"not reported: dinky:{jar} a_jar: dialect FlinkJar is not FlinkSql" in out
    assert f"not reported: dinky:{gone} gone: the task is deleted (is_delete)" in out
    assert "PROBLEM" not in out
    assert not (watch.home / "state.db").exists()  # --check writes nothing


def test_check_lists_the_missing_grants_and_exits_2(dinky, watch, server):
    d = dinky("1.2", grant=False)
    server.grant_select(d.database, ["dinky_task"])
    result = watch("--check", "--dinky-db", d.url)
    assert result.returncode == 2
    out = result.stdout
    assert "schema: Dinky 1.0-1.2 schema" in out
    assert "PROBLEM: the account cannot read dinky_job_instance, dinky_history" in out
    if server.dialect == "postgresql":
        assert (
            "GRANT SELECT ON public.dinky_job_instance, public.dinky_history, public.dinky_cluster, "
            f"public.dinky_fragment TO {WATCH_USER};" in out
        )
    else:
        assert f"GRANT SELECT ON `{d.database}`.`dinky_job_instance` TO '{WATCH_USER}'@'%';" in out
    unreachable = watch("--check", "--dinky-db", d.url.replace(f":{server.port}/", ":1/"))
    assert unreachable.returncode == 2 and "PROBLEM: cannot connect to the Dinky database" in unreachable.stdout


def test_a_watcher_killed_after_starting_a_run_never_starts_it_again(dinky, watch, gravitino):
    """The run is saved as started before the poll's cursor: a poll that died in between (the
    cursor put back here, as a crash leaves it) sees the same instance and starts nothing."""
    from planlineage.store import open_store
    from planlineage.watch import ledger

    d = dinky()
    c = d.console
    watch.recorded()
    task = c.create_task("orders_clean", ONE_SINK)
    watch.once(d.url)
    cursor_before = c.execute("SELECT MAX(id) FROM dinky_job_instance")[0][0] or 0
    c.set_status(c.submit(task), "RUNNING")
    watch.once(d.url)
    saved = dict(os.environ)
    try:
        os.environ["PLANLINEAGE_HOME"] = str(watch.home)
        store = open_store()
        (source,) = store.read(lambda conn: [r["source"] for r in conn.execute("SELECT source FROM watch_cursors")])
        assert source.startswith("dinky:")
        cursor, snaps = ledger.load(store, source)
        assert cursor > cursor_before
        ledger.save(store, source, cursor_before, snaps)  # as if the poll died before saving its cursor
    finally:
        os.environ.clear()
        os.environ.update(saved)
    again = watch.once(d.url)
    assert "submitted run" not in again.stderr and "ABORT" not in again.stderr
    assert types(gravitino, "dinky.orders_clean") == ["START", "RUNNING"]
    exactly_once(gravitino)


def test_two_nodes_on_one_shared_store_report_once_and_the_survivor_takes_over(
    dinky, watch, gravitino, pg_server, worker_dir, tmp_path
):
    d = dinky()
    store_db = f"lineage_store_dinky_{os.getpid()}_{next(_names)}"
    with pg_server.admin() as conn:
        conn.execute(f"CREATE DATABASE {store_db}")
    store_url = f"postgresql://postgres:{ADMIN_PASSWORD}@127.0.0.1:{pg_server.port}/{store_db}"
    (tmp_path / "b").mkdir()
    other = type(watch)(tmp_path / "b" / "home", tmp_path / "b", gravitino, worker_dir)
    other.flag = watch.flag
    for node, name in ((watch, "node-a"), (other, "node-b")):
        node.env.update(PLANLINEAGE_STORE=store_url, PLANLINEAGE_NODE=name)
        node.recorded()
    c = d.console
    task = c.create_task("orders", ONE_SINK)
    daemons = {"node-a": watch.daemon(d.url, "--interval", "1"), "node-b": other.daemon(d.url, "--interval", "1")}
    store = PostgresStore(store_url, tmp_path)
    try:
        wait_for(lambda: leaders(store) and leaders(store)[0].alive, timeout=40, what="a leader")
        assert [lead.name.split(":", 1)[0] for lead in leaders(store)] == ["dinky-watch"]
        time.sleep(2)  # the leader's baseline poll
        instance = c.submit(task)
        c.set_status(instance, "RUNNING")
        wait_for(lambda: types(gravitino, "dinky.orders") == ["START", "RUNNING"], timeout=40, what="START, RUNNING")
        first = leaders(store)[0].node
        daemons.pop(first).send_signal(signal.SIGKILL)  # the leader dies without handing over
        wait_for(lambda: leaders(store)[0].node != first, timeout=10, what="the other node taking the lead")
        c.set_status(instance, "FINISHED")
        wait_for(
            lambda: types(gravitino, "dinky.orders") == ["START", "RUNNING", "COMPLETE"], timeout=40, what="COMPLETE"
        )
        time.sleep(3)  # more polls by the new leader: nothing is sent again
        assert types(gravitino, "dinky.orders") == ["START", "RUNNING", "COMPLETE"]
        exactly_once(gravitino)
    finally:
        store.close()
        for process in daemons.values():
            process.send_signal(signal.SIGTERM)
            process.wait(30)


def test_one_process_watches_streampark_and_dinky(dinky, streampark, watch, gravitino):
    from console import RUNNING

    d, sp = dinky(), streampark("dev")
    watch.recorded()
    task = d.console.create_task("from_dinky", ONE_SINK)
    app = sp.console.create_app("from_streampark", ONE_SINK)
    daemon = watch.daemon(d.url, "--streampark-db", sp.url, "--interval", "0.3")
    try:
        wait_for(lambda: watch.log.read_text().count("schema") >= 2, timeout=40, what="both first polls")
        d.console.set_status(d.console.submit(task), "RUNNING")
        sp.console.start(app)
        sp.console.set_state(app, RUNNING)
        wait_for(
            lambda: (
                jobs(gravitino)
                == {"dinky.from_dinky": ["START", "RUNNING"], "streampark.from_streampark": ["START", "RUNNING"]}
            ),
            what="both platforms' runs",
        )
    finally:
        assert watch.stop(daemon) == 0
    exactly_once(gravitino)


def test_without_a_grant_on_dinky_history_the_task_statement_is_compiled(dinky, watch, gravitino, server):
    d = dinky(grant=False)
    server.grant_select(d.database, ["dinky_task", "dinky_job_instance", "dinky_cluster", "dinky_fragment"])
    c = d.console
    watch.recorded()
    task = c.create_task("orders_clean", ONE_SINK)
    first = watch.once(d.url)
    assert "WARN the account cannot read dinky_history (watch --check lists the grants)" in first.stderr
    c.set_status(c.submit(task), "RUNNING")
    result = watch.once(d.url, "--verbose")
    assert f"dinky:{task} orders_clean: no dinky_history row" in result.stderr, result.stderr
    assert jobs(gravitino) == {"dinky.orders_clean": ["START", "RUNNING"]}
