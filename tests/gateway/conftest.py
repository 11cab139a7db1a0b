"""A loopback server answering like the Flink SQL Gateway's REST API, and the proxy in front of it.

The answers have the shapes the real gateways gave (Flink 2.3.0 and 1.20, recorded in
``real_answers.json``): session and operation handles, ``Connection: keep-alive`` on every answer,
an INSERT's result with ``jobID`` and the one-row ``job id`` result, no ``jobID`` key for a
statement that starts no job, a statement the gateway cannot run accepted (an operation handle)
and failing at its first fetch (500).  Its v1 answers have the older shape of Flink 1.16, without
``jobID`` (1.20 and 2.3 answer v1 as v2), so that reading is tested too.  Plus a few paths only
tests call: a chunked answer sent in pieces with pauses, an echo of any body, a large answer,
and a slow one.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from planlineage.gateway.proxy import GatewayProxy, Upstream
from planlineage.gateway.recorder import Recorder
from planlineage.store.sqlite import Store

FIXED_DATE = "Sun, 06 Dec 2026 08:00:00 GMT"  # the same Date on every answer: answers compare byte for byte
JOB_STARTING = ("INSERT", "EXECUTE", "BEGIN STATEMENT SET")


def _job_column(value: str) -> dict:
    return {
        "columns": [
            {
                "name": "job id",
                "logicalType": {"type": "VARCHAR", "nullable": True, "length": 2147483647},
                "comment": None,
            }
        ],
        "rowFormat": "JSON",
        "data": [{"kind": "INSERT", "fields": [value]}],
    }


class FakeSqlGateway:
    """Answers the SQL Gateway's calls; records what it received (``calls``: method, path, body)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, bytes]] = []
        self.jobs: dict[str, str] = {}  # operation handle -> job id
        self.failing: set[str] = set()  # operations whose fetch fails (a statement the gateway cannot run)
        self.not_ready: set[str] = set()  # operations whose next fetch answers NOT_READY
        self.version = "2.3.0"
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args) -> None:
                pass

            def date_time_string(self, timestamp=None) -> str:
                return FIXED_DATE

            def _body(self) -> bytes:
                if "chunked" in (self.headers.get("Transfer-Encoding") or ""):
                    data = b""
                    while True:
                        size = int(self.rfile.readline().split(b";")[0], 16)
                        if not size:
                            self.rfile.readline()
                            return data
                        data += self.rfile.read(size)
                        self.rfile.readline()
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _json(self, status: int, value, extra=()) -> None:
                body = json.dumps(value).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=UTF-8")
                self.send_header("Access-Control-Allow-Origin", "*")
                self.send_header("Connection", "keep-alive")  # as the real gateway (Netty) sends it
                for name, content in extra:
                    self.send_header(name, content)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def _any(self) -> None:
                body = self._body()
                owner.calls.append((self.command, self.path, body))
                owner.answer(self, body)

            do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = do_HEAD = do_OPTIONS = _any

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # -- the answers ---------------------------------------------------------------------------

    def answer(self, handler, body: bytes) -> None:
        path, _, query = handler.path.partition("?")
        parts = [p for p in path.split("/") if p]
        version = parts[0] if parts and parts[0][:1] == "v" and parts[0][1:].isdigit() else None
        rest = parts[1:] if version else parts
        if rest == ["api_versions"]:
            return handler._json(200, {"versions": ["V1", "V2", "V3", "V4"]})
        if rest == ["info"]:
            return handler._json(200, {"productName": "Apache Flink", "version": self.version})
        if rest == ["sessions"] and handler.command == "POST":
            return handler._json(200, {"sessionHandle": str(uuid.uuid4())})
        if len(rest) == 2 and rest[0] == "sessions" and handler.command == "DELETE":
            return handler._json(200, {"status": "CLOSED"})
        if len(rest) == 3 and rest[2] == "heartbeat":
            return handler._json(200, {})
        if len(rest) == 3 and rest[2] == "configure-session":
            return handler._json(200, {})
        if len(rest) == 3 and rest[2] in ("statements", "scripts"):
            try:
                statement = json.loads(body).get("statement" if rest[2] == "statements" else "script", "")
            except (ValueError, AttributeError):
                return handler._json(
                    400, {"errors": ["Request did not match expected format ExecuteStatementRequestBody."]}
                )
            operation = str(uuid.uuid4())
            if statement.strip().upper().startswith("BAD"):
                self.failing.add(operation)  # accepted; its fetch fails, as the real gateway's does
            if statement.strip().upper().startswith(JOB_STARTING):
                self.jobs[operation] = uuid.uuid4().hex
            return handler._json(200, {"operationHandle": operation})
        if len(rest) == 6 and rest[2] == "operations" and rest[4] == "result":
            return self._result(handler, version, rest[1], rest[3], int(rest[5]))
        if len(rest) == 5 and rest[2] == "operations" and rest[4] == "status":
            return handler._json(200, {"status": "ERROR" if rest[3] in self.failing else "FINISHED"})
        if rest == ["echo"]:
            extra = [("Content-Type", handler.headers.get("Content-Type") or "application/octet-stream")]
            handler.send_response(200)
            for name, value in extra:
                handler.send_header(name, value)
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body)
            return None
        if rest == ["stream"]:  # chunked, in pieces with pauses between them
            handler.send_response(200)
            handler.send_header("Content-Type", "text/plain")
            handler.send_header("Transfer-Encoding", "chunked")
            handler.end_headers()
            for index in range(5):
                piece = f"piece {index}\n".encode()
                handler.wfile.write(b"%X\r\n%s\r\n" % (len(piece), piece))
                handler.wfile.flush()
                time.sleep(0.2)
            handler.wfile.write(b"0\r\n\r\n")
            return None
        if rest == ["broken"]:  # breaks off in the middle of its answer
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", "100")
            handler.end_headers()
            handler.wfile.write(b'{"cut": "here')
            handler.close_connection = True
            return None
        if rest == ["big"]:
            return handler._json(200, {"data": "x" * (3 * 1024 * 1024)})
        if rest == ["slow"]:
            time.sleep(float(query.split("=")[1]) if query else 0.5)
            return handler._json(200, {"slow": True})
        return handler._json(404, {"errors": ["Not found: " + path]})

    def _result(self, handler, version, session: str, operation: str, token: int) -> None:
        job = self.jobs.get(operation)
        prefix = f"/{version}" if version else ""
        if operation in self.not_ready:
            self.not_ready.discard(operation)
            value = {"resultType": "NOT_READY", "isQueryResult": False, "resultKind": "SUCCESS"}
            value.update({"results": {"columns": [], "data": []}, "nextResultUri": handler.path})
            return handler._json(200, value)
        if operation in self.failing:
            errors = [
                "Internal server error.",
                "<Exception on server side:\nSqlGatewayException: Failed to fetchResults.",
            ]
            return handler._json(500, {"errors": errors})
        if token > 0 or job is None:
            results = {"columns": [{"name": "result", "logicalType": {"type": "VARCHAR"}, "comment": None}]}
            results.update({"rowFormat": "JSON", "data": [{"kind": "INSERT", "fields": ["OK"]}] if token == 0 else []})
            value = {"resultType": "EOS" if token else "PAYLOAD", "isQueryResult": False}  # no jobID key, as real
            value.update({"resultKind": "SUCCESS", "results": results, "nextResultUri": None})
        else:
            value = {
                "resultType": "PAYLOAD",
                "isQueryResult": False,
                "jobID": job,
                "resultKind": "SUCCESS_WITH_CONTENT",
            }
            next_uri = f"{prefix}/sessions/{session}/operations/{operation}/result/1"
            value.update({"results": _job_column(job), "nextResultUri": next_uri})
        if version == "v1":  # v1 has neither jobID nor the row format (Flink 1.16's FetchResultsResponseBody)
            value = {"results": dict(value["results"]), "resultType": value["resultType"]}
            value["results"].pop("rowFormat", None)
            value["nextResultUri"] = None if token else f"{prefix}/sessions/{session}/operations/{operation}/result/1"
        return handler._json(200, value)


