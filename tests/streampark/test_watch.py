"""`planlineage watch` against real PostgreSQL and MariaDB servers holding StreamPark's schema,
with the tests acting as StreamPark's console row by row, delivering to a Gravitino-compatible
server.  Each scenario runs on both databases."""

from __future__ import annotations

import re
import time

from console import CANCELED, FAILED, FINISHED, FLINK_JAR, LOST, RUNNING
from lineages import BROKEN, ONE_SINK, THREE_SINKS, datasets, exactly_once, jobs, timeline, types
from servers import WATCH_PASSWORD

SQL = """
CREATE TABLE src (id BIGINT, v STRING) WITH ('connector' = 'kafka', 'topic' = '{source}',
  'properties.bootstrap.servers' = 'kafka-1:9092', 'format' = 'json');
CREATE TABLE dst (id BIGINT, v STRING) WITH ('connector' = 'kafka', 'topic' = '{sink}',
  'properties.bootstrap.servers' = 'kafka-1:9092', 'format' = 'json');
INSERT INTO dst SELECT id, v FROM src;
"""


def kafka_sql(source: str, sink: str) -> str:
    return SQL.format(source=source, sink=sink)


def wait_for(predicate, timeout: float = 30.0, what: str = "condition"):
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


# -- adoption, with real compiles ---------------------------------------------------------------


def test_first_start_adopts_running_apps_and_replays_no_history(streampark, watch, gravitino, real_planner):
    sp = streampark("dev")
    c = sp.console
    env = c.env("1.20.0")
    running = c.create_app("orders_clean", kafka_sql("orders", "orders_clean"), env=env)
    c.start(running)
    c.set_state(running, RUNNING)
    done = c.create_app("old_report", kafka_sql("a", "b"), env=env)
    c.start(done)
    c.set_state(done, FINISHED)  # history: not replayed
    jar = c.create_app("jar_job", kafka_sql("x", "y"), env=env, job_type=FLINK_JAR)
    c.start(jar)
    c.set_state(jar, RUNNING)  # not a SQL job

    result = watch.once(sp.url)
    assert f"flink:{running} orders_clean: adopted run, Flink 1.20.0" in result.stderr
    assert jobs(gravitino) == {"streampark.orders_clean": ["START", "RUNNING"]}
    assert datasets(gravitino, "streampark.orders_clean") == {(("orders",), ("orders_clean",))}
    assert gravitino.events[0]["job"]["namespace"] == "planlineage"

    again = watch.once(sp.url)  # nothing changed: nothing sent
    assert len(gravitino.events) == 2, again.stderr
    exactly_once(gravitino)


def test_variables_are_substituted_as_the_console_does_at_start(streampark, watch, gravitino, real_planner):
    sp = streampark("dev")
    c = sp.console
    c.env("1.20.0")
    c.variable(100000, "topic_in", "payments")
    c.variable(100001, "topic_in", "other_team_topic")  # another team's value is not used
    app = c.create_app("payments_clean", kafka_sql("${topic_in}", "payments_clean"), team=100000)
    watch.once(sp.url)  # baseline
    c.start(app)
    c.set_state(app, RUNNING)
    watch.once(sp.url)
    assert types(gravitino, "streampark.payments_clean") == ["START", "RUNNING"]
    assert datasets(gravitino, "streampark.payments_clean") == {(("payments",), ("payments_clean",))}
    facet = gravitino.events[0]["job"]["facets"]["sql"]["query"]
    assert facet.startswith("INSERT INTO") and "${topic_in}" not in facet  # the job's own statement (issue #37)


# -- lifecycle scenarios (the recorded planner: real pipeline, recorded plans, no JVM) -------------


