"""The lifecycle scenario against the real `apache/gravitino` image, where a Docker engine exists.

Skipped, with the reason, on machines without one (the `docker` client alone is not enough).
The container's port is published on 127.0.0.1 only.
"""

from __future__ import annotations

import os
import time

import httpx
import pytest
from emitter_fixtures import two_sink_lineage

from planlineage.emitter import outbox
from planlineage.lifecycle import delivery, runs
from planlineage.settings import Settings

IMAGE = os.environ.get("PLANLINEAGE_GRAVITINO_IMAGE", "apache/gravitino:1.3.0")


@pytest.fixture(scope="module")
def gravitino():
    docker = pytest.importorskip("docker", reason="the docker package is not installed")
    try:
        client = docker.from_env()
        client.ping()
    except Exception as error:  # no engine: DockerException, connection refused, missing socket
        pytest.skip(f"no Docker engine reachable ({type(error).__name__}); the real-Gravitino scenario needs one")
    container = client.containers.run(IMAGE, detach=True, remove=True, ports={"8090/tcp": ("127.0.0.1", None)})
    try:
        container.reload()
        port = container.attrs["NetworkSettings"]["Ports"]["8090/tcp"][0]["HostPort"]
        address = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{address}/api/version", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(2)
        else:
            pytest.fail(f"{IMAGE} did not answer on {address}/api/version within 180 s")
        yield address
    finally:
        container.stop(timeout=10)


def test_statement_set_scenario_is_accepted_by_real_gravitino(gravitino, store):
    settings = Settings(store, environ={"PLANLINEAGE_LINEAGE_ADDRESS": gravitino})
    run_id = runs.record_submission(store, "app-1", "orders", two_sink_lineage(), "INSERT ...", settings)
    assert run_id
    assert runs.record_state(store, "app-1", "RUNNING") == "RUNNING"
    assert runs.record_state(store, "app-1", "FINISHED") == "COMPLETE"
    report = delivery.flush(store, settings, deadline_seconds=30)
    assert report is not None and report.ok
    assert outbox.pending(store) == [] and outbox.parked(store) == []
