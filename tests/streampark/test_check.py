"""`planlineage watch --check` and the log-less fallback, on real servers (Spark apps: test_spark_apps.py)."""

from __future__ import annotations

import pytest
from console import FINISHED, RUNNING
from lineages import ONE_SINK, exactly_once, jobs
from servers import ADMIN_PASSWORD, WATCH_PASSWORD, WATCH_USER


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


def test_check_with_apps_and_no_grant_on_an_environment_table_lists_the_grant(streampark, watch, server):
    """With apps to report, the check reads their Flink environments: an account that cannot read
    t_flink_env ended the check in a traceback instead of naming the grant it lacks."""
    sp = streampark("dev", lineage_enable=True, grant=False)
    tables = ["t_flink_app", "t_flink_sql", "t_flink_effective", "t_variable", "t_setting", "t_app_log"]
    server.grant_select(sp.database, tables)  # no t_flink_env
    sp.console.create_app("flagged", "INSERT INTO o SELECT 1", lineage_enable=True)
    result = watch("--check", "--streampark-db", sp.url)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert "PROBLEM: the account cannot read t_flink_env" in result.stdout
    assert "t_flink_env" in next(line for line in result.stdout.splitlines() if "GRANT SELECT" in line)
    assert "Flink versions the reported apps compile with: unknown until t_flink_env is readable" in result.stdout


def test_check_without_a_lineage_address_or_a_reachable_database(streampark, watch, server):
    sp = streampark("dev")
    result = watch("--check", "--streampark-db", sp.url, PLANLINEAGE_LINEAGE_ADDRESS="")
    assert result.returncode == 2
    assert (
        "PROBLEM: lineage is not configured (no lineage.address): `planlineage settings set lineage.address URL`, "
        "or OpenLineage's own configuration (OPENLINEAGE_URL, openlineage.yml, OPENLINEAGE__TRANSPORT__*)"
        in result.stdout
    )
    disabled = watch("--check", "--streampark-db", sp.url, OPENLINEAGE_DISABLED="true")
    assert disabled.returncode == 2
    assert "PROBLEM: lineage is disabled by OPENLINEAGE_DISABLED=true (unset it to report)" in disabled.stdout
    from_openlineage = watch(
        "--check", "--streampark-db", sp.url, PLANLINEAGE_LINEAGE_ADDRESS="", OPENLINEAGE_URL="http://127.0.0.1:9/x"
    )
    assert "lineage: http (from OPENLINEAGE_URL)" in from_openlineage.stdout, from_openlineage.stdout
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
    assert jobs(gravitino) == {"streampark.no_log": ["START", "RUNNING"]}
    server.grant_select(sp.database, ["t_app_log"])  # readable now: started at its newest row, no replay
    c.start(app)
    c.set_state(app, FINISHED)
    watch.once(sp.url)
    watch.once(sp.url)
    assert jobs(gravitino) == {"streampark.no_log": ["START", "RUNNING", "ABORT", "START", "COMPLETE"]}
    exactly_once(gravitino)


def test_the_watcher_session_is_read_only_even_for_an_account_that_may_write(streampark, server):
    from planlineage.errors import SourceError
    from planlineage.streampark.address import parse
    from planlineage.watch.connection import Source

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


def _check_in_process(sp, tmp_path):
    """``check()`` itself (a Python start per dropped column would dominate the test's time)."""
    from planlineage.settings import Settings
    from planlineage.streampark.address import parse
    from planlineage.streampark.check import check
    from planlineage.streampark.watcher import Options

    environ = {"PLANLINEAGE_HOME": str(tmp_path / "home"), "PLANLINEAGE_LINEAGE_ADDRESS": "http://127.0.0.1:9/"}
    return check(parse(sp.url, password=WATCH_PASSWORD), Settings(environ=environ), Options())


