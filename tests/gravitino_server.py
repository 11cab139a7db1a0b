"""A Gravitino-compatible lineage endpoint for tests, on 127.0.0.1 with an ephemeral port.

Behaviour follows apache/gravitino (``lineage/`` module: ``LineageOperations``,
``LineageEventValidator``; ``server/.../VersioningFilter``):

* ``POST /api/lineage`` with one RunEvent → ``201`` with an empty body (the event is kept, in order).
* Malformed JSON (or a body Jackson could not bind: not an object, a runId that is not a UUID, an
  eventTime that is not a date-time) → ``400`` ``{"code":1001,"type":"IllegalArgumentException",
  "message":"Malformed json request",…}``.
* Failed validation (1.3.1+/#12850): ``eventTime``, ``producer``, ``schemaURL``, ``run.runId``,
  non-blank ``job.namespace``/``job.name``, non-blank ``namespace``/``name`` on every input and
  output → ``400`` with the validator's message (``"job.name is required"``…).
* ``token=`` set: a missing or wrong ``Authorization: Bearer`` → ``401``
  ``{"code":1011,"type":"UnauthorizedException",…}``.
* ``forbidden=`` datasets ``(namespace, name)`` → ``403`` ``{"code":1008,"type":"ForbiddenException",…}``.
* ``mode="406"`` reproduces issue #13191 (main after #12384): ``VersioningFilter`` replaces an
  ``Accept`` that names no ``application/vnd.gravitino.vN+json`` with
  ``application/vnd.gravitino.v1+json`` and Jersey now sees it; the resource only produces
  ``application/json`` → ``406`` unless the client's ``Accept`` names v1 *and* still accepts
  ``application/json``.  In every mode an unsupported ``vN`` → ``406`` ("Unsupported version"), and
  an ``Accept`` that excludes ``application/json`` → ``406`` (Jersey's own negotiation).
* ``mode="500"`` → ``500`` ``{"code":1002,"type":"RuntimeException",…}`` (dispatch failure).
* ``queue_capacity=n``: accepted events wait in a bounded queue until :meth:`drain`; once it is
  more than 90 % full → ``429`` with an empty body.
* Fault policies: ``refuse_runs`` (runIds, parent or own) → ``500`` for every event of those runs
  only; ``hang_requests=n`` + ``hang_seconds``: the next n requests are held that long before they
  are handled (a client that gave up may resend: the server then records both); ``die_after=n``:
  the server stops listening right after accepting its n-th event (dies mid-run).
* :meth:`down` closes the listening socket (connections are refused); :meth:`up` listens again
  on the same port.

Also here: :class:`MarquezGraph`, the graph a Marquez-like backend rebuilds from events.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import networkx as nx

LINEAGE_PATH = "/api/lineage"
SUPPORTED_API_VERSIONS = {1}
_VERSIONED = re.compile(r"application/vnd\.gravitino\.v(\d+)\+json")
MODES = ("normal", "406", "500")


def gravitino_error(code: int, type_: str, message: str) -> dict[str, Any]:
    return {"code": code, "type": type_, "message": message, "stack": []}


def _accepts_json(accept: str | None) -> bool:
    """Jersey's negotiation against ``@Produces("application/json")``."""
    if accept is None or not accept.strip():
        return True
    for item in accept.split(","):
        media, _, params = item.strip().partition(";")
        media = media.strip().lower()
        quality = re.search(r"q\s*=\s*([0-9.]+)", params)
        if quality and float(quality.group(1)) == 0:
            continue
        if media in ("application/json", "application/*", "*/*"):
            return True
    return False


def negotiate(accept: str | None, mode: str) -> str | None:
    """What VersioningFilter + Jersey answer for this ``Accept``: None (passes) or a 406 reason."""
    match = _VERSIONED.search(accept or "")
    if match:  # the filter lets the request through unchanged (or refuses the version)
        if int(match.group(1)) not in SUPPORTED_API_VERSIONS:
            return "Unsupported version"
        return None if _accepts_json(accept) else "Not Acceptable"
    # No versioned media type: the filter rewrites Accept to the latest version.  Release lines
    # (1.0-1.3) do not let Jersey see the rewrite; main after #12384 does (#13191).
    effective = "application/vnd.gravitino.v1+json" if mode == "406" else accept
    return None if _accepts_json(effective) else "Not Acceptable"


