"""A corrupt, truncated or read-only state: lineage stays on, what can be read is salvaged, every
later command says once what was moved where, `settings list` reports it."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys

import pytest
from recorded_planner import case_sql
from test_lifecycle_cli import configure, state, submit

SQL = case_sql("union_all")


@pytest.fixture
def sql_file(cli, tmp_path):
    path = tmp_path / "job.sql"
    path.write_text(cli.planner.record(SQL, "union_all"), encoding="utf-8")
    return path


def _undelivered_run(cli, server, sql_file):
    """A run whose START went out and whose RUNNING waits (the server was down)."""
    configure(cli, server)
    submit(cli, sql_file)
    cli.wait_workers()
    server.down()
    state(cli, "app-1", "RUNNING")
    db = cli.home / "state.db"
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        assert conn.execute("SELECT COUNT(*) FROM outbox").fetchone()[0] == 1
    return db


def _messages(result):
    return [line for line in result.stderr.decode().splitlines() if "moved aside" in line]


def test_corrupt_store_is_salvaged_lineage_stays_on_and_every_command_says_it_once(cli, server, sql_file):
    db = _undelivered_run(cli, server, sql_file)
    with sqlite3.connect(db) as conn:
        page = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'outbox_run'").fetchone()[0]
        size = conn.execute("PRAGMA page_size").fetchone()[0]
    with open(db, "r+b") as handle:  # a damaged index page: the table itself is still readable
        handle.seek((page - 1) * size)
        handle.write(b"\xde\xad" * (size // 2))
    server.up()
    first = cli("flush")
    assert first.returncode == 0 and len(_messages(first)) == 1
    message = _messages(first)[0]
    assert "1 run(s) and 1 undelivered event(s) were salvaged" in message and ".corrupt-" in message
    assert [e["eventType"] for e in server.events] == ["START", "RUNNING"]  # salvaged, delivered
    state(cli, "app-1", "FINISHED")  # the run was salvaged too: its terminal event goes out
    assert [e["eventType"] for e in server.events] == ["START", "RUNNING", "COMPLETE"]
    for args in (("flush",), ("state", "--app-id", "x", "--state", "RUNNING")):
        assert len(_messages(cli(*args))) == 1  # every later command, once
    listed = cli("settings", "list")
    assert server.address in listed.stdout.decode()  # the address survived: lineage is on
    assert "moved aside" in listed.stdout.decode() and _messages(listed) == []
    for moved in cli.home.glob("state.db.corrupt-*"):
        moved.unlink()
    assert _messages(cli("flush")) == []  # dealt with: silent again


def test_a_truncated_store_is_corruption_too(cli, server, sql_file):
    db = _undelivered_run(cli, server, sql_file)
    db.write_bytes(b"")
    server.up()
    result = cli("flush")
    assert result.returncode == 0
    [message] = _messages(result)
    assert "empty (truncated)" in message and "0 run(s) and 0 undelivered event(s)" in message
    submit(cli, sql_file, "app-2", "other")  # lineage is still on
    cli.wait_workers()
    assert server.events[-1]["job"]["name"] == "other"


def test_corrupt_settings_file_is_moved_aside_and_said(cli, server):
    configure(cli, server)
    (cli.home / "settings.json").write_bytes(b"{not json")
    listed = cli("settings", "list")
    assert listed.returncode == 0 and "settings.json.corrupt-" in listed.stdout.decode() + listed.stderr.decode()
    assert len([p for p in cli.home.iterdir() if p.name.startswith("settings.json.corrupt-")]) == 1
    assert "moved aside" in cli("flush").stderr.decode()


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare(1) for a private read-only mount")
def test_read_only_home_still_answers_settings_list(cli, server, sql_file):
    _undelivered_run(cli, server, sql_file)
    script = (
        f"mount --bind {cli.home} {cli.home} && mount -o remount,bind,ro {cli.home} && "
        f"{sys.executable} -m planlineage settings list && "
        f"{sys.executable} -m planlineage outbox list && "
        f"{sys.executable} -m planlineage state --app-id app-1 --state FINISHED"
    )
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("no permission for a private mount namespace")
    result = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, env=cli.env, cwd=cli.tmp)
    out = result.stdout.decode()
    assert result.returncode == 0, result.stderr
    assert server.address in out and "RUNNING" in out  # settings and the waiting event, read-only
    assert "Traceback" not in result.stderr.decode()
