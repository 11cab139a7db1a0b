"""Transports against the Gravitino-compatible test server (loopback only)."""

from __future__ import annotations

import io
import json
import logging

import httpx
import pytest
from emitter_fixtures import single_sink_lineage
from gravitino_server import GravitinoTestServer

from planlineage.emitter import events as ev
from planlineage.emitter.transports import (
    TRANSPORTS,
    ConsoleTransport,
    Delivered,
    FileTransport,
    GravitinoTransport,
    HttpTransport,
    Rejected,
    RetryLater,
    create_transport,
)
from planlineage.emitter.transports.gravitino import ACCEPT
from planlineage.errors import TransportConfigError

TOKEN = "s3cr3t-t0ken-value-ABCDEFGH"
RUN = "01900000-0000-7000-8000-000000000002"


def payload(**changes):
    [event] = ev.build_events(single_sink_lineage(), job_name="j", job_namespace="ns", run_id=RUN, event_type="START")
    data = ev.to_dict(event)
    data.update(changes)
    return json.dumps(data)


def gravitino(srv, **options):
    return create_transport("gravitino", {"address": srv.address, **options})


def test_201_is_delivered_with_gravitino_headers(server):
    with gravitino(server) as transport:
        outcome = transport.send(payload())
    assert outcome == Delivered(201)
    [request] = server.requests
    assert request.path == "/api/lineage"
    assert request.headers["Content-Type"] == "application/json"
    assert request.headers["Accept"] == ACCEPT
    assert "Authorization" not in request.headers
    assert server.events[0]["run"]["runId"] == RUN


def test_bearer_token_is_sent_and_checked():
    with GravitinoTestServer(token=TOKEN) as srv:
        assert gravitino(srv, token=TOKEN).send(payload()) == Delivered(201)
        assert srv.requests[0].headers["Authorization"] == f"Bearer {TOKEN}"
        missing = gravitino(srv).send(payload())
        wrong = gravitino(srv, token="wrong-token-xyz").send(payload())
    for outcome in (missing, wrong):
        assert isinstance(outcome, Rejected) and outcome.status == 401
        assert "did not support" in outcome.reason  # the server's message field
    assert len(srv.events) == 1


def test_malformed_json_is_rejected_with_the_server_message(server):
    outcome = gravitino(server).send("{not json")
    assert isinstance(outcome, Rejected) and outcome.status == 400
    assert "Malformed json request" in outcome.reason
    assert server.events == []


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"eventTime": None}, "eventTime is required"),
        ({"producer": None}, "producer is required"),
        ({"schemaURL": None}, "schemaURL is required"),
        ({"run": {"facets": {}}}, "run.runId is required"),
        ({"job": {"namespace": " ", "name": "j"}}, "job.namespace is required"),
        ({"job": {"namespace": "ns", "name": ""}}, "job.name is required"),
        ({"inputs": [{"namespace": "kafka://b", "name": " "}]}, "inputs[0].name is required"),
        ({"outputs": [{"namespace": "", "name": "t"}]}, "outputs[0].namespace is required"),
        ({"run": {"runId": "not-a-uuid"}}, "Malformed json request"),
    ],
)
def test_invalid_events_are_rejected(server, changes, message):
    outcome = gravitino(server).send(payload(**changes))
    assert isinstance(outcome, Rejected) and outcome.status == 400
    assert outcome.reason.endswith(message)


def test_forbidden_dataset_is_rejected():
    with GravitinoTestServer(forbidden={("kafka://broker:9092", "orders")}) as srv:
        outcome = gravitino(srv).send(payload())
    assert isinstance(outcome, Rejected) and outcome.status == 403
    assert "not authorized" in outcome.reason


def test_406_mode_reproduces_13191_and_our_accept_works_around_it():
    with GravitinoTestServer(mode="406") as srv:
        plain = httpx.post(
            f"{srv.address}/api/lineage",
            content=payload(),
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )
        default = httpx.post(
            f"{srv.address}/api/lineage", content=payload(), headers={"Content-Type": "application/json"}
        )
        vnd_only = httpx.post(
            f"{srv.address}/api/lineage", content=payload(), headers={"Accept": "application/vnd.gravitino.v1+json"}
        )
        assert (plain.status_code, default.status_code, vnd_only.status_code) == (406, 406, 406)
        assert gravitino(srv).send(payload()) == Delivered(201)
        generic = create_transport("http", {"url": srv.address, "endpoint": "api/lineage"})
        outcome = generic.send(payload())  # a plain OpenLineage client: Accept application/json
        assert isinstance(outcome, Rejected) and outcome.status == 406
    assert len(srv.events) == 1


def test_unsupported_api_version_is_406_in_every_mode(server):
    response = httpx.post(
        f"{server.address}/api/lineage",
        content=payload(),
        headers={"Accept": "application/json, application/vnd.gravitino.v9+json"},
    )
    assert response.status_code == 406
    assert httpx.post(f"{server.address}/api/lineage", content=payload()).status_code == 201


