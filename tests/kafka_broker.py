"""A throwaway single-node Kafka broker (KRaft: broker and controller in one JVM) on loopback.

The broker is Apache Kafka's own (``kafka.Kafka``), its jars the pin ``kafka-broker`` of
``tests/artifacts.toml`` resolved by Maven (:mod:`maven_artifacts`). Topics are created when first
written (the broker's ``auto.create.topics.enable``). Use it in a module- or session-scoped fixture:

    with kafka_broker.kafka_broker(tmp_path) as broker:
        broker.bootstrap  # "127.0.0.1:<port>"
"""

from __future__ import annotations

import socket
import subprocess
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import maven_artifacts
from databases import free_port

from planlineage.planner.provision import find_java_tool


def _properties(folder: Path, port: int, controller: int) -> Path:
    settings = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@127.0.0.1:{controller}",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "log.dirs": str(folder / "logs"),
        "num.partitions": "1",
        "offsets.topic.replication.factor": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
        "auto.create.topics.enable": "true",
    }
    path = folder / "server.properties"
    path.write_text("".join(f"{key}={value}\n" for key, value in settings.items()), encoding="utf-8")
    return path


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex(("127.0.0.1", port)) == 0


class KafkaBroker:
    def __init__(self, process: subprocess.Popen, port: int, log: Path):
        self.process = process
        self.port = port
        self.log = log

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"


@contextmanager
def kafka_broker(folder: Path, timeout: float = 180.0):
    """A started broker whose data lives in ``folder``; stopped (its JVM killed) afterwards."""
    folder.mkdir(parents=True, exist_ok=True)
    classpath = ":".join(str(jar) for jar in maven_artifacts.resolve("kafka-broker"))
    port, controller = free_port(), free_port()
    properties = _properties(folder, port, controller)
    java = ["nice", find_java_tool("java") or "java", "-Xmx384m", "-XX:+UseSerialGC", "-cp", classpath]
    formatted = subprocess.run(
        [*java, "kafka.tools.StorageTool", "format", "-t", str(uuid.uuid4()), "-c", str(properties)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert formatted.returncode == 0, f"Kafka's storage could not be formatted: {formatted.stderr[-2000:]}"
    log = folder / "broker.log"
    with log.open("wb") as output:
        process = subprocess.Popen([*java, "kafka.Kafka", str(properties)], stdout=output, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + timeout
        while not _listening(port):
            assert process.poll() is None, f"the Kafka broker stopped: {log.read_text(errors='replace')[-2000:]}"
            assert time.monotonic() < deadline, f"the Kafka broker did not listen within {timeout:.0f} s"
            time.sleep(0.5)
        yield KafkaBroker(process, port, log)
    finally:
        process.kill()
        process.wait(timeout=30)
