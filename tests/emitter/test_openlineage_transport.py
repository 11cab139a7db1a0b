"""The adapter over openlineage-python's transport factory: the library's own transports (http
with its auth and compression, file, console) and a user's transport class named only in the
configuration, each answering the outbox's outcomes against real local servers (loopback)."""

from __future__ import annotations

import gzip
import json
import logging
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from planlineage.emitter.transports import Delivered, Rejected, RetryLater, create_transport
from planlineage.emitter.transports.openlineage import message_key
from planlineage.errors import TransportConfigError
from planlineage.settings import Settings

API_KEY = "FAKE-adapter-api-key-0123"
EVENT = {
    "eventType": "START",
    "eventTime": "2026-12-06T05:00:00Z",
    "run": {"runId": "01900000-0000-7000-8000-000000000002", "facets": {}},
    "job": {"namespace": "planlineage", "name": "orders"},
    "inputs": [],
    "outputs": [],
    "producer": "https://example.com/planlineage",
    "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
}


class Backend:
    """An OpenLineage HTTP backend on loopback whose answer the test sets: a status, or no
    answer at all (``hang``); it records each request's path, headers and (un-gzipped) body."""

    def __init__(self) -> None:
        self.status = 201
        self.hang = threading.Event()
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        backend = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                backend.requests.append((self.path, dict(self.headers), body))
                if backend.hang.is_set():
                    time.sleep(5)
                    return
                self.send_response(backend.status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def backend():
    served = Backend()
    yield served
    served.close()


def library_http(url: str, **options):
    return create_transport("http", {"factory": "openlineage", "url": url, **options})


def test_http_from_openlineage_config_delivers_with_api_key_and_gzip(backend):
    with library_http(
        backend.url, endpoint="api/v1/lineage", compression="gzip", auth={"type": "api_key", "apiKey": API_KEY}
    ) as transport:
        assert type(transport).__name__ == "OpenLineageTransport"  # the library's, not planlineage's own
        assert transport.send(json.dumps(EVENT), 5) == Delivered()
    [(path, headers, body)] = backend.requests
    assert path == "/api/v1/lineage"
    assert headers["Authorization"] == f"Bearer {API_KEY}"
    assert headers["Content-Encoding"] == "gzip"
    assert json.loads(body)["run"]["runId"] == EVENT["run"]["runId"]


@pytest.mark.parametrize(
    "status, outcome",
    [
        (200, Delivered()),
        (204, Delivered()),
        (400, Rejected),
        (401, Rejected),
        (403, Rejected),
        (404, Rejected),
        (408, RetryLater),
        (429, RetryLater),
        (500, RetryLater),
        (503, RetryLater),
    ],
)
def test_http_statuses_classify_as_planlineages_http_transport_does(backend, status, outcome):
    backend.status = status
    with library_http(backend.url, auth={"type": "api_key", "apiKey": API_KEY}) as transport:
        got = transport.send(json.dumps(EVENT), 5)
    if isinstance(outcome, Delivered):
        assert got == outcome
    else:
        assert isinstance(got, outcome) and got.status == status
        assert API_KEY not in got.reason
    assert len(backend.requests) == 1  # one attempt: the outbox retries, not the library


def test_refused_connection_is_retry_later_not_a_possible_repeat():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again below: nothing listens there
    with library_http(f"http://127.0.0.1:{port}") as transport:
        got = transport.send(json.dumps(EVENT), 5)
    assert isinstance(got, RetryLater) and not got.timed_out and got.status is None


def test_a_hanging_server_is_retry_later_within_the_sends_deadline(backend):
    backend.hang.set()
    with library_http(backend.url, timeout=30) as transport:  # the library's own timeout is far longer
        start = time.monotonic()
        got = transport.send(json.dumps(EVENT), 0.5)
        took = time.monotonic() - start
        assert isinstance(got, RetryLater) and got.timed_out
        assert took < 1.5
        # The next send waits for the one still running within its own deadline, never beside it;
        # its event never left (not a possible repeat).
        start = time.monotonic()
        again = transport.send(json.dumps(EVENT), 0.3)
        assert isinstance(again, RetryLater) and not again.timed_out and time.monotonic() - start < 1.0
    assert len(backend.requests) == 1


CUSTOM = """
from openlineage.client.transport.transport import Config, Transport


class RecordingConfig(Config):
    def __init__(self, folder, fail=False):
        self.folder, self.fail = folder, fail

    @classmethod
    def from_dict(cls, params):
        return cls(params["folder"], params.get("fail", False))


class RecordingTransport(Transport):
    kind = "recording"
    config_class = RecordingConfig

    def __init__(self, config):
        self.config = config

    def emit(self, event):
        if self.config.fail:
            raise RuntimeError("the recording backend is down")
        import json, os
        with open(os.path.join(self.config.folder, "events.jsonl"), "a") as out:
            out.write(json.dumps(event) + "\\n")
"""


@pytest.fixture
def custom_module(tmp_path, monkeypatch):
    package = tmp_path / "site" / "my_lineage"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "recording.py").write_text(CUSTOM)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    yield "my_lineage.recording.RecordingTransport"
    sys.modules.pop("my_lineage.recording", None)
    sys.modules.pop("my_lineage", None)


