"""Bounds a platform relies on: time of `state`/`flush` (start-up and recovery included), no
event without datasets, a replaced run closed with ABORT, undecodable scripts, CRLF confs."""

from __future__ import annotations

import json
import time

import pytest
from gravitino_server import GravitinoTestServer
from recorded_planner import case_sql
from test_lifecycle_cli import configure, state, submit

SQL = case_sql("union_all")
#: Slack over a bound for what happens outside the process (fork/exec by the test, a busy machine).
SLACK = 1.0


@pytest.fixture
def sql_file(cli, tmp_path):
    path = tmp_path / "job.sql"
    path.write_text(cli.planner.record(SQL, "union_all"), encoding="utf-8")
    return path


def test_state_and_flush_stay_within_their_bound_against_a_hanging_server(cli, sql_file):
    with GravitinoTestServer(delay=30) as hanging:
        configure(cli, hanging)
        submit(cli, sql_file)
        cli.wait_workers(60)
        for args, bound in (
            (("state", "--app-id", "app-1", "--state", "RUNNING"), 3.0),
            (("flush", "--timeout", "2"), 2.0),
        ):
            began = time.monotonic()
            result = cli(*args)
            took = time.monotonic() - began
            assert result.returncode == 0
            assert took < bound + SLACK, (args, took)


def test_select_only_resubmission_sends_nothing_warns_and_aborts_the_open_run(cli, server, tmp_path, sql_file):
    configure(cli, server)
    submit(cli, sql_file)
    cli.wait_workers()
    state(cli, "app-1", "RUNNING")
    first_run = server.events[0]["run"]["runId"]
    select_only = tmp_path / "select.sql"
    select_only.write_text("CREATE TABLE a (id INT) WITH ('connector' = 'kafka');\nSELECT * FROM a;\n")
    result = submit(cli, select_only)
    assert "no INSERT" in result.stderr.decode()
    cli.wait_workers()
    state(cli, "app-1", "FINISHED")
    cli("flush")
    seen = [(e["run"]["runId"] == first_run, e["eventType"]) for e in server.events]
    assert seen == [(True, "START"), (True, "RUNNING"), (True, "ABORT")]  # the new run sent nothing
    assert all(e.get("inputs") or e.get("outputs") for e in server.events)


def test_resubmitting_an_app_id_aborts_the_previous_open_run_first(cli, server, sql_file):
    configure(cli, server)
    submit(cli, sql_file)
    cli.wait_workers()
    state(cli, "app-1", "RUNNING")
    submit(cli, sql_file)
    cli.wait_workers()
    state(cli, "app-1", "FINISHED")
    runs = list(dict.fromkeys(e["run"]["runId"] for e in server.events))
    assert len(runs) == 2
    assert [(runs.index(e["run"]["runId"]), e["eventType"]) for e in server.events] == [
        (0, "START"),
        (0, "RUNNING"),
        (0, "ABORT"),
        (1, "START"),
        (1, "COMPLETE"),
    ]


@pytest.mark.parametrize(
    ("data", "line"),
    [
        (b"SELECT 1;\n-- caf\xe9\n", 2),
        (b"\x7fELF\x02\x01\x01\x00\x00\x00", 1),
        (b"INSERT INTO t\nSELECT '\xff\xfe';", 2),
    ],
)
def test_extract_of_undecodable_input_is_exit_2_with_the_line(cli, tmp_path, data, line):
    path = tmp_path / "bad.sql"
    path.write_bytes(data)
    result = cli("extract", str(path))
    err = result.stderr.decode()
    assert result.returncode == 2 and "Traceback" not in err
    assert f"line {line}:" in err and len(err.strip().splitlines()) == 1
    piped = cli("extract", "-", input=data)
    assert piped.returncode == 2 and f"line {line}:" in piped.stderr.decode()