def test_429_when_queue_is_full_is_retry_later():
    with GravitinoTestServer(queue_capacity=2) as srv:
        transport = gravitino(srv)
        assert transport.send(payload()) == Delivered(201)
        assert transport.send(payload()) == Delivered(201)  # now 100 % > 90 % full
        outcome = transport.send(payload())
        assert isinstance(outcome, RetryLater) and outcome.status == 429
        assert len(srv.events) == 2
        srv.drain()
        assert transport.send(payload()) == Delivered(201)


def test_500_is_retry_later_with_message():
    with GravitinoTestServer(mode="500") as srv:
        outcome = gravitino(srv).send(payload())
    assert isinstance(outcome, RetryLater) and outcome.status == 500
    assert "Dispatch lineage event failed" in outcome.reason


def test_timeout_is_retry_later_and_bounded():
    import time

    with GravitinoTestServer(delay=2.0) as srv:
        started = time.monotonic()
        outcome = gravitino(srv, timeout=0.3).send(payload())
        elapsed = time.monotonic() - started
        second = gravitino(srv).send(payload(), timeout=0.3)  # the caller's limit wins too
    assert isinstance(outcome, RetryLater) and "did not answer in time" in outcome.reason
    assert isinstance(second, RetryLater)
    assert elapsed < 1.5


def test_refused_connection_is_retry_later_then_delivered_when_up(server):
    transport = gravitino(server)
    server.down()
    outcome = transport.send(payload())
    assert isinstance(outcome, RetryLater) and outcome.status is None
    assert "unreachable" in outcome.reason
    server.up()
    assert transport.send(payload()) == Delivered(201)


def test_other_2xx_is_delivered_and_404_rejected(server):
    transport = create_transport("http", {"url": server.address, "endpoint": "/api/lineage/"})
    assert transport.send(payload()) == Delivered(201)
    wrong = create_transport("http", {"url": server.address})  # Marquez's api/v1/lineage
    outcome = wrong.send(payload())
    assert isinstance(outcome, Rejected) and outcome.status == 404
    assert server.requests[-1].path == "/api/v1/lineage"
    from planlineage.emitter.transports.http import classify

    assert [classify(s) for s in (200, 202, 204, 408, 429, 503, 301, 400, 406)] == [
        "delivered",
        "delivered",
        "delivered",
        "retry",
        "retry",
        "retry",
        "rejected",
        "rejected",
        "rejected",
    ]


def test_token_never_appears_in_outcomes_reprs_or_logs(caplog):
    caplog.set_level(logging.DEBUG)
    with GravitinoTestServer(token="another-token-000") as srv:
        transport = gravitino(srv, token=TOKEN)
        rejected = transport.send(payload())
        srv.down()
        refused = transport.send(payload())
    address_with_password = create_transport(
        "gravitino", {"address": f"http://admin:{TOKEN}@127.0.0.1:1", "token": TOKEN}
    )
    texts = [
        repr(rejected),
        repr(refused),
        repr(transport),
        repr(transport.config),
        str(transport.config),
        transport.describe(),
        repr(address_with_password.config),
        address_with_password.describe(),
        repr(address_with_password.send(payload(), timeout=0.5)),
        caplog.text,
    ]
    for text in texts:
        assert TOKEN not in text


def test_server_message_echoing_the_token_is_scrubbed():
    class EchoingServer(GravitinoTestServer):
        def _handle(self, h, body):
            return 400, {"code": 1001, "message": f"bad header {h.headers.get('Authorization')}"}, None

    with EchoingServer() as srv:
        outcome = gravitino(srv, token=TOKEN).send(payload())
    assert isinstance(outcome, Rejected)
    assert TOKEN not in outcome.reason and "******" in outcome.reason


def test_file_transport_appends_json_lines(tmp_path):
    path = tmp_path / "out" / "events.jsonl"
    transport = create_transport("file", {"path": str(path)})
    assert not path.exists()  # nothing until something is sent
    assert transport.send(payload()) == Delivered()
    assert transport.send(json.loads(payload())) == Delivered()
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[0])["run"]["runId"] == RUN


def test_file_transport_unwritable_is_retry_later(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    outcome = create_transport("file", {"path": str(blocker / "events.jsonl")}).send(payload())
    assert isinstance(outcome, RetryLater)


def test_console_transport_prints_one_line():
    stream = io.StringIO()
    transport = ConsoleTransport(ConsoleTransport.config_class(stream=stream))
    assert transport.send(payload()) == Delivered()
    assert json.loads(stream.getvalue())["job"]["name"] == "j"


def test_factory_by_name_and_config_errors(server):
    assert set(TRANSPORTS) == {"gravitino", "http", "file", "console"}
    assert isinstance(create_transport("gravitino", {"address": server.address}), GravitinoTransport)
    assert isinstance(create_transport("HTTP", {"url": server.address}), HttpTransport)
    assert isinstance(create_transport("file", {"file": "/tmp/x.jsonl"}), FileTransport)
    assert isinstance(create_transport("console"), ConsoleTransport)
    for kind, options in [
        ("kafka", {}),
        ("gravitino", {}),
        ("gravitino", {"address": "ftp://host"}),
        ("gravitino", {"address": server.address, "timeout": "soon"}),
        ("file", {}),
    ]:
        with pytest.raises(TransportConfigError):
            create_transport(kind, options)
