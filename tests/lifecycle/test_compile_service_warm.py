"""The compile service asks a running warm planner first, and starts its own JVM only without one."""

from __future__ import annotations

import json
import shutil
import socket
import tempfile
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from planlineage.lifecycle import planner_pool
from planlineage.planner import provision, warm_client
from planlineage.planner.warm import Limits, SelfHealingPlanner

REQUEST = {"statements": ["INSERT INTO sink SELECT id FROM orders"]}
ANSWER = {"ok": True, "plans": ["recorded"]}


class NoJvm(Exception):
    """Raised where the slot would start its own planner JVM."""


@pytest.fixture
def sockets(monkeypatch):
    # Unix socket paths are limited to ~100 bytes: a short private folder, not under tmp_path.
    folder = Path(tempfile.mkdtemp(prefix="pl-warm-"))
    monkeypatch.setenv("PLANLINEAGE_PLANNER_DIR", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _slot(started: list) -> planner_pool._Slot:
    """A pool slot of Flink 1.20 whose own planner cannot start: starting it raises NoJvm."""
    slot = planner_pool._Slot("1.20", started.append)
    provisioned = SimpleNamespace(flink=provision.resolve_version("1.20"))
    healing = SelfHealingPlanner(provisioned, Limits(job_timeout=30))  # type: ignore[arg-type]

    def no_jvm():
        raise NoJvm

    healing.start = no_jvm  # type: ignore[method-assign]
    slot._healing = healing
    return slot


def _warm_planner(path: Path, received: list) -> threading.Thread:
    """One answer on the warm planner's socket protocol (a JSON line in, a JSON line out)."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)

    def serve():
        with server:
            conn, _ = server.accept()
            with conn:
                received.append(json.loads(conn.makefile("rb").readline()))
                conn.sendall(json.dumps(ANSWER).encode() + b"\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


def test_a_running_warm_planner_answers_and_no_jvm_of_the_pool_starts(sockets):
    received: list = []
    thread = _warm_planner(sockets / warm_client.socket_name("1.20"), received)
    started: list = []
    assert _slot(started).compile(REQUEST) == ANSWER
    thread.join(10)
    assert received == [{"op": "compile", "request": REQUEST}]
    assert started == []  # no pool JVM was recorded as started


def test_without_a_warm_planner_the_slot_starts_its_own(sockets):
    with pytest.raises(NoJvm):
        _slot([]).compile(REQUEST)
