"""Benchmark of the latency ``planlineage gateway`` adds to a SQL Gateway call; prints figures,
asserts nothing.

    python bench/gateway_latency.py [--rounds 300] [--clients 1]

A loopback server answering like the SQL Gateway (small JSON answers of its shapes, no work) is
called directly and through the proxy, with lineage off (no recorder) and on (the recorder on a
SQLite store in a temporary folder, its hand-over a no-op: the lineage side's own work runs on
the recorder's thread, never on a call).  Each round is one session's life as a client drives it:
open the session, one ``configure-session``, two statements, a fetch that reveals a job id, an
operation status, close; every call on one kept-alive connection per client.  The three ways are
interleaved round by round, so a machine busy with other work slows all three alike.

Printed per way: the latency of a call (median, p90, max, ms), then what the proxy adds: the
difference of each figure to the direct call's.  The last line holds the goal of issue 39: the
added median under 5 ms per call on loopback.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from planlineage.gateway.proxy import GatewayProxy, Upstream
from planlineage.gateway.recorder import Recorder
from planlineage.store.sqlite import Store

GOAL_MS = 5.0


class _Gateway(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args) -> None:
        pass

    def _answer(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        parts = [p for p in self.path.split("?")[0].split("/") if p][1:]
        if parts == ["sessions"]:
            value: dict = {"sessionHandle": str(uuid.uuid4())}
        elif parts[-1:] == ["statements"]:
            value = {"operationHandle": str(uuid.uuid4())}
        elif "result" in parts:
            job = uuid.uuid4().hex
            value = {
                "resultType": "PAYLOAD",
                "isQueryResult": False,
                "jobID": job,
                "resultKind": "SUCCESS_WITH_CONTENT",
                "results": {"columns": [{"name": "job id"}], "rowFormat": "JSON", "data": [{"fields": [job]}]},
                "nextResultUri": None,
            }
        elif parts[-1:] == ["status"]:
            value = {"status": "FINISHED"}
        elif parts == ["info"]:
            value = {"productName": "Apache Flink", "version": "2.3.0"}
        else:
            value = {}
        body = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_DELETE = _answer


def _serve(server) -> None:
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()


def _call(conn: http.client.HTTPConnection, method: str, path: str, value=None) -> tuple[float, dict]:
    body = json.dumps(value).encode() if value is not None else None
    started = time.perf_counter()
    conn.request(method, path, body=body, headers={"Content-Type": "application/json"} if body else {})
    response = conn.getresponse()
    data = response.read()
    took = time.perf_counter() - started
    return took, json.loads(data) if data else {}


def _round(conn: http.client.HTTPConnection, timings: list[float]) -> None:
    took, answer = _call(conn, "POST", "/v3/sessions", {"properties": {"pipeline.name": "bench"}})
    timings.append(took)
    session = answer["sessionHandle"]
    took, _ = _call(conn, "POST", f"/v3/sessions/{session}/configure-session", {"statement": "SET 'a' = 'b'"})
    timings.append(took)
    took, _ = _call(conn, "POST", f"/v3/sessions/{session}/statements", {"statement": "CREATE TABLE t (x INT)"})
    timings.append(took)
    took, answer = _call(conn, "POST", f"/v3/sessions/{session}/statements", {"statement": "INSERT INTO t SELECT 1"})
    timings.append(took)
    operation = answer["operationHandle"]
    for path in (f"operations/{operation}/result/0", f"operations/{operation}/status"):
        took, _ = _call(conn, "GET", f"/v3/sessions/{session}/{path}")
        timings.append(took)
    took, _ = _call(conn, "DELETE", f"/v3/sessions/{session}")
    timings.append(took)


def _figures(timings: list[float]) -> tuple[float, float, float]:
    ordered = sorted(timings)
    return (
        statistics.median(ordered) * 1000,
        ordered[int(len(ordered) * 0.9) - 1] * 1000,
        ordered[-1] * 1000,
    )


def serve_proxies(gateway_url: str) -> None:
    """The proxies, in their own process as in production: one without a recorder (lineage off),
    one with (lineage on); their addresses on stdout, one a line; until stdin closes."""
    with tempfile.TemporaryDirectory() as folder:
        handed: list = []
        recorder = Recorder(
            gateway_url, Store(Path(folder) / "state.db"), handed.append, Upstream(gateway_url).ask_version
        )
        plain = GatewayProxy(("127.0.0.1", 0), Upstream(gateway_url))
        recording = GatewayProxy(("127.0.0.1", 0), Upstream(gateway_url), recorder)
        for server in (plain, recording):
            _serve(server)
        print(plain.url, recording.url, sep="\n", flush=True)
        sys.stdin.read()
        recorder.wait_idle(60)
        print(len(handed), recorder.dropped, flush=True)
        recorder.close(10)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=300, help="session lives per client and way (7 calls each)")
    parser.add_argument("--clients", type=int, default=1, help="clients calling at once, each on its own connection")
    parser.add_argument("--serve-proxies", metavar="GATEWAY_URL", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_proxies:
        serve_proxies(args.serve_proxies)
        return 0

    gateway = ThreadingHTTPServer(("127.0.0.1", 0), _Gateway)
    gateway.daemon_threads = True
    _serve(gateway)
    gateway_url = f"http://127.0.0.1:{gateway.server_address[1]}"
    proxies = subprocess.Popen(
        [sys.executable, __file__, "--serve-proxies", gateway_url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    plain_url = proxies.stdout.readline().strip()  # type: ignore[union-attr]
    recording_url = proxies.stdout.readline().strip()  # type: ignore[union-attr]
    ways = {"direct": gateway_url, "lineage off": plain_url, "lineage on": recording_url}
    timings: dict[str, list[float]] = {way: [] for way in ways}
    lock = threading.Lock()
    warm = 3

    def client() -> None:
        conns = {way: http.client.HTTPConnection(*url.removeprefix("http://").split(":")) for way, url in ways.items()}
        mine: dict[str, list[float]] = {way: [] for way in ways}
        for _ in range(warm):  # connections opened, pools filled
            for conn in conns.values():
                _round(conn, [])
        for _ in range(args.rounds):
            for way, conn in conns.items():
                _round(conn, mine[way])
        for conn in conns.values():
            conn.close()
        with lock:
            for way in ways:
                timings[way].extend(mine[way])

    threads = [threading.Thread(target=client) for _ in range(args.clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    handed, dropped = proxies.communicate(input="", timeout=120)[0].split()

    calls = len(timings["direct"])
    print(f"{calls} calls per way ({args.clients} client(s), {args.rounds} sessions each, 7 calls a session)")
    direct = _figures(timings["direct"])
    print(f"{'':22}  {'median':>8}  {'p90':>8}  {'max':>8}   (ms per call)")
    for way in ways:
        median, p90, most = _figures(timings[way])
        print(f"{way:22}  {median:8.3f}  {p90:8.3f}  {most:8.3f}")
    added = {}
    for way in ("lineage off", "lineage on"):
        figures = _figures(timings[way])
        added[way] = [f - d for f, d in zip(figures, direct, strict=True)]
        print(f"{'added, ' + way:22}  {added[way][0]:8.3f}  {added[way][1]:8.3f}  {added[way][2]:8.3f}")
    sessions = (args.rounds + warm) * args.clients
    print(f"lineage on: {handed} of {sessions} jobs handed over, {dropped} calls not recorded")
    worst = max(added[way][0] for way in added)
    verdict = "met" if worst < GOAL_MS else "NOT met"
    print(f"goal (issue 39): added median < {GOAL_MS:g} ms per call: {verdict} ({worst:.3f} ms at most)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
