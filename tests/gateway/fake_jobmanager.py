"""A loopback server answering like Flink's JobManager REST API (``/jobs/overview``, ``/jobs/{id}``,
``/jobs/{id}/exceptions``; 404 for a job it does not know, as Flink does) and like the SQL
Gateway's ``GET /v1/sessions/{handle}`` (the session's merged configuration), for the lineage
side's tests.  Shapes as /work/shared/sql-gateway.md and Flink's handlers give them.

``down()`` stops answering (the port refuses connections), ``up()`` answers again on the same
port: a JobManager that went away and came back.  Loaded by the tests with :func:`load`
(tests/gateway is not an import root: its name would shadow the product's ``gateway`` folder).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeJobManager:
    def __init__(self) -> None:
        self.jobs: dict[str, dict] = {}
        self.sessions: dict[str, dict[str, str]] = {}  # handle -> merged configuration
        self.calls: list[str] = []
        self.flink2_exceptions = False  # Flink 2.x answers only the exception history
        self.port = 0
        self._server: ThreadingHTTPServer | None = None
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def add(self, jid: str, name: str, state: str = "RUNNING", start: int = 1_765_000_000_123) -> None:
        with self._lock:
            self.jobs[jid] = {"jid": jid, "name": name, "state": state, "start-time": start, "end-time": -1,
                              "timestamps": {state: start + 5, "INITIALIZING": start}}  # fmt: skip

    def set_state(self, jid: str, state: str, at: int | None = None) -> None:
        with self._lock:
            job = self.jobs[jid]
            job["state"] = state
            when = at or job["start-time"] + 1000 * (len(job["timestamps"]) + 1)
            job["timestamps"][state] = when
            if state in ("FINISHED", "FAILED", "CANCELED"):
                job["end-time"] = when

    def forget(self, jid: str) -> None:
        with self._lock:
            self.jobs.pop(jid, None)

    def start(self) -> FakeJobManager:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                owner.calls.append(self.path)
                status, body = owner.answer(self.path)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=UTF-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def answer(self, path: str) -> tuple[int, dict]:
        parts = [p for p in path.split("?")[0].split("/") if p]
        with self._lock:
            if parts[:1] == ["v1"] and len(parts) == 3 and parts[1] == "sessions":
                if parts[2] in self.sessions:
                    return 200, {"properties": self.sessions[parts[2]]}
                return 404, {"errors": ["Session does not exist."]}
            if parts == ["jobs", "overview"]:
                keys = ("jid", "name", "state", "start-time", "end-time")
                return 200, {"jobs": [{k: job[k] for k in keys} for job in self.jobs.values()]}
            if parts[:1] == ["jobs"] and len(parts) >= 2:
                job = self.jobs.get(parts[1])
                if job is None:
                    return 404, {"errors": ["Job could not be found."]}
                if parts[2:] == ["exceptions"]:
                    trace = "java.lang.RuntimeException: boom\n\tat Somewhere"
                    entry = {"exceptionName": "java.lang.RuntimeException", "stacktrace": trace, "timestamp": 1}
                    if self.flink2_exceptions:  # Flink 2.x: the exception history only
                        return 200, {"exceptionHistory": {"entries": [entry], "truncated": False}}
                    return 200, {
                        "root-exception": trace,
                        "all-exceptions": [],
                        "exceptionHistory": {"entries": [entry]},
                    }
                return 200, dict(job, vertices=[], plan={"nodes": []})
        return 404, {"errors": ["Not found."]}

    def down(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def up(self) -> None:
        if self._server is None:
            self.start()

    def __enter__(self) -> FakeJobManager:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.down()
