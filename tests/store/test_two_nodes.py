"""Two platform nodes (two homes, two node names) sharing one real PostgreSQL store, driven as a
platform drives them: a fresh `python -m planlineage` process per command, compile services with the
recorded planner (real pipeline, recorded plans, no JVM), the Gravitino-compatible test server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections import Counter

import pytest
from databases import PASSWORD
from lifecycle_helpers import Cli, wait_for
from recorded_planner import case_sql

SQL = case_sql("union_all")


class Node(Cli):
    def __init__(self, root, name: str, url: str, **env: str):
        (root / name).mkdir(parents=True, exist_ok=True)
        super().__init__(root / name / "home", root / name)
        self.name = name
        self.env.update(PLANLINEAGE_STORE=url, PLANLINEAGE_NODE=name, **env)
        self.sql = root / name / "job.sql"
        self.sql.write_text(self.planner.record(SQL, "union_all"), encoding="utf-8")

    def ok(self, *args: str, timeout: float = 60, **env: str):
        result = self(*args, timeout=timeout, **env)
        assert result.returncode == 0, (args, result.stderr)
        for stream in (result.stdout, result.stderr):
            assert PASSWORD.encode() not in stream
        return result

    def submit(self, app: str, job: str = "etl"):
        return self.ok(
            "submit", "--app-id", app, "--job-name", job, "--flink-version", "1.20", "--sql-file", str(self.sql),
            "--lineage-enable",
        )  # fmt: skip

    def state(self, app: str, value: str):
        return self.ok("state", "--app-id", app, "--state", value)


@pytest.fixture
def nodes(tmp_path, pg_url, server):
    a = Node(tmp_path, "node-a", pg_url)
    b = Node(tmp_path, "node-b", pg_url)
    a.ok("settings", "set", "lineage.address", server.address)
    yield a, b
    for node in (a, b):
        for pid in node.workers():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        node.planner.release()


def settled(server, runs: int, per_run: int, nodes=()) -> dict[str, list[str]]:
    """The events per run once ``runs`` runs have ``per_run`` events each: a command that ran out
    of its bound hands delivery to its node's compile service, which finishes it just after."""
    wait_for(
        lambda: len(events_of(server)) == runs and all(len(v) >= per_run for v in events_of(server).values()),
        30,
        what=f"{runs} run(s) with {per_run} events",
    )
    for node in nodes:
        node.wait_workers(60)
    return events_of(server)


def events_of(server, app_job: str = "etl") -> dict[str, list[str]]:
    order: dict[str, list[str]] = {}
    for event in server.events:
        if event["job"]["name"].startswith(app_job):
            order.setdefault(event["run"]["runId"], []).append(event["eventType"])
    return order


def test_a_setting_made_on_one_node_is_seen_on_the_other_and_the_store_url_stays_per_node(nodes, server):
    a, b = nodes
    assert b.ok("settings", "get", "lineage.address").stdout.decode().strip() == server.address
    b.ok("settings", "set", "lineage.namespace", "platform-x")
    listed = a.ok("settings", "list").stdout.decode()
    assert "platform-x" in listed and "(store)" in listed
    assert "postgresql://postgres:***@127.0.0.1" in listed and "(env)" in listed  # the URL: per node, masked
    assert not (b.home / "state.db").exists() and not (a.home / "state.db").exists()


def test_a_run_begun_on_one_node_is_ended_on_the_other(nodes, server):
    a, b = nodes
    a.submit("app-1")
    wait_for(lambda: events_of(server), what="START from node a's worker")
    b.state("app-1", "RUNNING")
    b.state("app-1", "FINISHED")
    assert list(settled(server, 1, 3, (a, b)).values()) == [["START", "RUNNING", "COMPLETE"]]
    assert set(server.keys().values()) == {1}
    status = json.loads(b.ok("store", "status", "--json").stdout)
    assert status["backend"] == "postgresql" and status["runs"] == {"FINISHED": 1}
    assert status["outbox"] == {"pending": 0, "parked": 0} and status["schema_version"] == status["schema_latest"]


