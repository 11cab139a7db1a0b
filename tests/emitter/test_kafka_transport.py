"""The kafka transport (openlineage-python's KafkaTransport behind planlineage's adapter) against a
real single-node Kafka broker on loopback (Apache Kafka's own, tests/kafka_broker.py): Delivered
only once the broker acknowledged the event, under the message key openlineage-python's client
sets; RetryLater within the send's deadline when no broker answers."""

from __future__ import annotations

import json
import socket
import time
import uuid

import kafka_broker
import pytest

from planlineage.emitter.transports import Delivered, RetryLater, create_transport
from planlineage.settings import Settings

confluent_kafka = pytest.importorskip("confluent_kafka", reason="the kafka extra: pip install 'planlineage[kafka]'")

EVENT = {
    "eventType": "START",
    "eventTime": "2026-12-06T05:00:00Z",
    "run": {"runId": "01900000-0000-7000-8000-000000000003", "facets": {}},
    "job": {"namespace": "planlineage", "name": "orders"},
    "inputs": [],
    "outputs": [],
    "producer": "https://example.com/planlineage",
    "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
}


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with kafka_broker.kafka_broker(tmp_path_factory.mktemp("kafka")) as started:
        yield started


def topic_messages(bootstrap: str, topic: str, count: int, timeout: float = 30.0) -> list:
    consumer = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": uuid.uuid4().hex, "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topic])
    found = []
    end = time.monotonic() + timeout
    try:
        while len(found) < count and time.monotonic() < end:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                found.append(message)
    finally:
        consumer.close()
    return found


def kafka(bootstrap: str, topic: str, **options):
    config = {"bootstrap.servers": bootstrap, "acks": "all", **options.pop("config", {})}
    return create_transport("kafka", {"topic": topic, "config": config, **options})


def test_delivered_once_acknowledged_under_the_librarys_message_key(broker):
    topic = f"lineage-{uuid.uuid4().hex[:8]}"
    parent = {"job": {"namespace": "airflow", "name": "dag.task"}, "run": {"runId": "p"}}
    child = {**EVENT, "run": {"runId": EVENT["run"]["runId"], "facets": {"parent": parent}}}
    with kafka(broker.bootstrap, topic) as transport:
        assert transport.send(json.dumps(EVENT), 30) == Delivered()
        # Delivered means acknowledged: the event is in the topic's log when send returns.
        [first] = topic_messages(broker.bootstrap, topic, 1)
        assert transport.send(json.dumps(child), 30) == Delivered()
    first, second = topic_messages(broker.bootstrap, topic, 2)
    assert json.loads(first.value()) == EVENT
    assert first.key() == b"run:planlineage/orders"
    assert second.key() == b"run:airflow/dag.task"


def test_a_configured_message_key_is_used_for_every_event(broker):
    topic = f"lineage-{uuid.uuid4().hex[:8]}"
    with kafka(broker.bootstrap, topic, messageKey="planlineage-node-1") as transport:
        assert transport.send(EVENT, 30) == Delivered()
    [message] = topic_messages(broker.bootstrap, topic, 1)
    assert message.key() == b"planlineage-node-1"


def test_from_openlineage_variables_through_the_settings(broker, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    topic = f"lineage-{uuid.uuid4().hex[:8]}"
    env = {
        "HOME": str(tmp_path),
        "PLANLINEAGE_HOME": str(tmp_path / "home"),
        "OPENLINEAGE__TRANSPORT__TYPE": "kafka",
        "OPENLINEAGE__TRANSPORT__TOPIC": topic,
        "OPENLINEAGE__TRANSPORT__CONFIG": json.dumps({"bootstrap.servers": broker.bootstrap}),
    }
    settings = Settings(environ=env)
    assert settings.configured()
    kind, options = settings.transport_options()
    with create_transport(kind, options) as transport:
        assert transport.send(json.dumps(EVENT), 30) == Delivered()
    assert len(topic_messages(broker.bootstrap, topic, 1)) == 1


def test_no_broker_is_retry_later_within_the_deadline():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    with kafka(f"127.0.0.1:{port}", "lineage") as transport:
        start = time.monotonic()
        outcome = transport.send(json.dumps(EVENT), 1.5)
        took = time.monotonic() - start
    assert isinstance(outcome, RetryLater) and not outcome.timed_out
    assert 1.0 < took < 3.0  # waited for an acknowledgement until the deadline, not beyond


def test_the_broker_going_down_is_retry_later_and_closing_never_waits(broker):
    """Last in the module: it stops the module's broker."""
    transport = kafka(broker.bootstrap, "lineage")
    assert transport.send(json.dumps(EVENT), 30) == Delivered()
    broker.process.kill()
    broker.process.wait(timeout=30)
    start = time.monotonic()
    outcome = transport.send(json.dumps(EVENT), 2)
    assert isinstance(outcome, RetryLater)
    assert time.monotonic() - start < 4.0
    start = time.monotonic()
    transport.close()  # what was not acknowledged stays in the outbox: closing never waits for it
    assert time.monotonic() - start < 2.0