def test_the_cluster_jars_of_flink_home_are_compiled_with_after_the_apps_own(streampark, watch, gravitino, tmp_path):
    sp = streampark("dev")
    c = sp.console
    home = tmp_path / "flink-1.20.0"
    (home / "lib").mkdir(parents=True)
    for name in ("flink-dist-1.20.0.jar", "flink-table-planner-loader-1.20.0.jar", "acme-connector-1.0.jar"):
        (home / "lib" / name).write_bytes(b"PK")  # Flink's own jars stay out; the connector goes in
    c.update("t_flink_env", c.env("1.20.0"), {"flink_home": str(home)})
    other = c.env("1.19.1", default=False)  # a flink_home this watcher cannot read: compiled without it
    watch.recorded()
    app = c.create_app("orders_clean", ONE_SINK)
    unread = c.create_app("orders_copy", ONE_SINK, env=other)
    watch.once(sp.url)  # baseline
    c.start(app)
    c.start(unread)
    result = watch.once(sp.url, "--verbose")
    wait_for(lambda: len(watch.planner.jars()) == 2, what="both compiles")
    given = sorted(watch.planner.jars())
    assert given == [[], [str(home / "lib" / "acme-connector-1.0.jar")]]
    assert "/opt/flink-1.19.1 is not readable here" in result.stderr


def test_start_running_finished_each_exactly_once_per_sink(streampark, watch, gravitino):
    sp = streampark("dev")
    c = sp.console
    watch.recorded()
    app = c.create_app("clicks", THREE_SINKS)
    watch.once(sp.url)  # baseline: nothing is running
    assert gravitino.events == []

    c.start(app)  # STARTING, SQL promoted, START row
    watch.once(sp.url)
    c.set_state(app, RUNNING)
    watch.once(sp.url)
    watch.once(sp.url)  # no change: nothing more
    c.set_state(app, FINISHED)
    watch.once(sp.url)

    children = tuple(
        f"streampark.clicks.default_catalog.default_database.{sink}" for sink in ("out_a", "out_b", "out_s")
    )
    for job in ("streampark.clicks", *children):
        assert types(gravitino, job) == ["START", "RUNNING", "COMPLETE"], job
        assert len({run for run, _ in timeline(gravitino, job)}) == 1
    assert datasets(gravitino, children[0]) == {(("orders",), ("out-a",))}  # from the recorded plan
    assert datasets(gravitino, children[1]) == {(("refunds",), ("dw.public.out_b",))}
    assert datasets(gravitino, children[2]) == {(("crm.customers", "orders"), ())}  # print: no dataset
    exactly_once(gravitino)


def test_apps_of_flink_1_16_compile_with_1_16_and_of_1_14_are_read_from_the_text(streampark, watch, gravitino):
    """Each app with its environment's own version: 1.16's plan; 1.14 has no CompiledPlan, so its
    tables are read from the SQL text (one WARN naming the limit), never another version's plan."""
    sp = streampark("dev")
    c = sp.console
    watch.recorded()
    on_116 = c.create_app("on_1_16", ONE_SINK, env=c.env("1.16.3", default=False))
    on_114 = c.create_app("on_1_14", kafka_sql("clicks", "clicks_clean"), env=c.env("1.14.6", default=False))
    watch.once(sp.url)  # baseline
    for app in (on_116, on_114):
        c.start(app)
        c.set_state(app, RUNNING)
    result = watch.once(sp.url)
    assert types(gravitino, "streampark.on_1_16") == ["START", "RUNNING"]
    assert datasets(gravitino, "streampark.on_1_16") == {(("orders", "refunds"), ("out-a",))}  # the recorded 1.16 plan
    assert types(gravitino, "streampark.on_1_14") == ["START", "RUNNING"]
    assert datasets(gravitino, "streampark.on_1_14") == {(("clicks",), ("clicks_clean",))}
    assert (
        f"WARN flink:{on_114} on_1_14: Flink 1.14.6 has no CompiledPlan (it arrived in Flink 1.15): its lineage is "
        'the tables its SQL names, read from the text ("method": "static", no column lineage)'
    ) in result.stderr, result.stderr
    assert f"flink:{on_114} on_1_14: logged run, Flink 1.14.6 (read from the SQL text): compiling" in result.stderr
    assert not (watch.planner.cache / "1.14.6").exists()


def test_start_and_fail_between_two_polls_still_sends_start_then_fail(streampark, watch, gravitino):
    sp = streampark("dev")
    c = sp.console
    watch.recorded()
    app = c.create_app("orders_clean", ONE_SINK)
    refused = c.create_app("never_ran", ONE_SINK)
    watch.once(sp.url)
    c.start(app)
    c.set_state(app, RUNNING)
    c.set_state(app, FAILED)
    c.starting(refused)
    c.submit_failed(refused)  # START row with success 0: no job ran, nothing to report
    watch.once(sp.url)
    assert jobs(gravitino) == {"streampark.orders_clean": ["START", "FAIL"]}
    assert datasets(gravitino, "streampark.orders_clean") == {(("orders", "refunds"), ("out-a",))}
    exactly_once(gravitino)


