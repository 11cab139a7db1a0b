"""`planlineage ui`: the lineage page served live, read only, on the standard library's HTTP server.

    GET /            the page (no data of its own; its script fetches and polls the endpoint)
    GET /api/graph   the page's data as JSON (view.view), with an ETag: a poll answers 304 until
                     the inputs change

Nothing else: every other method is 405, every other path 404. The inputs (event files, the
state store) are read again when they change (checked every second; a shared PostgreSQL store,
which has no file to look at, every few seconds), so a new run or a state change is on the page
within a poll (2 s) of the rebuild.

Bound to loopback, it answers requests whose Host is a loopback name only (a web page of another
site cannot read it through DNS rebinding). Bound to any other address it requires a token on the
JSON endpoint (`Authorization: Bearer ...`): the setting lineage.ui-token (environment
PLANLINEAGE_LINEAGE_UI_TOKEN; kept in the node's settings file, never a shared store), or one generated and printed once
to stderr inside the URL to open (`http://host:port/#token=...`: a URL fragment never reaches the
server nor its logs); no request is logged.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
import threading
import time
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from .html import render_shell, view_json
from .model import LineageGraph
from .view import view

#: Seconds between two looks at the inputs; a store without a file to stat is read again every
#: SHARED_STORE_SECONDS.
CHECK_SECONDS = 1.0
SHARED_STORE_SECONDS = 4.0
TOKEN_SETTING = "lineage.ui-token"


def is_loopback(host: str) -> bool:
    if host in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class LiveGraph:
    """The current JSON of the inputs, rebuilt when they change; a rebuild that fails keeps the
    last good graph (and says why in `problem`)."""

    def __init__(self, build: Callable[[], LineageGraph], files: Sequence[str], state: bool) -> None:
        self._build = build
        self._files = [Path(f) for f in files]
        self._state = state
        self._lock = threading.Lock()
        self._signature: object = None
        self.body = b""
        self.etag = ""
        self.problem = ""
        self.version = 0

    def _state_signature(self) -> object:
        if not self._state:
            return None
        from planlineage.store import store_url
        from planlineage.store.sqlite import DB_NAME, home_dir

        if store_url()[0]:  # a shared store: no file to look at
            return int(time.monotonic() // SHARED_STORE_SECONDS)
        db = home_dir() / DB_NAME
        return tuple(_stat(Path(str(db) + suffix)) for suffix in ("", "-wal"))

    def signature(self) -> object:
        return (tuple(_stat(f) for f in self._files), self._state_signature())

    def refresh(self) -> bool:
        """Rebuilds when the inputs changed; True when the JSON changed. Raises the build's error
        only on the first build (nothing to serve yet)."""
        with self._lock:
            signature = self.signature()
            if signature == self._signature:
                return False
            try:
                body = view_json(view(self._build()))
            except Exception as error:  # the last good graph stays served; the page says why
                if not self.body:
                    raise
                self.problem = f"inputs could not be read again ({type(error).__name__}: {error})"
                return False
            self._signature = signature
            self.problem = ""
            etag = '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'
            if etag == self.etag:
                return False
            self.body, self.etag = body, etag
            self.version += 1
            return True

    def watch(self, stop: threading.Event, say: Callable[[str], None]) -> None:
        said = ""
        while not stop.wait(CHECK_SECONDS):
            try:
                self.refresh()
            except Exception:  # never raised after the first build; the thread must not die
                pass
            if self.problem and self.problem != said:
                say(f"planlineage ui: {self.problem}; the page keeps showing the last graph read")
            said = self.problem


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


class _Handler(BaseHTTPRequestHandler):
    server: UiServer
    server_version = "planlineage-ui"
    sys_version = ""

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
            etag, body = live.etag, live.body
            if self.headers.get("If-None-Match") == etag:
                self._send(304, b"", "application/json", {"ETag": etag})
            else:
                self._send(200, body, "application/json", {"ETag": etag})
        elif path == "/favicon.ico":
            self._send(204, b"", "image/x-icon")
        else:
            self._error(404, "not found: the page is at / and its data at /api/graph")

    do_HEAD = do_GET

    def _read_only(self) -> None:
        self._send(405, b"read only: GET / and GET /api/graph\n", "text/plain; charset=utf-8", {"Allow": "GET, HEAD"})

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _read_only


class UiServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], live: LiveGraph, token: str | None) -> None:
        if ":" in address[0]:
            import socket

            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)
        self.live = live
        self.token = token
        self.page = render_shell().encode("utf-8")


def resolve_token(host: str, environ: dict[str, str] | None = None) -> tuple[str | None, bool]:
    """(the token the JSON endpoint requires or None on loopback, whether it was generated here)."""
    if is_loopback(host):
        return None, False
    from planlineage.settings import Settings

    given = (Settings(environ=os.environ if environ is None else environ).get(TOKEN_SETTING) or "").strip()
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
