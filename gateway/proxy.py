"""The transparent HTTP proxy in front of the Flink SQL Gateway's REST API.

Every request goes to the gateway as the client sent it (method, path and query byte for byte,
headers but the hop-by-hop ones, body), and every answer comes back as the gateway gave it
(status and reason, headers in their order and spelling but the hop-by-hop ones, body bytes, no
decoding).  Framing is the one thing a proxy must redo: a body with a ``Content-Length`` keeps it;
a chunked or close-delimited body is passed on chunked, as it arrives (streaming), to an HTTP/1.1
client, close-delimited to an HTTP/1.0 one.  ``Host`` names the gateway, as a client talking to it
directly would.

A gateway that cannot be reached answers ``502`` (``504`` when it does not answer in time) with a
JSON body in the gateway's own error shape, ``{"errors": ["planlineage gateway: …"]}``; a gateway
that breaks off mid-answer breaks the client's connection off the same way.

Threads, not asyncio: one thread per client connection (``ThreadingHTTPServer``) and a pool of
keep-alive connections to the gateway (``http.client``, TCP_NODELAY), which keeps the added
latency near one loopback hop.  With a :class:`~planlineage.gateway.recorder.Recorder`, the calls
that tell what a session runs are copied (bodies up to :data:`RECORD_LIMIT`) and queued to it once
answered; without one (lineage off) nothing is classified or copied.
"""

from __future__ import annotations

import http.client
import itertools
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from planlineage.gateway.paths import READS_REQUEST_BODY, Call, Classified, classify
from planlineage.gateway.recorder import Exchange, Recorder

#: Bodies larger than this are passed on without a copy for the recorder (a statement that large
#: is not recorded, and says so).
RECORD_LIMIT = 16 * 1024 * 1024
#: Answers up to this size are read whole and written to the client in one piece (with their
#: headers); larger or unsized ones stream.
WHOLE_LIMIT = 1024 * 1024
PIECE = 64 * 1024
#: Seconds the gateway may take to accept a connection, and to send each piece of its answer.
CONNECT_TIMEOUT = 10.0
READ_TIMEOUT = 600.0
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
_NO_BODY_STATUSES = frozenset({204, 304})
#: Errors of a kept-alive connection the gateway closed while it was idle: the request never
#: reached it, so it is sent once more on a fresh connection.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


