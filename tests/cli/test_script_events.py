"""`extract --events FILE` / `--send`: a script's START events without `submit`, the very events the
lifecycle reports for the same job (its event builder, its redaction and cap of the SQL facet).

The real CLI in a fresh process per command; only the JVM is replaced by the recorded planner
(tests/lifecycle/recorded_planner.py): the walk, the naming, the events and the outbox are real.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lifecycle_helpers import Cli, wait_for
from recorded_planner import case_sql

SECRET = "hunter2-not-for-events"


@pytest.fixture
def cli(clean_env, tmp_path):
    runner = Cli(clean_env, tmp_path)
    yield runner
    runner.planner.release()


def _script(cli: Cli, name: str, case: str, pipeline_name: str | None = None) -> Path:
    """A script that writes a password option and compiles to the plan recorded for ``case``."""
    head = f"SET 'pipeline.name' = '{pipeline_name}';\n" if pipeline_name else ""
    secret_table = (
        "CREATE TEMPORARY TABLE audit_log (id BIGINT) WITH ("
        f"'connector' = 'jdbc', 'url' = 'jdbc:mysql://db:3306/a', 'table-name' = 'audit', 'password' = '{SECRET}');\n"
    )
    sql = cli.planner.record(head + secret_table + case_sql(case), case)
    path = cli.tmp / name
    path.write_text(sql, encoding="utf-8")
    return path


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _comparable(event: dict) -> dict:
    """An event without what differs between two runs of one job: its run ids and its time."""
    event = json.loads(json.dumps(event))
    event.pop("eventTime", None)
    run = event["run"]
    run.pop("runId", None)
    parent = run.get("facets", {}).get("parent")
    if parent:
        parent["run"].pop("runId", None)
        parent.get("root", {}).get("run", {}).pop("runId", None)
    return event


def test_extract_events_are_the_starts_submit_sends_for_the_job(cli):
    script = _script(cli, "orders.sql", "statement_set", pipeline_name="orders_job")
    out = cli.tmp / "events" / "orders.jsonl"

    done = cli("extract", str(script), "--events", str(out), "--format", "json")
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout)["sinks"], "the document is printed as without --events"
    written = _lines(out)
    assert {e["eventType"] for e in written} == {"START"}
    names = [e["job"]["name"] for e in written]
    assert names[0] == "orders_job" and len(names) == 4  # the parent, then one job per sink (3)
    assert all(name.startswith("orders_job.") for name in names[1:])
    assert SECRET not in out.read_text(encoding="utf-8")
    assert b"appended 4 event(s) of 1 job(s)" in done.stderr
    assert not cli.home.exists()  # nothing configured: the events file is the only thing written

    # The same job submitted through the lifecycle, its events written by the file transport.
    delivered = cli.tmp / "delivered.jsonl"
    for key, value in (("lineage.transport", "file"), ("lineage.file", str(delivered))):
        assert cli("settings", "set", key, value).returncode == 0
    submitted = cli(
        "submit", "--app-id", "7", "--job-name", "orders_job", "--sql-file", str(script), "--lineage-enable"
    )
    assert submitted.returncode == 0, submitted.stderr.decode()
    wait_for(lambda: delivered.exists() and len(delivered.read_text().splitlines()) == 4, what="submit's events")
    assert [_comparable(e) for e in _lines(delivered)] == [_comparable(e) for e in written]

    # Appended, not replaced: a second extract adds its job's events after the first's.
    assert cli("extract", str(script), "--events", str(out), "--job-name", "again").returncode == 0
    assert [e["job"]["name"] for e in _lines(out)][4] == "again"


def test_a_folder_is_one_job_per_script_named_by_its_stem(cli):
    folder = cli.tmp / "jobs"
    folder.mkdir()
    _script(cli, "jobs/enrich.sql", "regular_join")
    _script(cli, "jobs/daily.sql", "batch", pipeline_name="daily_report")
    out = cli.tmp / "all.jsonl"

    done = cli("extract", str(folder), "--events", str(out))
    assert done.returncode == 0, done.stderr.decode()
    assert sorted({e["job"]["name"].split(".")[0] for e in _lines(out)}) == ["daily_report", "enrich"]
    printed = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert [line["ok"] for line in printed] == [True, True]
    # the events carry column lineage as submit's do; the printed lines only with --columns
    assert any("columnLineage" in (o.get("facets") or {}) for e in _lines(out) for o in e.get("outputs", []))
    plain = [json.loads(line) for line in cli("extract", str(folder)).stdout.decode().splitlines()]
    assert sorted(printed, key=lambda line: line["script"]) == sorted(plain, key=lambda line: line["script"])

    refused = cli("extract", str(folder), "--events", str(out), "--job-name", "one")
    assert refused.returncode == 2 and b"--job-name names one job" in refused.stderr


def test_send_without_a_configured_backend_says_so_and_writes_nothing(cli):
    script = _script(cli, "orders.sql", "statement_set")
    done = cli("extract", str(script), "--send")
    assert done.returncode == 2
    assert b"no lineage backend is configured" in done.stderr and b"--events FILE" in done.stderr
    assert not cli.home.exists()  # nothing until configured: not even a store


def test_send_goes_through_the_outbox_to_the_configured_transport(cli, server):
    script = _script(cli, "orders.sql", "regular_join", pipeline_name="enrich")
    assert cli("settings", "set", "lineage.address", server.url).returncode == 0

    done = cli("extract", str(script), "--send")
    assert done.returncode == 0, done.stderr.decode()
    assert b"sent 1 event(s) of 1 job(s) through the gravitino transport" in done.stderr
    assert [(e["eventType"], e["job"]["name"]) for e in server.events] == [("START", "enrich")]
    assert SECRET not in json.dumps(server.events)


def test_send_to_a_backend_that_is_down_keeps_the_events_for_flush(cli, server):
    script = _script(cli, "orders.sql", "regular_join", pipeline_name="enrich")
    assert cli("settings", "set", "lineage.address", server.url).returncode == 0
    server.down()

    done = cli("extract", str(script), "--send")
    assert done.returncode == 3
    assert b"wait in the outbox" in done.stderr and b"planlineage flush" in done.stderr
    assert server.events == []

    server.up()
    assert cli("flush").returncode == 0
    assert [(e["eventType"], e["job"]["name"]) for e in server.events] == [("START", "enrich")]