def _is_date_time(value: Any) -> bool:
    if not isinstance(value, str) or "t" not in value.lower():
        return False
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def validate(event: Any) -> tuple[str, str] | None:
    """``("malformed"|"invalid", message)`` for a body Gravitino refuses, else None."""
    if not isinstance(event, dict):
        return "malformed", "Malformed json request"
    run = event.get("run")
    run_id = run.get("runId") if isinstance(run, dict) else None
    if run_id is not None:
        try:
            uuid.UUID(str(run_id))
        except ValueError:
            return "malformed", "Malformed json request"
    if event.get("eventTime") is not None and not _is_date_time(event.get("eventTime")):
        return "malformed", "Malformed json request"
    if event.get("eventTime") is None:
        return "invalid", "eventTime is required"
    if event.get("producer") is None:
        return "invalid", "producer is required"
    if event.get("schemaURL") is None:
        return "invalid", "schemaURL is required"
    if not isinstance(run, dict):
        return "invalid", "run is required"
    if run_id is None:
        return "invalid", "run.runId is required"
    job = event.get("job")
    if not isinstance(job, dict):
        return "invalid", "job is required"
    if not str(job.get("namespace") or "").strip():
        return "invalid", "job.namespace is required"
    if not str(job.get("name") or "").strip():
        return "invalid", "job.name is required"
    for field_name in ("inputs", "outputs"):
        datasets = event.get(field_name)
        if datasets is None:
            continue
        if not isinstance(datasets, list):
            return "malformed", "Malformed json request"
        for index, dataset in enumerate(datasets):
            if not isinstance(dataset, dict):
                return "invalid", f"{field_name}[{index}] cannot be null"
            if not str(dataset.get("namespace") or "").strip():
                return "invalid", f"{field_name}[{index}].namespace is required"
            if not str(dataset.get("name") or "").strip():
                return "invalid", f"{field_name}[{index}].name is required"
    return None


@dataclass
class RequestRecord:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    status: int


def _reply(status: int, body: dict | str | None = None, headers: dict | None = None):
    return status, body, headers


class _Handler(BaseHTTPRequestHandler):
    server_version = "GravitinoTestServer/1.0"
    owner: GravitinoTestServer

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def _answer(self, status: int, body: dict | str | None = None, headers: dict | None = None):
        data = b""
        content_type = None
        if isinstance(body, dict):
            data, content_type = json.dumps(body).encode(), "application/json"
        elif isinstance(body, str):
            data, content_type = body.encode(), "text/plain"
        try:
            self.send_response(status)
            if content_type:
                self.send_header("Content-Type", content_type)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if data:
                self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
        return status

    def do_GET(self) -> None:
        self.owner._record(self, b"", 405)
        self._answer(405, "Method Not Allowed")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        status, answer, headers = self.owner._handle(self, body)
        self.owner._record(self, body, status)  # recorded before the client can see the answer
        self._answer(status, answer, headers)


