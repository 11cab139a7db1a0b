"""The connections of `planlineage ui`, bounded: a request costs a thread only once it is whole.

The standard library's threading server gives every accepted connection a thread that then waits
for the request, however long the client takes: 3,000 half-sent requests made 2,918 threads, and
a normal request waited 73 s behind them. Here one loop (the caller's thread) accepts and reads
request heads without blocking:

- a connection must send its whole head (request line and headers, at most HEAD_BYTES) within
  HEAD_SECONDS, or it is closed;
- at most MAX_PENDING connections wait for their head; one more closes the one that has waited
  longest (a slow sender loses its place, a new request is read at once);
- a whole head goes to a pool of HANDLER_THREADS threads, where the handler checks the Host and the token
  before anything else; at most MAX_QUEUED whole requests wait for a handler thread, more are answered 503;
- a handler thread writes its answer with a timeout (WRITE_SECONDS): a client that does not read cannot
  hold a handler thread longer.
"""

from __future__ import annotations

import io
import selectors
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

HEAD_SECONDS = 5.0
HEAD_BYTES = 16 * 1024
MAX_PENDING = 256
HANDLER_THREADS = 8
MAX_QUEUED = 64
WRITE_SECONDS = 10.0
BUSY = (
    b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 25\r\n"
    b"Retry-After: 2\r\nConnection: close\r\n\r\ntoo many requests: retry\n"
)


class SocketWriter(io.BufferedIOBase):
    """A handler's output: every write sent whole (sendall), within the socket's timeout."""

    def __init__(self, connection: socket.socket) -> None:
        self._connection = connection

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self._connection.sendall(data)
        return len(data)


class BoundedServer:
    """Listens on `address`; `handle(connection, head, client_address)` answers one whole request
    head on a handler thread (and closes nothing: the server closes the connection after it)."""

    def __init__(self, address: tuple[str, int], handle: Callable[[socket.socket, bytes, tuple], None]) -> None:
        family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.socket = socket.socket(family, socket.SOCK_STREAM)
        try:
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.socket.bind(address)
            self.socket.listen(256)
        except OSError:
            self.socket.close()
            raise
        self.socket.setblocking(False)
        self.server_address = self.socket.getsockname()
        self._handle = handle
        self._pending: dict[socket.socket, tuple[float, bytearray, tuple]] = {}  # in arrival order
        self._queued = 0
        self._queued_lock = threading.Lock()
        self._pool = ThreadPoolExecutor(HANDLER_THREADS, thread_name_prefix="planlineage-ui")
        self._wake_read, self._wake_write = socket.socketpair()
        self._stop = threading.Event()
        self._stopped = threading.Event()
        self._stopped.set()

    # -- the loop -------------------------------------------------------------------------------
    def serve_forever(self, poll_interval: float = 0.25) -> None:
        self._stopped.clear()
        selector = selectors.DefaultSelector()
        selector.register(self.socket, selectors.EVENT_READ, "listen")
        selector.register(self._wake_read, selectors.EVENT_READ, "wake")
        try:
            while not self._stop.is_set():
                for key, _ in selector.select(timeout=min(poll_interval, 1.0)):
                    if key.data == "listen":
                        self._accept(selector)
                    elif key.data == "wake":
                        self._wake_read.recv(64)
                    else:
                        self._read(selector, key.fileobj)  # type: ignore[arg-type]
                self._expire(selector)
        finally:
            for connection in list(self._pending):
                self._drop(selector, connection)
            selector.close()
            self._stop.clear()
            self._stopped.set()

    def _accept(self, selector: selectors.BaseSelector) -> None:
        for _ in range(64):  # a burst of connections does not starve the reads
            try:
                connection, client = self.socket.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # out of descriptors: the oldest waiting connections make room
                for oldest in list(self._pending)[:8]:
                    self._drop(selector, oldest)
                return
            connection.setblocking(False)
            if len(self._pending) >= MAX_PENDING:
                self._drop(selector, next(iter(self._pending)))
            self._pending[connection] = (time.monotonic() + HEAD_SECONDS, bytearray(), client)
            selector.register(connection, selectors.EVENT_READ, "client")

    def _read(self, selector: selectors.BaseSelector, connection: socket.socket) -> None:
        entry = self._pending.get(connection)
        if entry is None:
            return
        _, head, client = entry
        try:
            data = connection.recv(4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._drop(selector, connection)
            return
        head += data
        end = head.find(b"\r\n\r\n")
        if end < 0:
            end = head.find(b"\n\n")
        if end < 0:
            if len(head) > HEAD_BYTES:
                self._drop(selector, connection)
            return
        selector.unregister(connection)
        del self._pending[connection]
        with self._queued_lock:
            busy = self._queued >= MAX_QUEUED
            if not busy:
                self._queued += 1
        if busy:
            try:
                connection.send(BUSY)
            except OSError:
                pass
            connection.close()
            return
        self._pool.submit(self._work, connection, bytes(head), client)

    def _work(self, connection: socket.socket, head: bytes, client: tuple) -> None:
        try:
            connection.setblocking(True)
            connection.settimeout(WRITE_SECONDS)
            self._handle(connection, head, client)
        except Exception:  # a client gone, a write timed out: that connection only
            pass
        finally:
            with self._queued_lock:
                self._queued -= 1
            try:
                connection.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            connection.close()

    def _expire(self, selector: selectors.BaseSelector) -> None:
        now = time.monotonic()
        for connection, (deadline, _, _) in list(self._pending.items()):
            if deadline > now:
                break  # arrival order: the rest came later
            self._drop(selector, connection)

    def _drop(self, selector: selectors.BaseSelector, connection: socket.socket) -> None:
        self._pending.pop(connection, None)
        try:
            selector.unregister(connection)
        except (KeyError, ValueError):
            pass
        connection.close()

    # -- stopping -------------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Stops serve_forever (from another thread) and waits for it."""
        self._stop.set()
        try:
            self._wake_write.send(b"x")
        except OSError:
            pass
        self._stopped.wait()

    def server_close(self) -> None:
        self.socket.close()
        self._pool.shutdown(wait=False)
        self._wake_read.close()
        self._wake_write.close()
