"""One huge script does not starve small jobs (issue #38): with one planner for the usual jobs,
a 3 MB script compiling for long (held by the recorded planner's gate) leaves the small jobs
submitted after it to compile and report at once.  Real CLI, compile service, pool and
pipeline; the recorded planner's compile server stands for the JVM."""

from __future__ import annotations

import pytest
from lifecycle_helpers import wait_for
from recorded_planner import case_sql
from test_lifecycle_cli import configure, submit

SQL = case_sql("union_all")


def huge(sql: str, size: int) -> str:
    """``sql`` with its INSERT carrying a comment of ``size`` characters (kept in the statement)."""
    at = sql.rindex("INSERT")
    return sql[:at] + "INSERT /* " + "x" * size + " */ " + sql[at + len("INSERT") :]


@pytest.fixture
def scripts(cli, tmp_path):
    small = tmp_path / "small.sql"
    small.write_text(cli.planner.record(SQL, "union_all"), encoding="utf-8")
    big = tmp_path / "big.sql"
    big.write_text(cli.planner.record(huge(SQL, 3 * 1024 * 1024), "union_all"), encoding="utf-8")
    return small, big


def test_a_huge_script_compiling_for_long_does_not_hold_up_small_jobs(cli, server, scripts):
    small, big = scripts
    cli.env["PLANLINEAGE_COMPILE_IDLE_SECONDS"] = "30"
    configure(cli, server, **{"lineage.compile-planners": "1"})  # a 2-core machine: one planner
    cli.planner.hold_large()
    try:
        submit(cli, big, "app-big", "big")
        wait_for(lambda: cli.planner.compiling(), 60, "the huge script's compile to begin")
        for n in range(3):
            submit(cli, small, f"app-{n}", f"small{n}")
        wait_for(lambda: len(server.events) == 3, 60, "the small jobs' START while the huge one compiles")
        assert sorted(e["job"]["name"] for e in server.events) == ["small0", "small1", "small2"]
    finally:
        cli.planner.release_large()
    wait_for(lambda: len(server.events) == 4, 60, "the huge job's START once its compile ends")
    assert server.events[-1]["job"]["name"] == "big"