def test_spark_conf_crlf_input_keeps_crlf(cli, server):
    configure(cli, server)
    original = b"spark.app.name=x\r\nspark.executor.memory=2g\r\n"
    result = cli("spark-conf", "--lineage-enable", input=original)
    assert result.returncode == 0 and result.stdout.startswith(original)
    body = result.stdout.decode()
    assert "spark.extraListeners" in body and body.count("\n") == body.count("\r\n")
    as_json = cli("spark-conf", "--lineage-enable", input=b'{\r\n  "spark.app.name": "x"\r\n}\r\n').stdout.decode()
    assert json.loads(as_json)["spark.extraListeners"] and as_json.count("\n") == as_json.count("\r\n")


def test_submit_of_a_script_over_the_size_cap_is_said_at_once_and_leaves_a_gap(cli, server, tmp_path):
    """A script over lineage.script-max-bytes (default 4 MiB) is neither read, split nor compiled:
    ``submit`` exits 0 at once saying so, the run is not reported and the compile service's log says why.
    (Before: 50,000 statements were split for minutes on the platform's path, then compiled.)"""
    configure(cli, server)
    huge = tmp_path / "huge.sql"
    statement = "INSERT INTO snk SELECT a, 'some text; a literal' FROM src WHERE a > 0;\n"
    huge.write_text("CREATE TABLE src (a INT) WITH ('connector' = 'datagen');\n" + statement * 70_000)
    assert huge.stat().st_size > 4 * 1024 * 1024
    began = time.monotonic()
    result = submit(cli, huge)
    took = time.monotonic() - began
    err = result.stderr.decode()
    assert "over the limit of 4,194,304 bytes (lineage.script-max-bytes" in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert took < 3.0 + SLACK, took
    cli.wait_workers(60)
    state(cli, "app-1", "RUNNING")
    assert server.events == []
    assert "over the limit" in (cli.home / "compile-service.log").read_text()
    # a smaller cap applies to the same script's smaller cousin; a raised one lets it through
    small = tmp_path / "small.sql"
    small.write_text(statement * 20)
    result = submit(cli, small, "app-2", PLANLINEAGE_LINEAGE_SCRIPT_MAX_BYTES="1000")
    assert "is 1,420 bytes, over the limit of 1,000 bytes" in result.stderr.decode()


def test_extract_of_a_script_over_the_size_cap_is_exit_2_unread(cli, tmp_path):
    """A 50 MB literal ran the planner out of memory, reported as the machine's fault (exit 3)."""
    path = tmp_path / "huge.sql"
    path.write_text("INSERT INTO snk SELECT '" + "x" * (5 * 1024 * 1024) + "' FROM src;\n")
    began = time.monotonic()
    result = cli("extract", str(path))
    took = time.monotonic() - began
    err = result.stderr.decode()
    assert result.returncode == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert f"{path} is not analysed: the script is 5,242,916 bytes, over the limit of 4,194,304 bytes" in err
    assert took < 5.0 + SLACK, took
    piped = cli("extract", "-", input=path.read_bytes())
    assert piped.returncode == 2 and "- is not analysed: the script is over the limit" in piped.stderr.decode()


def test_extract_of_parentheses_nested_too_deep_is_exit_2_naming_the_line(cli, tmp_path):
    """10,000 levels: Flink's parser failed on itself (a null message) after a JVM start."""
    path = tmp_path / "nested.sql"
    path.write_text(
        "CREATE TABLE src (a INT) WITH ('connector' = 'datagen');\n"
        "-- generated (((\n"
        "INSERT INTO snk SELECT " + "(" * 10_000 + "a" + ")" * 10_000 + ", ')))(((' FROM src;\n"
    )
    result = cli("extract", str(path))
    err = result.stderr.decode()
    assert result.returncode == 2 and "Traceback" not in err
    assert "line 3: parentheses nest 10,000 deep, deeper than the planner's parser reads (3,000)" in err
    shallow = tmp_path / "shallow.sql"  # a deep but readable statement is left to the planner
    shallow.write_text("INSERT INTO snk SELECT " + "(" * 3_000 + "a" + ")" * 3_000 + " FROM src;\n")
    assert "parentheses nest" not in cli("extract", str(shallow)).stderr.decode()