def test_ten_runs_over_both_nodes_flushed_by_both_at_once_are_delivered_exactly_once(nodes, server):
    a, b = nodes
    server.down()  # everything queues up while the server is away
    apps = [f"app-{i}" for i in range(10)]
    threads = [threading.Thread(target=(a if i % 2 else b).submit, args=(app,)) for i, app in enumerate(apps)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    a.wait_workers(60)
    b.wait_workers(60)

    def report(node, app):  # states reported by the other node than the one that submitted
        node.state(app, "RUNNING")
        node.state(app, "FINISHED")

    threads = [threading.Thread(target=report, args=(b if i % 2 else a, app)) for i, app in enumerate(apps)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    status = json.loads(a.ok("store", "status", "--json").stdout)
    # recorded on the shared store; turned into events by a compile service or the flushes below
    assert status["runs"] == {"FINISHED": 10} and server.events == []
    server.up()
    flushes = [threading.Thread(target=node.ok, args=("flush", "--timeout", "20")) for node in (a, b, a, b)]
    for thread in flushes:
        thread.start()
    for thread in flushes:
        thread.join()
    order = settled(server, 10, 3, (a, b))
    assert len(order) == 10 and all(seen == ["START", "RUNNING", "COMPLETE"] for seen in order.values())
    assert set(server.keys().values()) == {1} and len(server.keys()) == 30
    assert json.loads(b.ok("store", "status", "--json").stdout)["outbox"] == {"pending": 0, "parked": 0}


def test_a_node_killed_mid_compile_is_finished_by_the_other_after_its_lease(nodes, server):
    a, b = nodes
    a.env.update(PLANLINEAGE_COMPILE_LEASE="2")
    b.env.update(PLANLINEAGE_COMPILE_LEASE="2")
    a.planner.hold()  # node a's compile never ends: node b's planner is not held
    a.submit("app-k")
    wait_for(a.planner.compiling, what="node a's compile under way")
    status = json.loads(b.ok("store", "status", "--json").stdout)
    assert status["leases"] == {"node-a": {"compile": 1}} and status["runs"] == {"COMPILING": 1}
    time.sleep(2.5)  # the worker renews its lease while it compiles
    assert json.loads(b.ok("store", "status", "--json").stdout)["compile_jobs_expired"] == 0
    for pid in a.workers():  # node a dies mid-compile
        os.kill(pid, signal.SIGKILL)
    a.wait_workers()
    b.state("app-k", "RUNNING")  # within the lease: node b must not take the job yet
    assert not b.workers() or events_of(server) == {}
    time.sleep(2.2)  # node a's lease runs out (node b's service, if the state above started it, may take it now)
    b.ok("flush")  # any command of node b notices the expired lease and has its service finish the compile
    wait_for(b.planner.compiling, what="node b's compile")
    b.wait_workers(60)
    b.state("app-k", "FINISHED")
    assert list(settled(server, 1, 3, (a, b)).values()) == [["START", "RUNNING", "COMPLETE"]]
    status = json.loads(a.ok("store", "status", "--json").stdout)
    assert status["leases"] == {} and status["compile_jobs_expired"] == 0


def test_database_restart_mid_run_loses_nothing_and_fails_open_meanwhile(nodes, server, postgres):
    a, b = nodes
    a.submit("app-r")
    wait_for(lambda: events_of(server), what="START")
    a.wait_workers()
    postgres.stop()
    try:
        started = time.monotonic()
        result = b.state("app-r", "RUNNING")  # exits 0, keeps the report on node b
        assert time.monotonic() - started < 8
        assert b"kept on this node until the store is back" in result.stderr
        assert len(list((b.home / "spool").glob("*.json"))) == 1
        assert b"skipped" in a.ok("flush").stderr  # (a submission is kept: see the test below)
    finally:
        postgres.start()
    b.state("app-r", "FINISHED")  # replays the spooled RUNNING first, with its original time
    assert list(settled(server, 1, 3, (a, b)).values()) == [["START", "RUNNING", "COMPLETE"]]
    running = next(e for e in server.events if e["eventType"] == "RUNNING")
    complete = next(e for e in server.events if e["eventType"] == "COMPLETE")
    assert running["eventTime"] < complete["eventTime"]
    assert not list((b.home / "spool").glob("*.json"))
    assert Counter(server.keys().values()) == Counter({1: 3})


def test_store_status_and_migrate_from_the_cli(nodes):
    a, b = nodes
    out = b.ok("store", "migrate").stdout.decode()
    assert "nothing to do" in out and "postgres:***@" in out  # node a's settings write migrated it
    text = a.ok("store", "status").stdout.decode()
    assert "backend         PostgreSQL postgresql://postgres:***@127.0.0.1" in text
    assert "leader          none" in text


def test_a_node_pointed_at_the_store_by_its_settings_file_shares_everything(nodes, server, tmp_path, pg_url):
    c = Node(tmp_path, "node-c", pg_url)
    del c.env["PLANLINEAGE_STORE"]
    assert c("settings", "get", "lineage.address").returncode == 1  # its own SQLite: nothing set
    shown = c.ok("settings", "set", "lineage.store", pg_url).stdout.decode()
    assert shown.strip() == f"lineage.store = {pg_url.replace(PASSWORD, '***')}"
    assert c.ok("settings", "get", "lineage.store").stdout.decode().strip() == pg_url.replace(PASSWORD, "***")
    assert c.ok("settings", "get", "lineage.address").stdout.decode().strip() == server.address
    assert "(local)" in c.ok("settings", "list").stdout.decode()
    stored = json.loads((c.home / "settings.json").read_text())["settings"]
    assert stored == {"lineage.store": pg_url}  # the node's file holds only what is per node
    assert oct((c.home / "settings.json").stat().st_mode & 0o777) == "0o600"
    bad = c("settings", "set", "lineage.store", f"mysql://u:{PASSWORD}@h/d")
    assert bad.returncode == 2 and b"not supported" in bad.stderr and PASSWORD.encode() not in bad.stderr


def test_submissions_during_a_store_outage_are_kept_and_each_run_starts_exactly_once(nodes, server, postgres):
    a, b = nodes
    a.submit("app-0")  # the node has seen lineage on (a fresh node keeps nothing while the store is away)
    wait_for(lambda: events_of(server), what="START of app-0")
    a.wait_workers()
    apps = [f"app-{i}" for i in range(1, 6)]
    postgres.stop()
    try:
        for app in apps:
            started = time.monotonic()
            result = a.submit(app)  # exits 0 at once, the submission kept on node a
            assert time.monotonic() - started < 8
            assert b"kept on this node until the store is back" in result.stderr, result.stderr
        assert len(list((a.home / "spool").glob("*.json"))) == len(apps)
        for path in (a.home / "spool").glob("*.json"):
            assert oct(path.stat().st_mode & 0o777) == "0o600"  # it holds the job's SQL
        b.state("app-1", "RUNNING")  # reported on the other node meanwhile: its spool keeps it too
    finally:
        postgres.start()
    a.ok("flush")  # the next command replays the spool: runs recorded, compiles queued
    b.ok("flush")
    order = settled(server, 6, 1, (a, b))
    assert not list((a.home / "spool").glob("*.json")) and not list((b.home / "spool").glob("*.json"))
    assert sorted(len(v) for v in order.values()) == [1, 1, 1, 1, 1, 2]
    assert all(v[0] == "START" for v in order.values())
    assert Counter(server.keys().values()) == Counter({1: 7})  # every event exactly once
    status = json.loads(a.ok("store", "status", "--json").stdout)
    assert sum(status["runs"].values()) == 6 and "COMPILING" not in status["runs"]


def test_a_wrong_store_password_fills_the_spool_only_up_to_its_cap_and_says_what_it_drops(tmp_path, pg_url):
    wrong = pg_url.replace(PASSWORD, "FAKE-wrong-password")
    node = Node(tmp_path, "node-w", wrong, PLANLINEAGE_SPOOL_MAX="3")
    for i in range(5):
        result = node.state(f"app-{i}", "RUNNING")
        said = result.stderr.decode()
        assert b"FAKE-wrong-password" not in result.stderr
        if i < 3:
            assert "kept on this node until the store is back" in said and "password authentication failed" in said
        else:
            assert "kept on this node" not in said
            assert f"the state report RUNNING of app-{i} was dropped, {i - 2} dropped in all" in said, said
            assert "spool of this node is full (3 reports kept, the oldest first" in said
            assert "fix lineage.store (address, password) and run `planlineage flush`" in said
    assert len(list((node.home / "spool").glob("*.json"))) == 3
    node.ok("settings", "set", "lineage.address", "http://127.0.0.1:9", PLANLINEAGE_STORE=pg_url)
    later = node.ok("flush", PLANLINEAGE_STORE=pg_url).stderr.decode()  # the password fixed
    assert "reports of this node were dropped because its spool was full" in later  # said by every later command
    assert not list((node.home / "spool").glob("*.json"))  # the kept reports were recorded