def test_restart_is_a_new_run_and_the_unfinished_one_is_aborted(streampark, watch, gravitino):
    sp = streampark("dev")
    c = sp.console
    watch.recorded()
    app = c.create_app("orders_clean", ONE_SINK)
    watch.once(sp.url)
    c.start(app)
    watch.once(sp.url)
    c.set_state(app, RUNNING)
    first = watch.once(sp.url)
    assert f"flink:{app} orders_clean: STARTING -> RUNNING: RUNNING event" in first.stderr
    c.start(app)  # restarted from the console without an end state reaching the watcher
    c.set_state(app, RUNNING)
    result = watch.once(sp.url)
    assert "previous run never ended, closed: ABORT event" in result.stderr
    # RUNNING before and after: the new run's RUNNING event is said without a made-up transition
    assert f"flink:{app} orders_clean: RUNNING: RUNNING event" in result.stderr
    assert not re.search(r"\b([A-Z_]+) -> \1\b", "\n".join(watch.outputs)), watch.outputs
    runs = timeline(gravitino, "streampark.orders_clean")
    assert [t for _, t in runs] == ["START", "RUNNING", "ABORT", "START", "RUNNING"]
    assert runs[0][0] == runs[1][0] == runs[2][0] != runs[3][0] == runs[4][0]
    c.cancel(app)
    watch.once(sp.url)
    assert (
        types(gravitino, "streampark.orders_clean")[-1] == "ABORT"
        and timeline(gravitino, "streampark.orders_clean")[-1][0] == runs[3][0]
    )
    exactly_once(gravitino)


def test_lineage_enable_is_honoured_and_streampark_own_reporting_is_not_doubled(streampark, watch, gravitino):
    sp = streampark("dev", lineage_enable=True)
    c = sp.console
    watch.recorded()
    flagged = c.create_app("flagged", ONE_SINK, lineage_enable=True)
    plain = c.create_app("plain", ONE_SINK, lineage_enable=False)
    on_k8s = c.create_app("on_k8s", ONE_SINK, lineage_enable=True, deploy_mode=6)
    watch.once(sp.url, "--apps", "all")
    for app in (flagged, plain):
        c.start(app)
        c.set_state(app, RUNNING)
    result = watch.once(sp.url, "--apps", "all", "--verbose")
    assert jobs(gravitino) == {"streampark.flagged": ["START", "RUNNING"]}
    assert f"flink:{plain} plain: not reported: lineage_enable is off in StreamPark" in result.stderr

    c.setting("lineage.gravitino.address", "http://gravitino:8090")  # StreamPark now reports by itself
    c.cancel(flagged)
    c.start(flagged)
    c.set_state(flagged, RUNNING)
    c.start(on_k8s)  # Kubernetes modes are not covered by StreamPark's own reporting
    c.set_state(on_k8s, RUNNING)
    result = watch.once(sp.url)
    assert "StreamPark reports lineage itself" in result.stderr
    assert jobs(gravitino) == {
        "streampark.flagged": ["START", "RUNNING", "ABORT"],
        "streampark.on_k8s": ["START", "RUNNING"],
    }
    exactly_once(gravitino)


def test_schema_of_2_1_x(streampark, watch, gravitino):
    sp = streampark("2.1.x")
    c = sp.console
    watch.recorded()
    app = c.create_app("legacy", ONE_SINK)
    result = watch.once(sp.url)
    assert "StreamPark 2.1.x schema (deploy column execution_mode, log t_flink_log)" in result.stderr
    c.start(app)
    c.set_state(app, RUNNING)
    watch.once(sp.url)
    c.set_state(app, CANCELED)
    watch.once(sp.url)
    assert jobs(gravitino) == {"streampark.legacy": ["START", "RUNNING", "ABORT"]}
    exactly_once(gravitino)