class UpstreamError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class Upstream:
    """The gateway: its address and a pool of keep-alive connections to it."""

    def __init__(self, url: str, *, connect_timeout: float = CONNECT_TIMEOUT, read_timeout: float = READ_TIMEOUT):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"--sql-gateway {url!r}: give the gateway's REST address, e.g. http://127.0.0.1:8083")
        self.https = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if self.https else 80)
        default_port = 443 if self.https else 80
        bracketed = f"[{self.host}]" if ":" in self.host else self.host
        self.host_header = bracketed if self.port == default_port else f"{bracketed}:{self.port}"
        self.base_path = parts.path.rstrip("/")
        #: The address shown and recorded: no credentials, no query.
        self.url = f"{parts.scheme}://{self.host_header}{self.base_path}"
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def connection(self) -> tuple[http.client.HTTPConnection, bool]:
        """A connection (an idle kept-alive one when there is one) and whether it was reused."""
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        kind = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
        return kind(self.host, self.port, timeout=self.connect_timeout), False

    def give_back(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            self._idle.append(conn)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def ask_version(self) -> str | None:
        """The gateway's Flink version (``GET /v1/info``), for the recorder."""
        from planlineage.gateway import answers

        conn, _ = self.connection()
        try:
            conn.request("GET", f"{self.base_path}/v1/info", headers={"Accept": "application/json"})
            response = conn.getresponse()
            body = response.read()
        finally:
            conn.close()
        return answers.flink_version(body) if response.status == 200 else None


class GatewayProxy(ThreadingHTTPServer):
    """``planlineage gateway``'s server: forwards every request to ``upstream``."""

    daemon_threads = True
    block_on_close = False
    request_queue_size = 128

    def __init__(self, listen: tuple[str, int], upstream: Upstream, recorder: Recorder | None = None):
        self.upstream = upstream
        self.recorder = recorder
        super().__init__(listen, _Handler)

    @property
    def url(self) -> str:
        host, port = str(self.server_address[0]), self.server_address[1]
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: GatewayProxy

    def log_message(self, format: str, *args) -> None:
        pass  # the gateway logs its calls; a proxy repeating each on stderr would only add cost

    def __getattr__(self, name: str):
        # Every method (GET, POST, DELETE, PATCH, OPTIONS, …) is forwarded: the gateway decides.
        if name.startswith("do_"):
            return self._forward
        raise AttributeError(name)

    # -- one request -----------------------------------------------------------------------------

    def _forward(self) -> None:
        recorder = self.server.recorder
        call = classify(self.command, self.path) if recorder is not None else None
        try:
            body, length, chunked, kept = self._request_body(call)
        except (OSError, ValueError):
            self.close_connection = True  # the client's body was cut or malformed: nothing to forward
            return
        upstream = self.server.upstream
        try:
            response, conn = self._send(upstream, body, length, chunked)
        except UpstreamError as error:
            if body is not None and not isinstance(body, bytes):
                # A streamed body's rest is still on the client's connection: read to its end, or
                # it would be taken for the connection's next request.
                try:
                    for _ in body:
                        pass
                except (OSError, ValueError):
                    self.close_connection = True
                    return
            self._answer_error(error.status, str(error))
            return
        except ValueError:
            self.close_connection = True  # the client's streamed body was cut: so is the request upstream
            return
        released: list[bool] = []

        def release() -> None:
            """The connection back to the pool once the answer was read whole (before the client
            has it: its next call may reuse it), else closed; once."""
            if released:
                return
            released.append(True)
            if response.will_close or not response.isclosed():
                conn.close()  # the gateway closes it, or its answer was not read to the end
            else:
                upstream.give_back(conn)

        try:
            self._relay(response, call, kept, release)
        except OSError:
            self.close_connection = True  # the client went away mid-answer
        finally:
            release()

    def _request_body(self, call: Classified | None):
        """``(body, length, chunked, copy)``: the body as bytes, or pieces to stream; the copy the
        recorder gets (None when it reads none of this call's body)."""
        headers = self.headers
        wanted = call is not None and call.call in READS_REQUEST_BODY
        if "chunked" in (headers.get("Transfer-Encoding") or "").lower():
            pieces = _dechunk(self.rfile)
            if not wanted:
                return pieces, None, True, None
            kept: list[bytes] = []
            size = 0
            for piece in pieces:  # kept whole up to the recorder's limit, streamed on beyond it
                kept.append(piece)
                size += len(piece)
                if size > RECORD_LIMIT:
                    return itertools.chain(kept, pieces), None, True, None
            whole = b"".join(kept)
            return whole, len(whole), False, whole
        declared = headers.get("Content-Length")
        if declared is None:
            return None, None, False, None
        length = int(declared)
        if length < 0:
            raise ValueError("negative Content-Length")
        if length <= WHOLE_LIMIT or (wanted and length <= RECORD_LIMIT):
            data = _read_exactly(self.rfile, length)
            return data, length, False, data if wanted else None
        return _pieces(self.rfile, length), length, False, None

    def _send(self, upstream: Upstream, body, length: int | None, chunked: bool):
        attempts = 2 if body is None or isinstance(body, bytes) else 1  # a streamed body cannot be sent twice
        for attempt in range(attempts):
            conn, reused = upstream.connection()
            try:
                self._put_request(upstream, conn, body, length, chunked)
                conn.sock.settimeout(upstream.read_timeout)
                return conn.getresponse(), conn
            except _STALE as error:
                conn.close()
                if reused and attempt + 1 < attempts:
                    continue
                raise UpstreamError(
                    502, f"the SQL Gateway at {upstream.url} closed the connection: {_why(error)}"
                ) from None
            except TimeoutError as error:
                conn.close()
                raise UpstreamError(
                    504, f"the SQL Gateway at {upstream.url} did not answer in time: {_why(error)}"
                ) from None
            except (OSError, http.client.HTTPException) as error:
                conn.close()
                raise UpstreamError(
                    502, f"the SQL Gateway at {upstream.url} cannot be reached: {_why(error)}"
                ) from None
            except ValueError:
                conn.close()
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _put_request(self, upstream: Upstream, conn, body, length: int | None, chunked: bool) -> None:
        conn.putrequest(self.command, upstream.base_path + self.path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", upstream.host_header)
        for name, value in _end_to_end(self.headers.items(), self.headers.get_all("Connection") or ()):
            if name.lower() not in ("host", "content-length", "expect"):
                conn.putheader(name, value)
        if chunked:
            conn.putheader("Transfer-Encoding", "chunked")
        elif length is not None:
            conn.putheader("Content-Length", str(length))
        if isinstance(body, bytes):
            conn.endheaders(body)
        elif body is None:
            conn.endheaders()
        else:
            conn.endheaders()
            for piece in body:
                conn.send(b"%X\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
            if chunked:
                conn.send(b"0\r\n\r\n")

    def _relay(self, response: http.client.HTTPResponse, call: Classified | None, kept: bytes | None, release) -> None:
        status = response.status
        headers = _end_to_end(response.getheaders(), response.headers.get_all("Connection") or ())
        if self.command == "HEAD" or status in _NO_BODY_STATUSES or 100 <= status < 200:
            response.read()
            release()
            self._record(call, status, kept, None)
            self._write_head(status, response.reason, headers, None)
            return
        declared = response.getheader("Content-Length")
        if not response.chunked and declared is not None and declared.isdigit() and int(declared) <= WHOLE_LIMIT:
            try:
                data = response.read()
            except http.client.IncompleteRead as cut:
                # The gateway broke off mid-answer: the client gets the same, what came and no more.
                self.close_connection = True
                self._write_head(status, response.reason, headers, cut.partial)
                return
            except (OSError, http.client.HTTPException):
                self.close_connection = True  # the gateway broke off: so does the answer to the client
                return
            release()
            self._record(call, status, kept, data)
            self._write_head(status, response.reason, headers, data)
            return
        self._stream(response, status, headers, call, kept, declared)

    def _stream(self, response, status: int, headers, call, kept: bytes | None, declared: str | None) -> None:
        framed = declared is not None and not response.chunked
        rechunk = not framed and self.request_version != "HTTP/1.0"
        if not framed and not rechunk:
            self.close_connection = True  # an HTTP/1.0 client reads to the end of the connection
        extra = [("Transfer-Encoding", "chunked")] if rechunk else []
        self._write_head(status, response.reason, [*headers, *extra], None)
        copy: list[bytes] | None = [] if call is not None and call.call is Call.RESULT else None
        copied = 0
        try:
            while True:
                piece = response.read1(PIECE) if not framed else response.read(PIECE)
                if not piece:
                    break
                self.wfile.write(b"%X\r\n%s\r\n" % (len(piece), piece) if rechunk else piece)
                if copy is not None:
                    copied += len(piece)
                    copy = copy if copied <= RECORD_LIMIT else None
                    if copy is not None:
                        copy.append(piece)
            if rechunk:
                self.wfile.write(b"0\r\n\r\n")
        except (OSError, http.client.HTTPException):
            self.close_connection = True  # either side broke off: the client's answer ends unfinished
            return
        self._record(call, status, kept, b"".join(copy) if copy is not None else None)

    # -- writing -----------------------------------------------------------------------------

    def _write_head(self, status: int, reason: str, headers, body: bytes | None) -> None:
        lines = [f"{self.protocol_version} {status} {reason}\r\n".encode("latin-1", "replace")]
        lines += [f"{name}: {value}\r\n".encode("latin-1", "replace") for name, value in headers]
        if self.request_version == "HTTP/1.0" and not self.close_connection:
            # It asked to keep the connection: an HTTP/1.0 client keeps it only when told so.
            lines.append(b"Connection: keep-alive\r\n")
        lines.append(b"\r\n")
        if body:
            lines.append(body)
        self.wfile.write(b"".join(lines))

    def _answer_error(self, status: int, message: str) -> None:
        body = json.dumps({"errors": [f"planlineage gateway: {message}"]}).encode()
        reason = "Bad Gateway" if status == 502 else "Gateway Timeout"
        headers = [
            ("Content-Type", "application/json; charset=UTF-8"),
            ("Content-Length", str(len(body))),
            ("Date", self.date_time_string()),
        ]
        self._write_head(status, reason, headers, body if self.command != "HEAD" else None)

    def _record(self, call: Classified | None, status: int, request: bytes | None, response: bytes | None) -> None:
        recorder = self.server.recorder
        if call is not None and recorder is not None:
            recorder.record(Exchange(call, status, request, response, time.time()))


def _end_to_end(headers, connection_values) -> list[tuple[str, str]]:
    """Headers without the hop-by-hop ones (RFC 9110 7.6.1), those ``Connection`` names included."""
    named = {token.strip().lower() for value in connection_values for token in value.split(",")}
    return [(k, v) for k, v in headers if k.lower() not in HOP_BY_HOP and k.lower() not in named]


def _read_exactly(stream, length: int) -> bytes:
    data = stream.read(length) if length else b""
    if len(data) != length:
        raise ValueError("the request body ended early")
    return data


def _pieces(stream, length: int) -> Iterator[bytes]:
    left = length
    while left:
        piece = stream.read(min(PIECE, left))
        if not piece:
            raise ValueError("the request body ended early")
        left -= len(piece)
        yield piece


def _dechunk(stream) -> Iterator[bytes]:
    """The pieces of a chunked request body (trailers read and dropped)."""
    while True:
        size_line = stream.readline(65537)
        if not size_line.endswith(b"\n"):
            raise ValueError("a chunk size line was cut")
        size = int(size_line.split(b";", 1)[0].strip(), 16)
        if size == 0:
            while stream.readline(65537) not in (b"\r\n", b"\n", b""):
                pass
            return
        yield _read_exactly(stream, size)
        stream.readline(3)  # the CRLF after the chunk


def _why(error: BaseException) -> str:
    if isinstance(error, socket.gaierror):
        return f"the host name does not resolve ({error.strerror or error})"
    return getattr(error, "strerror", None) or str(error) or type(error).__name__
