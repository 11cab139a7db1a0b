"""Issue #37's done-when, with the real broker: a composite of an HTTP backend that is down and
Kafka.  Kafka gets every event at once, the HTTP backend every event after it returns, each
exactly once at each backend, in per-run order (tests/kafka_broker.py: Apache Kafka's own
single-node broker on loopback; the HTTP backend a loopback Gravitino-compatible server)."""

from __future__ import annotations

import json
import time
import uuid

import kafka_broker
import pytest
from composite_backends import assert_each_once_in_run_order, http_child, queue_runs, run_of
from gravitino_server import GravitinoTestServer

from planlineage.emitter import events as ev
from planlineage.emitter import outbox
from planlineage.emitter.backends import open_backends
from planlineage.emitter.transport_kinds import GRAVITINO_ENDPOINT
from planlineage.lifecycle import delivery
from planlineage.settings import Settings

confluent_kafka = pytest.importorskip("confluent_kafka", reason="the kafka extra: pip install 'planlineage[kafka]'")


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with kafka_broker.kafka_broker(tmp_path_factory.mktemp("kafka")) as started:
        yield started


def topic_events(bootstrap: str, topic: str, at_least: int, settle: float = 2.0, timeout: float = 60.0) -> list:
    """Every event in ``topic``, in log order: read until ``at_least`` came and ``settle`` seconds
    brought nothing more (so a duplicate would be seen)."""
    consumer = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": uuid.uuid4().hex, "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topic])
    found: list = []
    end = time.monotonic() + timeout
    quiet_since = time.monotonic()
    try:
        while time.monotonic() < end:
            message = consumer.poll(0.25)
            if message is not None and message.error() is None:
                found.append(json.loads(message.value()))
                quiet_since = time.monotonic()
            elif len(found) >= at_least and time.monotonic() - quiet_since >= settle:
                break
    finally:
        consumer.close()
    return found


def assert_topic_has_each_once_in_run_order(events: list, queued: list) -> None:
    keys = [ev.event_key(e) for e in events]
    assert sorted(keys) == sorted(ev.event_key(p) for p in queued), "an event is missing or sent twice"
    position = {ev.event_key(p): i for i, p in enumerate(queued)}
    seen: dict[str, list[int]] = {}
    for event in events:
        seen.setdefault(run_of(event), []).append(position[ev.event_key(event)])
    assert all(order == sorted(order) for order in seen.values()), "a run's events came out of order"


def kafka_child(broker, topic: str) -> dict:
    return {
        "name": "kafka",
        "type": "kafka",
        "topic": topic,
        "config": {"bootstrap.servers": broker.bootstrap, "acks": "all"},
    }


def test_kafka_gets_every_event_at_once_and_the_http_backend_all_of_them_after_it_returns(broker, store):
    topic = f"lineage-{uuid.uuid4().hex[:8]}"
    queued = queue_runs(store, 3)
    with GravitinoTestServer() as marquez:
        marquez.down()
        backends = open_backends(
            "composite", {"transports": [http_child("marquez", marquez), kafka_child(broker, topic)]}
        )
        try:
            report = outbox.deliver_pending(store, backends, 60)
            assert report.backends["kafka"].delivered == len(queued) and report.backends["kafka"].remaining == 0
            assert report.backends["marquez"].stopped and report.backends["marquez"].remaining == len(queued)
            assert_topic_has_each_once_in_run_order(topic_events(broker.bootstrap, topic, len(queued)), queued)
            marquez.up()
            report = outbox.deliver_pending(store, backends, 60)
        finally:
            for backend in backends:
                backend.close()
        assert report.backends["marquez"].delivered == len(queued) and report.backends["kafka"].delivered == 0
        assert report.remaining == 0
        assert_each_once_in_run_order(marquez, queued)
    assert_topic_has_each_once_in_run_order(topic_events(broker.bootstrap, topic, len(queued)), queued)


def test_the_same_through_openlineages_own_configuration_and_the_lifecycles_delivery(
    broker, store, tmp_path, monkeypatch
):
    """The composite as a platform configures it for every producer (OPENLINEAGE__TRANSPORT__*),
    delivered by what ``flush`` and the compile service call."""
    monkeypatch.chdir(tmp_path)  # no ./openlineage.yml of the checkout
    monkeypatch.setenv("HOME", str(tmp_path))
    topic = f"lineage-{uuid.uuid4().hex[:8]}"
    with GravitinoTestServer() as marquez:
        marquez.down()
        children = {
            "marquez": {"type": "http", "url": marquez.address, "endpoint": GRAVITINO_ENDPOINT},
            "kafka": {"type": "kafka", "topic": topic, "config": {"bootstrap.servers": broker.bootstrap}},
        }
        monkeypatch.setenv("OPENLINEAGE__TRANSPORT__TYPE", "composite")
        monkeypatch.setenv("OPENLINEAGE__TRANSPORT__TRANSPORTS", json.dumps(children))
        settings = Settings(store)
        assert settings.configured()
        queued = queue_runs(store, 2)
        report = delivery.flush(store, settings, deadline_seconds=30)
        assert report is not None and report.backends["kafka"].remaining == 0
        assert report.backends["marquez"].remaining == len(queued)
        assert_topic_has_each_once_in_run_order(topic_events(broker.bootstrap, topic, len(queued)), queued)
        marquez.up()
        report = delivery.deliver_for(store, settings, 30)
        assert report is not None and report.remaining == 0
        assert_each_once_in_run_order(marquez, queued)
    assert_topic_has_each_once_in_run_order(topic_events(broker.bootstrap, topic, len(queued)), queued)
