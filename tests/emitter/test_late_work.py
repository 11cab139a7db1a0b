"""A compile service that ends lets its lock go, then looks once more: work that came while it was
ending (a `state` that found the lock still held and so started no service) starts a new one;
events kept only because the backend is away, already tried, start nothing (no service loops on
a backend that is down)."""

from __future__ import annotations

import time

from composite_backends import queue_runs
from gravitino_server import GravitinoTestServer

from planlineage.clock import utc_now
from planlineage.emitter import outbox
from planlineage.emitter.transports import create_transport
from planlineage.lifecycle import delivery


def test_events_queued_after_the_last_pass_began_and_never_tried_are_work_that_arrived(store):
    before = utc_now()
    time.sleep(0.01)
    queue_runs(store, 1)
    assert delivery.arrived_since(store, before)  # queued while the service was ending: not seen


def test_events_kept_because_the_backend_is_away_start_nothing(store):
    queue_runs(store, 1)
    time.sleep(0.01)
    with GravitinoTestServer() as server:
        server.down()
        last_pass = utc_now()  # the ending service's last pass began after they were queued
        with create_transport("gravitino", {"address": server.address}) as transport:
            outbox.deliver_pending(store, transport, 5)
    assert store.rows("SELECT id FROM outbox"), "kept while the backend is away"
    assert not delivery.arrived_since(store, last_pass)  # the next command delivers them
