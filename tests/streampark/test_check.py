"""`planlineage watch --check` and the log-less fallback, on real servers (Spark apps: test_spark_apps.py)."""

from __future__ import annotations

import pytest
from console import FINISHED, RUNNING
from lineages import ONE_SINK, exactly_once, jobs
from servers import ADMIN_PASSWORD, WATCH_USER


def test_check_prints_generation_apps_and_opt_in(streampark, watch):
    sp = streampark("dev", lineage_enable=True)
    c = sp.console
    flagged = c.create_app("flagged", "INSERT INTO o SELECT 1", lineage_enable=True)
    plain = c.create_app("plain", "INSERT INTO o SELECT 1", lineage_enable=False)
    c.create_app("a_jar", "", job_type=1, lineage_enable=True)
    result = watch("--check", "--streampark-db", sp.url)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert (
        "schema: StreamPark 2.2+ (dev/3.0) schema (deploy column deploy_mode, log t_app_log), with lineage_enable"
        in out
    )
    assert "SQL apps: 2 (2 Flink SQL, 0 Spark SQL) of 3 apps" in out
    assert "opt-in: StreamPark's lineage_enable column decides" in out
    assert f"reported: 1: flink:{flagged} flagged" in out
    assert f"not reported: flink:{plain} plain: lineage_enable is off in StreamPark" in out
    assert "grants: every table the watcher reads is readable" in out
    assert "PROBLEM" not in out
    assert not (watch.home / "state.db").exists()  # --check writes nothing


def test_check_lists_the_missing_grants_and_exits_2(streampark, watch, server):
    sp = streampark("2.1.x", grant=False)
    server.grant_select(sp.database, ["t_flink_app", "t_flink_sql"])
    result = watch("--check", "--streampark-db", sp.url)
    assert result.returncode == 2
    out = result.stdout
    assert "schema: StreamPark 2.1.x schema" in out
    assert "PROBLEM: the account cannot read t_flink_effective, t_flink_env, t_flink_log, t_variable" in out
    if server.dialect == "postgresql":
        assert (
            f"GRANT SELECT ON public.t_flink_effective, public.t_flink_env, public.t_flink_log, public.t_variable, public.t_setting TO {WATCH_USER};"
            in out
        )
    else:
        assert f"GRANT SELECT ON `{sp.database}`.`t_flink_log` TO '{WATCH_USER}'@'%';" in out


def test_check_without_a_lineage_address_or_a_reachable_database(streampark, watch, server):
    sp = streampark("dev")
    result = watch("--check", "--streampark-db", sp.url, PLANLINEAGE_LINEAGE_ADDRESS="")
    assert result.returncode == 2
    assert (
        "PROBLEM: planlineage's lineage address is not set: planlineage settings set lineage.address URL"
        in result.stdout
    )
    unreachable = sp.url.replace(f":{server.port}/", ":1/")
    result = watch("--check", "--streampark-db", unreachable)
    assert result.returncode == 2 and "PROBLEM: cannot connect to the StreamPark database" in result.stdout


def test_watch_refuses_to_run_unconfigured_and_writes_nothing(streampark, watch):
    sp = streampark("dev")
    result = watch("--once", "--streampark-db", sp.url, PLANLINEAGE_LINEAGE_ADDRESS="")
    assert result.returncode == 2 and "planlineage settings set lineage.address" in result.stderr
    assert not watch.home.exists()


def test_without_a_readable_operation_log_a_new_job_id_starts_the_run(streampark, watch, gravitino, server):
    sp = streampark("dev", grant=False)
    tables = ["t_flink_app", "t_flink_sql", "t_flink_effective", "t_flink_env", "t_variable", "t_setting"]
    server.grant_select(sp.database, tables)  # no t_app_log
    c = sp.console
    watch.recorded()
    app = c.create_app("no_log", ONE_SINK)
    first = watch.once(sp.url)
    assert "the operation log t_app_log is not readable" in first.stderr
    c.start(app)
    c.set_state(app, RUNNING)
    watch.once(sp.url)
    watch.once(sp.url)
    assert jobs(gravitino) == {"no_log": ["START", "RUNNING"]}
    server.grant_select(sp.database, ["t_app_log"])  # readable now: started at its newest row, no replay
    c.start(app)
    c.set_state(app, FINISHED)
    watch.once(sp.url)
    watch.once(sp.url)
    assert jobs(gravitino) == {"no_log": ["START", "RUNNING", "ABORT", "START", "COMPLETE"]}
    exactly_once(gravitino)


def test_the_watcher_session_is_read_only_even_for_an_account_that_may_write(streampark, server):
    from planlineage.streampark.connection import Source, SourceError
    from planlineage.streampark.url import parse

    sp = streampark("dev")
    if server.dialect == "postgresql":
        target = parse(f"postgresql://postgres@127.0.0.1:{server.port}/{sp.database}", password=ADMIN_PASSWORD)
    else:
        with server.admin() as conn, conn.cursor() as cursor:
            cursor.execute("CREATE USER IF NOT EXISTS 'writer'@'127.0.0.1' IDENTIFIED BY 'FAKE-writer-pw'")
            cursor.execute(f"GRANT ALL ON {sp.database}.* TO 'writer'@'127.0.0.1'")
        target = parse(f"mysql://writer@127.0.0.1:{server.port}/{sp.database}", password="FAKE-writer-pw")
    with Source(target) as source:
        assert source.rows("SELECT COUNT(*) AS n FROM t_flink_app") == [{"n": 0}]
        with pytest.raises(SourceError, match="(?i)read.only"):
            source.rows("INSERT INTO t_setting (setting_key, type) VALUES ('x', 1)")
    assert sp.console.execute("SELECT COUNT(*) FROM t_setting")[0][0] == 0
