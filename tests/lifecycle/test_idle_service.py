"""A compile service whose lineage server refuses everything for good (issue #38): kept events
hold no planner, the service ends after a bounded time, and the next command delivers them once
the server is back.  Real CLI, compile service and pipeline; the recorded planner's compile
server stands for the JVM."""

from __future__ import annotations

import time

import pytest
from compile_services import process_tree, services
from lifecycle_helpers import wait_for
from recorded_planner import case_sql
from test_lifecycle_cli import configure, submit

from planlineage.lifecycle import compile_service
from planlineage.store.sqlite import Store

IDLE = 1.5
FLUSH = 1.0
SLACK = 2.0  # a busy 2-core machine: process start-up and polling


@pytest.fixture
def sql_file(cli, tmp_path):
    path = tmp_path / "job.sql"
    path.write_text(cli.planner.record(case_sql("union_all"), "union_all"), encoding="utf-8")
    return path


def planners(home) -> list[int]:
    """The processes under the home's compile service(s) other than the services themselves."""
    found = []
    for service in services(home):
        found += [pid for pid in process_tree(service) if pid != service]
    return found


def test_kept_events_hold_no_planner_and_the_service_ends_then_the_next_command_delivers(cli, server, sql_file):
    cli.env["PLANLINEAGE_COMPILE_IDLE_SECONDS"] = str(IDLE)
    cli.env["PLANLINEAGE_COMPILE_FLUSH_SECONDS"] = str(FLUSH)
    server.set_mode("500")  # every event refused, due again at once: the service delivers all the time
    configure(cli, server, **{"lineage.retry-backoff": "0", "lineage.retry-attempts": "100000000"})
    submit(cli, sql_file)
    wait_for(lambda: planners(cli.home), 30, "the planner of the compile")
    wait_for(lambda: server.requests, 30, "the first START refused")
    compiled = time.monotonic()
    # The planner goes after the compile idle time although the service still delivers.
    wait_for(
        lambda: cli.workers() and not planners(cli.home), IDLE + SLACK + FLUSH, "the planner gone, the service alive"
    )
    planner_gone = time.monotonic() - compiled
    assert planner_gone >= IDLE - 0.5, planner_gone
    # The service ends by itself, the event still kept (never dropped).
    cli.wait_workers(compile_service.DELIVERY_LINGER_FACTOR * IDLE + FLUSH + SLACK)
    kept = Store(cli.home / "state.db").rows("SELECT event_type, status FROM outbox")
    assert kept == [{"event_type": "START", "status": "pending"}]
    refused = len(server.requests)
    time.sleep(1.0)
    assert len(server.requests) == refused  # nobody is retrying in the background any more
    # Back: the next command delivers what was kept.
    server.set_mode("normal")
    result = cli("flush", "--timeout", "10")
    assert result.returncode == 0, result.stderr
    cli.wait_workers(30)
    assert [e["eventType"] for e in server.events] == ["START"]
    assert Store(cli.home / "state.db").rows("SELECT id FROM outbox") == []
