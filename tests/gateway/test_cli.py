"""``planlineage gateway`` as a user runs it: it says where it listens, where it forwards and whether
lineage is on (and from where); with lineage off it writes nothing at all; with lineage on the
sessions are in the store; Ctrl-C stops it cleanly."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from planlineage.cli.gateway import parse_listen


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Command:
    """``planlineage gateway`` in a subprocess; ``url`` is where it listens once it said so."""

    def __init__(self, gateway_url: str, cwd, *extra: str):
        self.process = subprocess.Popen(
            [sys.executable, "-P", "-m", "planlineage", "gateway", "--listen", "127.0.0.1:0"]
            + ["--sql-gateway", gateway_url, *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
            env=dict(os.environ),
            # Ctrl-C reaches it even when the tests run in the background of a non-interactive
            # shell, which starts them with SIGINT ignored (and Python keeps an inherited SIG_IGN).
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        self.lines: list[str] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.process.stderr.readline()  # type: ignore[union-attr]
            if not line:
                break
            self.lines.append(line.rstrip("\n"))
            if line.startswith("planlineage gateway: lineage "):
                break
        said = next((line for line in self.lines if "listening on " in line), None)
        assert said, self.lines
        self.url = said.split("listening on ", 1)[1].split(",", 1)[0]

    def interrupt(self) -> tuple[int, list[str]]:
        self.process.send_signal(signal.SIGINT)
        out, err = self.process.communicate(timeout=60)
        return self.process.returncode, self.lines + err.splitlines()


def drive_a_session(client_of, url: str) -> tuple[str, str]:
    client = client_of(url, "v2")
    session = client.open({"pipeline.name": "cli-job"})
    client.call("POST", f"/sessions/{session}/configure-session", {"statement": "SET 'a' = 'b'"})
    client.run(session, "CREATE TABLE t (x INT) WITH ('connector' = 'blackhole')")
    operation = client.run(session, "INSERT INTO t SELECT 1")
    return session, operation


def test_with_lineage_off_it_is_a_plain_proxy_that_writes_nothing(clean_env, tmp_path, upstream, client_of):
    command = Command(upstream.url, tmp_path)
    session, operation = drive_a_session(client_of, command.url)
    job = client_of(command.url, "v2").fetch(session, operation)["jobID"]
    code, lines = command.interrupt()
    assert code == 0
    assert lines[0] == f"planlineage gateway: listening on {command.url}, forwarding to {upstream.url}"
    assert lines[1].startswith("planlineage gateway: lineage off: lineage is not configured")
    assert lines[1].endswith("a plain proxy, nothing recorded")
    assert lines[-1] == "planlineage gateway: stopped"
    assert job == upstream.jobs[operation]
    assert list(tmp_path.iterdir()) == []  # no home, no store, no file of any kind (the cwd is tmp_path too)


def test_with_lineage_on_it_keeps_the_sessions_in_the_store_and_stops_cleanly(
    clean_env, tmp_path, monkeypatch, upstream, client_of
):
    monkeypatch.setenv("OPENLINEAGE_URL", f"http://127.0.0.1:{free_port()}")  # lineage on; the backend is away
    command = Command(upstream.url, tmp_path, "--jobmanager", f"http://127.0.0.1:{free_port()}")
    session, _operation = drive_a_session(client_of, command.url)
    code, lines = command.interrupt()
    assert code == 0
    assert lines[1].startswith("planlineage gateway: lineage on: http (from OPENLINEAGE_URL); sessions kept in SQLite ")
    assert "job states from http://127.0.0.1:" in lines[1]
    assert lines[-1].startswith("planlineage gateway: stopped")
    from planlineage.store.sqlite import Store

    store = Store(clean_env / "state.db")
    kept = store.rows("SELECT session, seq, kind, statement FROM gateway_statements ORDER BY seq")
    assert kept == [
        {"session": session, "seq": 1, "kind": "configure", "statement": "SET 'a' = 'b'"},
        {"session": session, "seq": 2, "kind": "statement", "statement": kept[1]["statement"]},
        {"session": session, "seq": 3, "kind": "statement", "statement": "INSERT INTO t SELECT 1"},
    ]
    assert [json.loads(r["properties"]) for r in store.rows("SELECT properties FROM gateway_sessions")] == [
        {"pipeline.name": "cli-job"}
    ]


def test_a_port_in_use_is_said_and_exits_2(clean_env, tmp_path, upstream):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-P", "-m", "planlineage", "gateway", "--listen", f"127.0.0.1:{port}"]
            + ["--sql-gateway", upstream.url],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=60,
        )
    assert result.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr


@pytest.mark.parametrize(
    ("given", "expected"),
    [("127.0.0.1:8084", ("127.0.0.1", 8084)), (":0", ("127.0.0.1", 0)), ("[::1]:9", ("::1", 9))],
)
def test_listen_addresses(given, expected):
    assert parse_listen(given) == expected


@pytest.mark.parametrize("given", ["8084", "host:", "host:99999", "host:x"])
def test_a_listen_address_without_a_port_says_what_to_give(given):
    with pytest.raises(ValueError, match="give HOST:PORT"):
        parse_listen(given)


def test_a_state_store_that_cannot_be_used_leaves_a_plain_proxy_that_says_why(
    clean_env, tmp_path, monkeypatch, upstream, client_of
):
    monkeypatch.setenv("OPENLINEAGE_URL", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("PLANLINEAGE_STORE", "mysql://nowhere/db")  # not a store planlineage can use
    command = Command(upstream.url, tmp_path)
    session, operation = drive_a_session(client_of, command.url)
    assert client_of(command.url, "v2").fetch(session, operation)["jobID"] == upstream.jobs[operation]
    code, lines = command.interrupt()
    assert code == 0
    assert lines[1].startswith("planlineage gateway: lineage off: the state store cannot be used (PLANLINEAGE_STORE: ")
    assert lines[1].endswith("; a plain proxy, nothing recorded")
