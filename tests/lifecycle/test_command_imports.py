"""`--help` and `submit` import only what they use (checked in the process, not by timing)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from command_imports import HEAVY, imported_by
from test_lifecycle_cli import SQL, configure


def test_help_imports_the_parser_and_nothing_else(cli):
    found = imported_by(["--help"], env=cli.env)
    assert found["code"] == 0
    # The parser modules of every command (and the defaults they show), nothing they run.
    assert "planlineage.cli.main" in found["planlineage"]
    running = ("pipeline", "planner", "registry", "document", "backfill")  # the lifecycle parser loads its store
    assert not [m for m in found["planlineage"] if m.split(".")[1:2] and m.split(".")[1] in running]
    assert not set(found["top"]) & {*HEAVY, "platformdirs", "filelock"}  # sqlite3: the lifecycle parser


def test_submit_records_the_run_without_the_event_models(cli, server, tmp_path):
    configure(cli, server)
    script = tmp_path / "job.sql"
    script.write_text(cli.planner.record(SQL, "regular_join"), encoding="utf-8")
    found = imported_by(
        ["submit", "--app-id", "app-imports", "--job-name", "etl", "--flink-version", "1.20"]
        + ["--sql-file", str(script), "--lineage-enable"],
        env=cli.env,
        cwd=tmp_path,
    )
    assert found["code"] == 0
    # The detached runner compiles and builds events; submit itself only records the pending run.
    assert not set(found["top"]) & set(HEAVY), set(found["top"]) & set(HEAVY)
    assert "planlineage.pipeline" not in found["planlineage"]
    assert "planlineage.lifecycle.runs" in found["planlineage"]  # the run was recorded in-process
    cli.wait_workers(60)
    assert len(server.events) == 1 and server.events[0]["eventType"] == "START"