def test_lost_shorter_than_the_grace_period_sends_nothing(streampark, watch, gravitino):
    sp = streampark("dev")
    c = sp.console
    watch.recorded()
    app = c.create_app("flaky", ONE_SINK)
    watch.once(sp.url)
    c.start(app)
    c.set_state(app, RUNNING)
    watch.once(sp.url)
    c.set_state(app, LOST)  # console restart / network blip
    watch.once(sp.url, "--lost-grace", "60")
    c.set_state(app, RUNNING)  # it was alive all along
    watch.once(sp.url, "--lost-grace", "60")
    assert types(gravitino, "streampark.flaky") == ["START", "RUNNING"]

    c.set_state(app, LOST)  # this time it stays LOST past the grace period
    watch.once(sp.url, "--lost-grace", "0.5")
    assert types(gravitino, "streampark.flaky") == ["START", "RUNNING"]
    time.sleep(0.6)
    result = watch.once(sp.url, "--lost-grace", "0.5")
    assert f"flink:{app} flaky: LOST: FAIL event" in result.stderr  # LOST since the last poll
    watch.once(sp.url, "--lost-grace", "0.5")
    assert types(gravitino, "streampark.flaky") == ["START", "RUNNING", "FAIL"]
    exactly_once(gravitino)


def test_database_down_mid_watch_and_back(streampark, watch, gravitino):
    sp = streampark("dev")
    c = sp.console
    watch.recorded()
    app = c.create_app("steady", ONE_SINK)
    daemon = watch.daemon(sp.url, "--interval", "0.2")
    try:
        wait_for(lambda: "schema" in watch.log.read_text(), what="the first poll")
        c.start(app)
        c.set_state(app, RUNNING)
        wait_for(lambda: types(gravitino, "streampark.steady") == ["START", "RUNNING"], what="START, RUNNING")
        c.close()
        sp.server.stop()
        wait_for(lambda: "retrying with backoff" in watch.log.read_text(), what="the outage line")
        sp.server.start()
        c.conn = sp.server.admin(sp.database)
        c.set_state(app, FINISHED)
        wait_for(
            lambda: types(gravitino, "streampark.steady")[-1:] == ["COMPLETE"],
            timeout=40,
            what="COMPLETE after the outage",
        )
        wait_for(lambda: "readable again" in watch.log.read_text(), what="the recovery line")
    finally:
        code = watch.stop(daemon)
    assert code == 0
    log = watch.log.read_text()
    assert log.count("retrying with backoff") == 1, log
    for line in (f"flink:{app} steady: logged run", "RUNNING: RUNNING event",
                 f"flink:{app} steady: RUNNING -> FINISHED: COMPLETE event"):  # fmt: skip
        assert log.count(line) == 1, log  # one line per reported transition
    assert types(gravitino, "streampark.steady") == ["START", "RUNNING", "COMPLETE"]
    exactly_once(gravitino)


def test_a_backend_that_hangs_never_lengthens_a_poll(streampark, watch, gravitino, monkeypatch):
    """`watch` delivers beside its polls: with every request to the backend hanging longer than a
    delivery pass, the watcher still polls on its interval (each poll short) and records the state
    change it sees; the event goes out once the backend answers again. (Polls delivered for up to
    3 s each: a hanging backend stretched every poll, and every app's next report, by that much.)"""
    import threading

    from planlineage.settings import Settings
    from planlineage.store import open_store
    from planlineage.streampark import address as url
    from planlineage.streampark.watcher import Watcher
    from planlineage.watch.loop import run_forever

    sp = streampark("2.1.x")
    c = sp.console
    watch.recorded()
    for key, value in watch.env.items():
        monkeypatch.setenv(key, value)
    app = c.create_app("steady", ONE_SINK)
    c.start(app)
    c.set_state(app, RUNNING)
    watch.once(sp.url)
    assert types(gravitino, "streampark.steady") == ["START", "RUNNING"]

    store = open_store()
    watcher = Watcher(url.parse(sp.url, password=WATCH_PASSWORD), store, Settings(store), say=lambda _: None)
    took: list[float] = []
    real_poll = Watcher.poll

    def timed(self):
        started = time.monotonic()
        try:
            return real_poll(self)
        finally:
            took.append(time.monotonic() - started)

    monkeypatch.setattr(Watcher, "poll", timed)
    gravitino.delay = 4.0  # longer than a delivery pass (3 s): every request hangs
    stop = threading.Event()
    threading.Timer(0.5, lambda: c.set_state(app, CANCELED)).start()
    threading.Timer(3.5, stop.set).start()
    run_forever([watcher], 0.2, stop=stop)  # in this (the main) thread: it sets signal handlers

    assert len(took) >= 8, took  # on its 0.2 s interval for 3.5 s, not one poll per delivery pass
    assert max(took) < 1.5, took
    assert any(r["last_event"] == "ABORT" for r in store.rows("SELECT last_event FROM runs"))  # recorded
    gravitino.delay = 0.0
    watch.once(sp.url)
    assert types(gravitino, "streampark.steady")[:2] == ["START", "RUNNING"] and "ABORT" in types(
        gravitino, "streampark.steady"
    )


