"""A process keeps its connection to a warm planner for its next compile, and never reads one
job's answer as another's (a fake warm planner on the socket protocol; no JVM)."""

from __future__ import annotations

import json
import shutil
import socket
import tempfile
import threading
import time
from pathlib import Path

import pytest

from planlineage.planner import warm_client


@pytest.fixture
def sockets(monkeypatch):
    # Unix socket paths are limited to ~100 bytes: a short private folder, not under tmp_path.
    folder = Path(tempfile.mkdtemp(prefix="pl-conn-"))
    folder.chmod(0o700)
    monkeypatch.setenv(warm_client.PLANNER_DIR_ENV, str(folder))
    yield folder
    with warm_client._kept_lock:
        for conn in warm_client._kept.values():
            conn.close()
        warm_client._kept.clear()
    shutil.rmtree(folder, ignore_errors=True)


class FakeWarmPlanner:
    """Answers compile lines with {"ok": true, "job": <the request's "job">, "connection": n}.

    `lines_per_connection`: closes a connection after that many answers. `slow_job`: that job is
    answered after `delay` seconds."""

    def __init__(self, path: Path, lines_per_connection: int = 1000, slow_job=None, delay: float = 0.0):
        self.connections = 0
        self.lines_per_connection = lines_per_connection
        self.slow_job = slow_job
        self.delay = delay
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(8)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn, self.connections), daemon=True).start()

    def _serve(self, conn, number):
        with conn:
            reader = conn.makefile("rb")
            for _ in range(self.lines_per_connection):
                line = reader.readline()
                if not line:
                    return
                job = json.loads(line)["request"]["job"]
                if job == self.slow_job:
                    time.sleep(self.delay)
                try:
                    conn.sendall(json.dumps({"ok": True, "job": job, "connection": number}).encode() + b"\n")
                except OSError:
                    return

    def close(self):
        try:
            self.server.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread (close alone does not)
        except OSError:
            pass
        self.server.close()


def test_compiles_of_one_process_share_one_connection(sockets):
    fake = FakeWarmPlanner(sockets / warm_client.socket_name("1.20"))
    try:
        answers = [warm_client.compile_warm("1.20", {"job": n}, 5.0) for n in range(3)]
        assert [a["job"] for a in answers] == [0, 1, 2]
        assert {a["connection"] for a in answers} == {1} and fake.connections == 1
    finally:
        fake.close()


def test_a_kept_connection_the_planner_closed_is_replaced_once(sockets):
    fake = FakeWarmPlanner(sockets / warm_client.socket_name("1.20"), lines_per_connection=1)
    try:
        first = warm_client.compile_warm("1.20", {"job": "a"}, 5.0)
        second = warm_client.compile_warm("1.20", {"job": "b"}, 5.0)
        assert (first["job"], first["connection"]) == ("a", 1)
        assert (second["job"], second["connection"]) == ("b", 2)
    finally:
        fake.close()


def test_a_connection_that_timed_out_is_not_reused(sockets):
    fake = FakeWarmPlanner(sockets / warm_client.socket_name("1.20"), slow_job="slow", delay=0.5)
    try:
        assert warm_client.compile_warm("1.20", {"job": "slow"}, 0.2) is None  # too late: the cold path answers
        time.sleep(0.6)  # the late answer has been written on the old connection by now
        answer = warm_client.compile_warm("1.20", {"job": "next"}, 5.0)
        assert answer["job"] == "next" and answer["connection"] == 2
    finally:
        fake.close()


def test_a_kept_connection_to_a_planner_that_died_leaves_the_job_to_the_cold_path(sockets):
    fake = FakeWarmPlanner(sockets / warm_client.socket_name("1.20"))
    assert warm_client.compile_warm("1.20", {"job": 1}, 5.0)["ok"]
    fake.close()  # no longer listening; its socket file is left behind, as by a killed worker
    for conn in list(warm_client._kept.values()):
        conn.sock.shutdown(socket.SHUT_RDWR)  # its end of the kept connection is gone too
    assert warm_client.compile_warm("1.20", {"job": 2}, 5.0) is None


def test_a_warm_planner_of_another_installation_is_never_asked(sockets, monkeypatch):
    """The sockets' folder is the user's, shared by every installation: a planner another
    installation started (another virtualenv, another Flink cache, another Java) compiled this
    one's jobs, so a fresh install without Java extracted through it."""
    monkeypatch.setenv("PLANLINEAGE_FLINK_CACHE", str(sockets / "their-cache"))
    theirs = warm_client.socket_path("1.20")  # what the other installation listens on
    monkeypatch.setenv("PLANLINEAGE_FLINK_CACHE", str(sockets / "my-cache"))
    fake = FakeWarmPlanner(theirs)
    try:
        assert warm_client.compile_warm("1.20", {"job": 1}, 2.0) is None  # the cold path answers
        assert warm_client.extract_warm("1.20", {"job": 1}, 2.0) is None
        assert warm_client.status() == []
        assert warm_client.stop("1.20") == 0
        assert fake.connections == 0
    finally:
        fake.close()


def test_another_virtualenv_is_another_installation(monkeypatch):
    mine = warm_client.installation()
    monkeypatch.setattr(warm_client, "_installation", {})
    monkeypatch.setattr(warm_client, "__file__", "/opt/other-venv/site-packages/planlineage/planner/warm_client.py")
    assert warm_client.installation() != mine


def test_the_installation_key_reads_the_flink_cache_variable_provisioning_reads():
    from planlineage.planner import provision

    assert warm_client._FLINK_CACHE_ENV == provision.CACHE_ENV
