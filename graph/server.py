"""`planlineage ui`: the lineage page served live, read only, on the standard library's HTTP server.

    GET /            the page (no data of its own; its script fetches and polls the endpoint)
    GET /api/graph   the page's data as JSON (focus.page_data), with an ETag: a poll answers 304
                     until the inputs change; `?around=ID`: a large estate's part around a node;
                     X-Lineage-Status says `ok`, or `unreadable` with the problem and since when

Nothing else: every other method is 405, every other path 404. What was appended to the event
files is read when they change (live.py: checked every second; the state store, or a shared
PostgreSQL store, which has no file to look at, every few seconds), so a new run or a state change
is on the page within a poll (2 s) of the read. Connections are bounded (connections.py): a request
costs a thread only once its head is whole, and is checked (Host, token) at once.

Bound to loopback, it answers requests whose Host is a loopback name only (a web page of another
site cannot read it through DNS rebinding). Bound to any other address it requires a token on the
JSON endpoint (`Authorization: Bearer ...`): the setting lineage.ui-token (environment
PLANLINEAGE_LINEAGE_UI_TOKEN; kept in the node's settings file, never a shared store), or one generated and printed once
to stderr inside the URL to open (`http://host:port/#token=...`: a URL fragment never reaches the
server nor its logs); no request is logged.
"""

from __future__ import annotations

import hmac
import io
import ipaddress
import os
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, quote, urlsplit

from planlineage.errors import WeakToken

from .connections import BoundedServer, SocketWriter
from .html import render_shell
from .live import CHECK_SECONDS, SHARED_STORE_SECONDS, LiveGraph

__all__ = [
    "CHECK_SECONDS",
    "SHARED_STORE_SECONDS",
    "LiveGraph",
    "UiServer",
    "WeakToken",
    "is_loopback",
    "resolve_token",
    "serve",
]

TOKEN_SETTING = "lineage.ui-token"
#: The shortest token served beyond loopback: the audit of issue #38 found a one-character
#: lineage.ui-token accepted, guessed at the first few tries (a generated one has 32 characters).
MIN_TOKEN = 16


def is_loopback(host: str) -> bool:
    if host in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class _Handler(BaseHTTPRequestHandler):
    """One request whose head the server has read whole (connections.py): parsed from that head,
    answered on the connection."""

    server: UiServer  # type: ignore[assignment]
    server_version = "planlineage-ui"
    sys_version = ""
    timeout = None

    def setup(self) -> None:
        self.connection, head = self.request
        self.rfile = io.BytesIO(head)
        self.wfile = SocketWriter(self.connection)

    def finish(self) -> None:
        self.wfile.flush()

    def log_message(self, format: str, *args) -> None:  # no request is logged anywhere
        return

    def _send(self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header(
            "Content-Security-Policy",
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; "
            "img-src 'self' data:; frame-ancestors 'none'",
        )
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _error(self, status: int, message: str) -> None:
        self._send(status, (message + "\n").encode(), "text/plain; charset=utf-8")

    def _host_allowed(self) -> bool:
        if self.server.token:
            return True
        host = (self.headers.get("Host") or "").strip()
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        return is_loopback(name)

    def _authorized(self) -> bool:
        if not self.server.token:
            return True
        given = self.headers.get("Authorization") or ""
        scheme, _, value = given.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(value.strip().encode(), self.server.token.encode())

    def do_GET(self) -> None:
        if not self._host_allowed():
            self._error(403, "this server answers loopback names only (localhost, 127.0.0.1)")
            return
        path = urlsplit(self.path).path
        if path in ("/", "/index.html"):
            self._send(200, self.server.page, "text/html; charset=utf-8")
        elif path == "/api/graph":
            if not self._authorized():
                self._send(
                    401,
                    b'{"error":"a token is required: open the URL planlineage ui printed"}',
                    "application/json",
                    {"WWW-Authenticate": "Bearer"},
                )
                return
            live = self.server.live
            status = {"X-Lineage-Status": "ok"}
            if live.problem:  # the page shows it, and the graph as stale (percent-encoded: any text)
                status = {"X-Lineage-Status": "unreadable", "X-Lineage-Problem": quote(live.problem, safe=" :/,;()'"),
                          "X-Lineage-Since": live.problem_since}  # fmt: skip
            around = parse_qs(urlsplit(self.path).query).get("around")
            found = live.around(around[0]) if around else None
            etag, body = found if found else (live.etag, live.body)
            if self.headers.get("If-None-Match") == etag:
                self._send(304, b"", "application/json", {"ETag": etag, **status})
            else:
                self._send(200, body, "application/json", {"ETag": etag, **status})
        elif path == "/favicon.ico":
            self._send(204, b"", "image/x-icon")
        else:
            self._error(404, "not found: the page is at / and its data at /api/graph")

    do_HEAD = do_GET

    def _read_only(self) -> None:
        self._send(405, b"read only: GET / and GET /api/graph\n", "text/plain; charset=utf-8", {"Allow": "GET, HEAD"})

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _read_only


class UiServer(BoundedServer):
    """The page and its data on loopback or beyond, connections bounded (connections.py)."""

    def __init__(self, address: tuple[str, int], live: LiveGraph, token: str | None) -> None:
        super().__init__(address, self._answer)
        self.live = live
        self.token = token
        self.page = render_shell().encode("utf-8")

    def _answer(self, connection, head: bytes, client: tuple) -> None:
        _Handler((connection, head), client, self)  # type: ignore[arg-type]


def resolve_token(host: str, environ: dict[str, str] | None = None) -> tuple[str | None, bool]:
    """(the token the JSON endpoint requires or None on loopback, whether it was generated here);
    raises WeakToken for a token set shorter than MIN_TOKEN."""
    if is_loopback(host):
        return None, False
    from planlineage.settings import Settings

    given = (Settings(environ=os.environ if environ is None else environ).ui_token() or "").strip()
    if given and len(given) < MIN_TOKEN:
        raise WeakToken(
            f"{TOKEN_SETTING} has {len(given)} character(s): a token beyond loopback needs at least {MIN_TOKEN}; set "
            f"a longer one (planlineage settings set {TOKEN_SETTING} -, e.g. from `openssl rand -base64 24`) or "
            "unset it, and ui generates one and prints it once"
        )
    if given:
        return given, False
    import secrets

    return secrets.token_urlsafe(24), True


def serve(
    live: LiveGraph,
    host: str,
    port: int,
    token: str | None,
    ready: Callable[[UiServer], None],
    say: Callable[[str], None],
) -> None:
    """Serves until interrupted; `ready` is called once the socket listens, `say` tells a problem."""
    server = UiServer((host, port), live, token)
    stop = threading.Event()
    watcher = threading.Thread(target=live.watch, args=(stop, say), name="planlineage-ui-watch", daemon=True)
    watcher.start()
    try:
        ready(server)
        server.serve_forever(poll_interval=0.25)
    finally:
        stop.set()
        server.server_close()