def test_the_database_password_appears_in_no_output(streampark, watch, gravitino, server):
    sp = streampark("dev")
    c = sp.console
    watch.recorded()
    app = c.create_app("secretive", ONE_SINK)
    with_password = server.url(sp.database, with_password=True)
    watch.once(with_password, "--verbose")
    c.start(app)
    c.set_state(app, RUNNING)
    watch.once(with_password, "--verbose")
    watch("--check", "--streampark-db", with_password)
    wrong = watch.once(sp.url, PLANLINEAGE_STREAMPARK_PASSWORD="FAKE-wrong-password")  # fail-open: exit 0
    assert "cannot connect" in wrong.stderr and "FAKE-wrong-password" not in wrong.stderr
    assert types(gravitino, "streampark.secretive") == ["START", "RUNNING"]
    assert WATCH_PASSWORD not in watch.everything_written()
    assert all(WATCH_PASSWORD.encode() not in r.body for r in gravitino.requests)


def test_a_sql_that_does_not_compile_drops_its_run_with_a_warning(streampark, watch, gravitino):
    sp = streampark("dev")
    c = sp.console
    watch.recorded()
    app = c.create_app("broken", BROKEN)
    watch.once(sp.url)
    c.start(app)
    c.set_state(app, RUNNING)
    result = watch.once(sp.url)
    assert f"flink:{app} broken: run dropped: its SQL did not compile" in result.stderr
    c.set_state(app, FINISHED)
    watch.once(sp.url)
    assert gravitino.events == []  # never an event without datasets


def test_a_compile_that_cannot_be_queued_drops_its_run_with_a_warning(streampark, watch, gravitino):
    sp = streampark("dev")
    c = sp.console
    watch.recorded()
    app = c.create_app("orders", ONE_SINK)
    watch.once(sp.url)
    job_folder = watch.home / "jobs"
    if job_folder.is_dir():
        job_folder.rmdir()
    job_folder.write_text("a file where the job folder should be")  # the job file cannot be written
    c.start(app)
    c.set_state(app, RUNNING)
    result = watch.once(sp.url)
    assert result.returncode == 0, result.stderr
    assert f"WARN flink:{app} orders: run dropped: its compile could not be queued" in result.stderr
    from planlineage.store.sqlite import Store

    assert Store(watch.home / "state.db").rows("SELECT run_id FROM runs") == []  # never left compiling
    assert gravitino.events == []
    job_folder.unlink()  # fixed: the app's next start is reported
    c.start(app)
    c.set_state(app, RUNNING)
    again = watch.once(sp.url)
    assert types(gravitino, "streampark.orders") == ["START", "RUNNING"], again.stderr


def test_a_watcher_killed_mid_poll_does_not_start_the_same_run_again(streampark, watch, gravitino, monkeypatch):
    from planlineage.watch import ledger

    sp = streampark("dev")
    c = sp.console
    watch.recorded()
    app = c.create_app("orders_clean", ONE_SINK)
    watch.once(sp.url)
    c.start(app)
    c.set_state(app, RUNNING)

    def killed(*args, **kwargs):
        raise SystemExit("killed before the poll saved its cursor")

    monkeypatch.setattr(ledger, "save", killed)
    try:
        watch.once(sp.url)
    except SystemExit:
        pass
    monkeypatch.undo()
    wait_for(lambda: types(gravitino, "streampark.orders_clean") == ["START", "RUNNING"], what="the run's own delivery")
    watch.once(sp.url)  # the same START row again: the run it started is not started twice
    watch.once(sp.url)
    assert types(gravitino, "streampark.orders_clean") == ["START", "RUNNING"]
    exactly_once(gravitino)