def test_a_transport_class_registered_only_through_configuration(custom_module, tmp_path, monkeypatch):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    (cwd / "openlineage.yml").write_text(f"transport:\n  type: {custom_module}\n  folder: {tmp_path}\n")
    settings = Settings(environ={"HOME": str(tmp_path), "PLANLINEAGE_HOME": str(tmp_path / "home")})
    assert settings.configured()
    kind, options = settings.transport_options()
    assert kind == custom_module
    with create_transport(kind, options) as transport:
        assert transport.send(json.dumps(EVENT), 5) == Delivered()
    assert json.loads((tmp_path / "events.jsonl").read_text())["job"]["name"] == "orders"
    with create_transport(kind, {**options, "fail": True}) as failing:
        got = failing.send(json.dumps(EVENT), 5)
    assert isinstance(got, RetryLater) and "the recording backend is down" in got.reason


def test_file_and_console_of_the_library(tmp_path, caplog):
    path = tmp_path / "out" / "events.jsonl"
    path.parent.mkdir()
    with create_transport("file", {"factory": "openlineage", "log_file_path": str(path), "append": True}) as file:
        assert file.send(json.dumps(EVENT), 5) == Delivered()
        assert file.send(EVENT, 5) == Delivered()
    assert [json.loads(line)["eventType"] for line in path.read_text().splitlines()] == ["START", "START"]
    with (
        caplog.at_level(logging.INFO, logger="openlineage"),
        create_transport("console", {"factory": "openlineage"}) as console,
    ):
        assert console.send(json.dumps(EVENT), 5) == Delivered()
    assert any('"runId": "01900000-0000-7000-8000-000000000002"' in r.getMessage() for r in caplog.records)


def test_what_cannot_be_built_says_why(monkeypatch):
    with pytest.raises(TransportConfigError, match="openlineage-python builds .*kafka"):
        create_transport("kafkaa", {})
    with pytest.raises(TransportConfigError, match="cannot be imported"):
        create_transport("no_such_package.Transport", {})
    with pytest.raises(TransportConfigError, match="url"):
        create_transport("http", {"factory": "openlineage"})
    monkeypatch.setitem(sys.modules, "confluent_kafka", None)  # as if the extra were not installed
    with pytest.raises(TransportConfigError, match=r"pip install 'planlineage\[kafka\]'"):
        create_transport("kafka", {"topic": "t", "config": {"bootstrap.servers": "127.0.0.1:9"}})


def test_nothing_is_built_while_openlineage_is_disabled(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENLINEAGE_DISABLED", "true")
    with pytest.raises(TransportConfigError, match="OPENLINEAGE_DISABLED"):
        create_transport("console", {"factory": "openlineage"})


def test_secrets_stay_out_of_reasons_reprs_and_logs(backend, caplog):
    backend.status = 401
    url = f"http://user:{API_KEY}@127.0.0.1:{backend.server.server_address[1]}"
    with caplog.at_level(logging.DEBUG):
        with library_http(url, auth={"type": "api_key", "apiKey": API_KEY}) as transport:
            got = transport.send(json.dumps(EVENT), 5)
            shown = f"{got!r} {transport.describe()} {transport.config!r}"
        with pytest.raises(TransportConfigError) as error:
            create_transport("http", {"factory": "openlineage", "url": url, "compression": f"zip-{API_KEY}"})
    assert isinstance(got, Rejected) and got.status == 401
    assert API_KEY not in shown + str(error.value)
    assert API_KEY not in "\n".join(r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    "event, key",
    [
        (EVENT, "run:planlineage/orders"),
        (
            {**EVENT, "run": {"runId": "r", "facets": {"parent": {"job": {"namespace": "p", "name": "parent"}}}}},
            "run:p/parent",
        ),
        (
            {
                **EVENT,
                "run": {
                    "runId": "r",
                    "facets": {
                        "parent": {
                            "job": {"namespace": "p", "name": "parent"},
                            "root": {"job": {"namespace": "r", "name": "root"}},
                        }
                    },
                },
            },
            "run:r/root",
        ),
        ({"dataset": {"namespace": "kafka://b:9092", "name": "orders"}}, "dataset:kafka://b:9092/orders"),
        ({"job": {"namespace": "n", "name": "j"}}, "job:n/j"),
    ],
)
def test_the_kafka_message_key_is_the_librarys(event, key):
    assert message_key(event) == key