@pytest.mark.parametrize("generation", ["2.1.x", "dev"])
def test_check_names_each_missing_column_and_the_generation_that_has_it(streampark, watch, tmp_path, generation):
    from planlineage.streampark.schema import READS

    sp = streampark(generation, spark=generation == "dev")
    c = sp.console
    deploy, log = ("execution_mode", "t_flink_log") if generation == "2.1.x" else ("deploy_mode", "t_app_log")
    expected = "2.1.x" if generation == "2.1.x" else "2.2+ (dev/3.0)"
    c.create_app("orders", "INSERT INTO o SELECT 1")
    checked = 0
    for pattern, columns in READS.items():
        table = pattern.replace("{log}", log)
        if generation == "2.1.x" and (table.startswith("t_spark") or table == "t_resource"):
            continue  # not in that generation
        for column in columns:
            column = column.replace("{deploy}", deploy)
            # Renamed away and back: the rows and the column's type stay for the next round.
            c.execute(f"ALTER TABLE {table} RENAME COLUMN {c.q(column)} TO {c.q(column + '_gone')}")
            try:
                report = _check_in_process(sp, tmp_path)
            finally:
                c.execute(f"ALTER TABLE {table} RENAME COLUMN {c.q(column + '_gone')} TO {c.q(column)}")
            said = "\n".join(report.problems)
            if column == deploy and table == "t_flink_app":
                assert "t_flink_app has neither deploy_mode (StreamPark 2.2+) nor execution_mode (2.1.x)" in said
            else:
                assert (
                    f"the StreamPark {expected} schema (detected by t_flink_app.{deploy}) has {table}.{column}, "
                    in (said)
                ), (table, column, report.lines, report.problems)
            assert not report.ok
            checked += 1
    assert checked == (27 if generation == "2.1.x" else 49)

    # The CLI: exit 2 with the column named, no traceback; `watch --once` says it in one line.
    c.execute("ALTER TABLE t_flink_app DROP COLUMN job_id")
    result = watch("--check", "--streampark-db", sp.url)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert f"PROBLEM: the StreamPark {expected} schema (detected by t_flink_app.{deploy}) has t_flink_app.job_id" in (
        result.stdout
    )
    polled = watch("--once", "--streampark-db", sp.url)
    assert polled.returncode == 0 and "Traceback" not in polled.stderr
    assert "has t_flink_app.job_id, which the watcher reads" in polled.stderr


def test_a_table_outside_the_core_with_a_missing_column_is_set_aside_and_the_rest_reported(streampark, watch):
    sp = streampark("dev", spark=True)
    c = sp.console
    app = c.create_app("orders", ONE_SINK)
    c.execute(f"ALTER TABLE t_spark_app DROP COLUMN {c.q('app_properties')}")
    result = watch("--check", "--streampark-db", sp.url)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "has t_spark_app.app_properties, which the watcher reads" in result.stdout
    assert "until then t_spark_app read as absent" in result.stdout
    assert f"reported: 1: flink:{app} orders" in result.stdout


def test_check_lists_the_missing_spark_grants_with_the_statements(streampark, watch, server):
    sp = streampark("dev", grant=False, spark=True)
    flink = ["t_flink_app", "t_flink_sql", "t_flink_effective", "t_flink_env", "t_app_log", "t_variable"]
    server.grant_select(sp.database, [*flink, "t_setting", "t_resource"])
    sp.console.create_spark_app("nightly")
    result = watch("--check", "--streampark-db", sp.url)
    out = result.stdout
    assert result.returncode == 0, out
    assert "Spark grants missing: t_spark_app, t_spark_sql, t_spark_effective, t_spark_env" in out
    if server.dialect == "postgresql":
        assert (
            f"GRANT SELECT ON public.t_spark_app, public.t_spark_sql, public.t_spark_effective, public.t_spark_env "
            f"TO {WATCH_USER};" in out
        )
    else:
        for table in ("t_spark_app", "t_spark_sql", "t_spark_effective", "t_spark_env"):
            assert f"GRANT SELECT ON `{sp.database}`.`{table}` TO '{WATCH_USER}'@'%';" in out

    server.grant_select(sp.database, ["t_spark_app"])  # only some of them: the others are listed
    out = watch("--check", "--streampark-db", sp.url).stdout
    assert "Spark grants missing: t_spark_sql, t_spark_effective, t_spark_env" in out
    assert "SQL apps: 0 (0 Flink SQL, 0 Spark SQL)" in out  # never read from half the tables
    polled = watch.once(sp.url)  # the watcher says it too, and goes on with the Flink apps
    assert "WARN Spark SQL apps are not read: the account cannot read t_spark_sql, t_spark_effective, t_spark_env" in (
        polled.stderr
    )

    server.grant_select(sp.database, ["t_spark_sql", "t_spark_effective", "t_spark_env"])
    out = watch("--check", "--streampark-db", sp.url).stdout
    assert "Spark grants missing" not in out and "1 Spark SQL" in out