def test_apps_option_without_a_lineage_enable_column(streampark, watch, gravitino):
    sp = streampark("2.1.x")  # no lineage_enable column: --apps decides
    c = sp.console
    watch.recorded()
    listed = c.create_app("listed", ONE_SINK)
    other = c.create_app("other", ONE_SINK)
    watch.once(sp.url, "--apps", f"flink:{listed}")
    for app in (listed, other):
        c.start(app)
        c.set_state(app, RUNNING)
    flagged = watch.once(sp.url, "--apps", "flagged", "--verbose")  # nothing is flagged without the column
    assert "--apps flagged, and this StreamPark has no lineage_enable column" in flagged.stderr
    assert gravitino.events == []
    for app in (listed, other):
        c.start(app)
        c.set_state(app, RUNNING)
    watch.once(sp.url, "--apps", str(listed))  # a bare id is a Flink app
    assert jobs(gravitino) == {"streampark.listed": ["START", "RUNNING"]}
    exactly_once(gravitino)


def test_a_bomb_row_and_200k_placeholders_are_skipped_with_a_warning_and_the_other_apps_reported(
    streampark, watch, gravitino
):
    import base64
    import tracemalloc
    import zlib

    sp = streampark("dev")
    c = sp.console
    watch.recorded()
    deflater = zlib.compressobj(9)
    parts = [deflater.compress(b"-- " + b"\0" * (1 << 20)) for _ in range(40)]
    bomb = base64.b64encode(b"".join(parts) + deflater.flush()).decode("ascii")  # ~55 KB: fits a MySQL text
    assert len(bomb) < 65_000
    bombed = c.create_app("bombed", ONE_SINK)
    c.execute(f"UPDATE t_flink_sql SET {c.q('sql')} = %s WHERE app_id = %s", (bomb, bombed))
    c.variable(100000, "topic_in", "t" * 64)  # 200k of it: 12.8 M characters
    many = c.create_app("many_vars", "SELECT " + ", ".join(["'${topic_in}'"] * 200_000))
    fine = c.create_app("orders_clean", ONE_SINK)
    watch.once(sp.url)  # baseline
    for app in (bombed, many, fine):
        c.start(app)
        c.set_state(app, RUNNING)
    tracemalloc.start()
    begin = time.monotonic()
    try:
        result = watch.once(sp.url)
        seconds, peak = time.monotonic() - begin, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (
        f"WARN flink:{bombed} bombed: not reported: its stored text inflates past 8 MiB, the watcher's limit"
        in result.stderr
    )
    assert (
        f"WARN flink:{many} many_vars: not reported: its script with ${{variables}} substituted is longer than "
        "8 MiB characters, the watcher's limit" in result.stderr
    )
    assert jobs(gravitino) == {"streampark.orders_clean": ["START", "RUNNING"]}
    assert seconds < 60 and peak < 48 << 20, (seconds, peak)  # 40 MiB inflated, twice, before the limit
    exactly_once(gravitino)