class GravitinoTestServer:
    def __init__(
        self,
        *,
        token: str | None = None,
        forbidden: Iterable[tuple[str, str]] = (),
        mode: str = "normal",
        queue_capacity: int | None = None,
        delay: float = 0.0,
        refuse_runs: Iterable[str] = (),
        hang_requests: int = 0,
        hang_seconds: float = 0.0,
        die_after: int | None = None,
        keep_alive: bool = False,
    ) -> None:
        """``keep_alive``: answer over HTTP/1.1 persistent connections, as Gravitino's Jetty does
        (for benchmarks; the tests keep HTTP/1.0, so :meth:`down` also ends every connection)."""
        self.keep_alive = keep_alive
        self.refuse_runs = set(refuse_runs)
        self.hang_requests = hang_requests
        self.hang_seconds = hang_seconds
        self.die_after = die_after
        self.token = token
        self.forbidden = set(forbidden)
        self.mode = mode
        self.queue_capacity = queue_capacity
        self.delay = delay
        self.events: list[dict[str, Any]] = []
        self.queue: list[dict[str, Any]] = []
        self.requests: list[RequestRecord] = []
        self.port = 0
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- life --------------------------------------------------------------------------------

    @property
    def address(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    url = address

    def _listen(self) -> None:
        handler = type(
            "Handler", (_Handler,), {"owner": self, "protocol_version": "HTTP/1.1" if self.keep_alive else "HTTP/1.0"}
        )
        httpd = ThreadingHTTPServer(("127.0.0.1", self.port), handler)
        httpd.daemon_threads = True
        self.port = httpd.server_address[1]
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
        self._thread.daemon = True
        self._thread.start()

    def start(self) -> GravitinoTestServer:
        if self._httpd is None:
            self._listen()
        return self

    def down(self) -> None:
        """Stop listening: new connections are refused until :meth:`up`."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            if self._thread is not None:
                self._thread.join(5)
            self._httpd = None
            self._thread = None

    def up(self) -> None:
        """Listen again on the same port."""
        if self._httpd is None:
            for _ in range(50):
                try:
                    self._listen()
                    return
                except OSError:
                    time.sleep(0.05)
            self._listen()

    @property
    def is_up(self) -> bool:
        return self._httpd is not None

    stop = down

    def __enter__(self) -> GravitinoTestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- behaviour ---------------------------------------------------------------------------

    def set_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(mode)
        self.mode = mode

    def drain(self) -> int:
        with self._lock:
            count = len(self.queue)
            self.queue.clear()
            return count

    def _record(self, handler: _Handler, body: bytes, status: int) -> None:
        with self._lock:
            self.requests.append(
                RequestRecord(handler.command, handler.path, dict(handler.headers.items()), body, status)
            )

    def _handle(self, h: _Handler, body: bytes) -> tuple[int, dict | str | None, dict | None]:
        if self.delay:
            time.sleep(self.delay)
        with self._lock:
            hang = self.hang_requests > 0
            self.hang_requests -= 1 if hang else 0
        if hang:
            time.sleep(self.hang_seconds)
        path = h.path.split("?", 1)[0].rstrip("/")
        if path != LINEAGE_PATH:
            return _reply(404, gravitino_error(1003, "NotFoundException", f"{path} not found"))
        if self.token is not None and h.headers.get("Authorization") != f"Bearer {self.token}":
            return _reply(
                401,
                gravitino_error(1011, "UnauthorizedException", "The provided credentials did not support"),
                {"WWW-Authenticate": "Bearer"},
            )
        refusal = negotiate(h.headers.get("Accept"), self.mode)
        if refusal:
            return _reply(406, refusal)
        try:
            event = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            return _reply(400, gravitino_error(1001, "IllegalArgumentException", "Malformed json request"))
        problem = validate(event)
        if problem:
            return _reply(400, gravitino_error(1001, "IllegalArgumentException", problem[1]))
        for dataset in (event.get("inputs") or []) + (event.get("outputs") or []):
            key = (dataset["namespace"], dataset["name"])
            if key in self.forbidden:
                return _reply(
                    403,
                    gravitino_error(
                        1008,
                        "ForbiddenException",
                        f"User 'anonymous' is not authorized to access {key[0]}/{key[1]}",
                    ),
                )
        run = event.get("run") or {}
        parent = ((run.get("facets") or {}).get("parent") or {}).get("run", {}).get("runId")
        if self.mode == "500" or {run.get("runId"), parent} & self.refuse_runs:
            return _reply(500, gravitino_error(1002, "RuntimeException", "Dispatch lineage event failed"))
        with self._lock:
            if self.queue_capacity is not None and len(self.queue) > 0.9 * self.queue_capacity:
                return _reply(429)
            self.queue.append(event)
            self.events.append(event)
            dying = self.die_after is not None and len(self.events) >= self.die_after
        if dying:
            self.die_after = None
            threading.Thread(target=self.down, daemon=True).start()
        return _reply(201)

    # -- inspection --------------------------------------------------------------------------

    def keys(self) -> Counter:
        """How often each ``(runId, job name, eventType)`` was accepted."""
        with self._lock:
            return Counter((e["run"]["runId"], e["job"]["name"], e["eventType"]) for e in self.events)

    def statuses(self) -> list[int]:
        with self._lock:
            return [r.status for r in self.requests]


# -- the graph a Marquez-like backend rebuilds ------------------------------------------------

TERMINAL = {"COMPLETE", "FAIL", "ABORT"}


def _processing_type(event: dict[str, Any]) -> str | None:
    facet = ((event.get("job") or {}).get("facets") or {}).get("jobType") or {}
    return facet.get("processingType")


@dataclass
class MarquezGraph:
    """Datasets merged by ``(namespace, name)``; the current edges of each job.

    Marquez's rules (gravitino.md): a batch job's edges change only on COMPLETE/FAIL/ABORT; a
    STREAMING job's also at START (and RUNNING); a terminal event without inputs and outputs
    wipes the job's edges unless it carries the STREAMING facet.
    """

    datasets: set[tuple[str, str]] = field(default_factory=set)
    jobs: dict[tuple[str, str], dict[str, set]] = field(default_factory=dict)

    def apply(self, event: dict[str, Any]) -> None:
        inputs = {(d["namespace"], d["name"]) for d in event.get("inputs") or []}
        outputs = {(d["namespace"], d["name"]) for d in event.get("outputs") or []}
        self.datasets |= inputs | outputs
        job = (event["job"]["namespace"], event["job"]["name"])
        edges = self.jobs.setdefault(job, {"inputs": set(), "outputs": set()})
        kind = event.get("eventType")
        streaming = _processing_type(event) == "STREAMING"
        if kind in TERMINAL:
            if not inputs and not outputs and streaming:
                return
            edges["inputs"], edges["outputs"] = inputs, outputs
        elif streaming and kind in ("START", "RUNNING") and (inputs or outputs):
            edges["inputs"], edges["outputs"] = inputs, outputs

    def apply_all(self, events: Iterable[dict[str, Any]]) -> MarquezGraph:
        for event in events:
            self.apply(event)
        return self

    def graph(self) -> nx.DiGraph:
        g = nx.DiGraph()
        for ns, name in self.datasets:
            g.add_node(("dataset", ns, name))
        for (ns, name), edges in self.jobs.items():
            g.add_node(("job", ns, name))
            for d in edges["inputs"]:
                g.add_edge(("dataset", *d), ("job", ns, name))
            for d in edges["outputs"]:
                g.add_edge(("job", ns, name), ("dataset", *d))
        return g

    def edges(self) -> set[tuple[tuple[str, str], str, tuple[str, str]]]:
        """``(input dataset, job name, output dataset)`` triples currently drawn."""
        return {(i, name, o) for (_, name), e in self.jobs.items() for i in e["inputs"] for o in e["outputs"]}