class GatewayClient:
    """A raw-REST client of the gateway (or of the proxy in front of it)."""

    def __init__(self, url: str, version: str = "v3"):
        host, port = url.removeprefix("http://").split(":")
        self.conn = http.client.HTTPConnection(host, int(port), timeout=10)
        self.prefix = f"/{version}" if version else ""

    def call(self, method: str, path: str, value=None) -> tuple[int, dict]:
        body = json.dumps(value).encode() if value is not None else None
        headers = {"Content-Type": "application/json"} if body is not None else {}
        self.conn.request(method, self.prefix + path, body=body, headers=headers)
        response = self.conn.getresponse()
        data = response.read()
        return response.status, json.loads(data) if data else {}

    def open(self, properties: dict | None = None) -> str:
        status, answer = self.call("POST", "/sessions", {"sessionName": "t", "properties": properties or {}})
        assert status == 200
        return answer["sessionHandle"]

    def run(self, session: str, statement: str) -> str:
        status, answer = self.call("POST", f"/sessions/{session}/statements", {"statement": statement})
        assert status == 200, answer
        return answer["operationHandle"]

    def fetch(self, session: str, operation: str, token: int = 0) -> dict:
        status, answer = self.call("GET", f"/sessions/{session}/operations/{operation}/result/{token}")
        assert status == 200
        return answer

    def close(self) -> None:
        self.conn.close()


@pytest.fixture
def upstream():
    gateway = FakeSqlGateway()
    yield gateway
    gateway.close()


class Running:
    """A proxy serving on a thread; stopped (and its recorder drained) by :meth:`stop`."""

    def __init__(self, gateway_url: str, recorder: Recorder | None = None):
        self.upstream = Upstream(gateway_url)
        self.recorder = recorder
        self.server = GatewayProxy(("127.0.0.1", 0), self.upstream, recorder)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        self.url = self.server.url

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.upstream.close()
        if self.recorder is not None:
            self.recorder.close(10)


@pytest.fixture
def plain_proxy(upstream):
    """The proxy with lineage off: no recorder."""
    running = Running(upstream.url)
    yield running
    running.stop()


@pytest.fixture
def store(tmp_path):
    return Store(tmp_path / "state.db")


@pytest.fixture
def recording_proxy(upstream, store):
    """The proxy with a recorder on a SQLite store; ``jobs`` is what it handed over."""
    jobs: list = []
    upstream_of_recorder = Upstream(upstream.url)
    recorder = Recorder(upstream_of_recorder.url, store, jobs.append, upstream_of_recorder.ask_version)
    running = Running(upstream.url, recorder)
    running.jobs = jobs  # type: ignore[attr-defined]
    yield running
    running.stop()


@pytest.fixture
def client_of():
    """``client_of(url, version)``: a raw-REST client, closed after the test."""
    made: list[GatewayClient] = []

    def make(url: str, version: str = "v3") -> GatewayClient:
        made.append(GatewayClient(url, version))
        return made[-1]

    yield make
    for client in made:
        client.close()


@pytest.fixture
def start_proxy():
    """``start_proxy(gateway_url, recorder=None)``: a proxy serving on a thread, stopped after the test."""
    started: list[Running] = []

    def start(gateway_url: str, recorder: Recorder | None = None) -> Running:
        started.append(Running(gateway_url, recorder))
        return started[-1]

    yield start
    for running in started:
        running.stop()