def test_adopting_many_apps_reads_their_rows_once_per_kind_not_once_per_app(streampark, watch, gravitino, monkeypatch):
    """A first start adopting hundreds of running apps read each app's SQL, its team's variables,
    its Flink env and its newest START row one query each (~80 ms per app at load 10): the poll
    reads them for all the apps it starts at once, one query per kind whatever their number."""
    from planlineage.watch.connection import Source

    sp = streampark("2.1.x")
    c = sp.console
    c.variable(100000, "sink", "team_a_sink")
    c.variable(100001, "sink", "team_b_sink")
    other = c.env("1.19.1", default=False)
    planner = watch.recorded()
    for value in ("team_a_sink", "team_b_sink"):
        planner.record(
            f"{ONE_SINK.rstrip().rstrip(';')} -- owner {value}\n;\n", "union_all"
        )  # in the INSERT: its SQL facet
    apps = []
    for i in range(12):
        sql = f"{ONE_SINK.rstrip().rstrip(';')} -- owner ${{sink}}\n;\n" if i < 2 else ONE_SINK
        app = c.create_app(f"app_{i}", sql, team=100000 + i % 2, env=other if i % 4 == 0 else None)
        c.start(app)
        c.set_state(app, RUNNING)
        apps.append(app)
    asked: list[str] = []
    real = Source.rows
    monkeypatch.setattr(Source, "rows", lambda self, sql, params=(): asked.append(sql) or real(self, sql, params))
    result = watch.once(sp.url)
    for app in apps:
        assert f"flink:{app} app_{apps.index(app)}: adopted run" in result.stderr, result.stderr
    per_kind = {
        kind: sum(1 for sql in asked if marker in sql)
        for kind, marker in (
            ("sql", "t_flink_sql"),
            ("variables", "t_variable"),
            ("env", "t_flink_env"),
            ("start rows", "option_name = 1"),
        )
    }
    assert per_kind == {"sql": 1, "variables": 1, "env": 1, "start rows": 1}, (per_kind, asked)
    started = [e for e in gravitino.events if e["eventType"] == "START"]
    assert len(started) == 12
    queries = {e["job"]["name"]: e["job"]["facets"]["sql"]["query"] for e in started}
    assert (
        "-- owner team_a_sink" in queries["streampark.app_0"] and "-- owner team_b_sink" in queries["streampark.app_1"]
    )  # its team's
    exactly_once(gravitino)


def test_adopting_an_app_costs_the_poll_two_store_writes_not_four(streampark, watch, gravitino, monkeypatch):
    """Each adopted app wrote its run, its history mark, its snapshot row and its compile record in
    a transaction each (a new SQLite connection each): the run and its mark are one transaction, the
    snapshot row and the compile record another (the job file is written between the two, so a
    crash after it never starts the run twice), and the RUNNING report a third."""
    from planlineage.store.sqlite import Store
    from planlineage.streampark.watcher import Watcher

    sp = streampark("2.1.x")
    c = sp.console
    watch.recorded()
    apps = []
    for i in range(10):
        apps.append(c.create_app(f"app_{i}", ONE_SINK))
        c.start(apps[-1])
        c.set_state(apps[-1], RUNNING)
    writes: list[str] = []
    inside = []
    real_write, real_poll = Store.write, Watcher.poll

    def write(self, fn, *args, **kwargs):
        if inside:
            writes.append(fn.__qualname__)
        return real_write(self, fn, *args, **kwargs)

    def poll(self):
        inside.append(True)
        try:
            return real_poll(self)
        finally:
            inside.clear()

    monkeypatch.setattr(Store, "write", write)
    monkeypatch.setattr(Watcher, "poll", poll)
    result = watch.once(sp.url)
    assert result.stderr.count("adopted run") == 10, result.stderr
    assert len(writes) <= 3 * 10 + 2, writes  # run + mark, snapshot row + compile record, RUNNING; the poll's save
    assert [e["eventType"] for e in gravitino.events].count("START") == 10
    exactly_once(gravitino)


def test_a_poll_over_apps_not_reported_reads_no_run_per_app(streampark, watch, gravitino, monkeypatch):
    """Thousands of apps the watcher does not report (not flagged, not listed) cost one query of
    the apps per poll, never a store read per app: the run of such an app is only looked up when
    the app moved (a start, a new job id, a new state)."""
    from planlineage.lifecycle import runs

    sp = streampark("2.1.x")
    c = sp.console
    watch.recorded()
    listed = c.create_app("listed", ONE_SINK)
    others = [c.create_app(f"other_{i}", ONE_SINK) for i in range(40)]
    for app in others[:20]:
        c.start(app)
        c.set_state(app, RUNNING)
    watch.once(sp.url, "--apps", f"flink:{listed}")  # baseline: every app in the snapshot
    asked: list[str] = []
    real = runs.current_run
    monkeypatch.setattr(runs, "current_run", lambda store, app_id: asked.append(app_id) or real(store, app_id))
    watch.once(sp.url, "--apps", f"flink:{listed}")  # nothing moved
    assert asked == []
    c.set_state(others[0], CANCELED)  # one app not reported moved: its run (none) is looked up alone
    watch.once(sp.url, "--apps", f"flink:{listed}")
    assert asked == [f"flink:{others[0]}"]
    assert gravitino.events == []
