"""The session recorder: what each SQL Gateway session runs, in order, and the jobs it starts.

The proxy hands every call it classified (:mod:`planlineage.gateway.paths`) to :meth:`Recorder.record`
once the gateway answered: a put on an in-memory queue, nothing more, so no client waits on the
recorder.  One background thread takes the calls in the order they were answered and keeps, per
session (:mod:`planlineage.gateway.ledger`, in the state store):

* the properties it was opened with (``POST /sessions`` ``properties``, the handle from the answer);
* each ``configure-session`` statement, each ``statements`` statement with its operation handle,
  each v4 ``scripts`` script, in order (only what the gateway accepted: a 2xx answer);
* when an answer reveals the job id of an operation (:func:`planlineage.gateway.answers.job_id`),
  a :class:`~planlineage.gateway.records.JobSubmitted` (the statements up to that operation's,
  the properties, the gateway's Flink version asked once from ``GET /v1/info``) handed to
  ``on_job``, once per job id, across restarts and proxies sharing the store;
* ``DELETE /sessions/{sh}`` ends the session's record;
* when each session was last used (any call naming it: a statement, a fetch, a heartbeat), noted
  in the store at most once a minute; a session unused for the retention
  (``lineage.gateway-session-retention``) is forgotten with its statements, checked every few
  minutes: a client that never closed it (it crashed, the gateway expired it) leaves no raw SQL
  behind for longer than that.  A call for a forgotten session passes as any other; its next
  statement starts it again as a session first seen after it was opened.

Order holds because the gateway's clients wait for a statement's answer (its operation handle)
before they fetch its result, and the proxy records a call before it passes the answer on.
Every problem here (the store, a callback, a body that is not JSON) is logged and skipped: the
clients never see it.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from planlineage import lazylog
from planlineage.gateway import answers, ledger
from planlineage.gateway.paths import Call, Classified
from planlineage.gateway.records import JobSubmitted

log = lazylog.getLogger(__name__)

#: Calls waiting for the recorder; when it falls this far behind, a call is dropped (and said)
#: rather than holding a client up.
QUEUE_LIMIT = 10_000
#: Bytes of bodies the queued calls may hold (each up to the proxy's 16 MiB): past it a call is
#: dropped the same way, so a recorder held up (a store away) never holds the proxy's memory.
QUEUE_BYTES_LIMIT = 256 * 1024 * 1024
_ANSWERED_KEPT = 100_000
_STATEMENT_KINDS = {Call.CONFIGURE_SESSION: "configure", Call.STATEMENT: "statement", Call.SCRIPT: "script"}
#: Seconds between writes of when the sessions were last used (one write for all of them).
USED_WRITE_SECONDS = 60.0
#: Seconds between looks for sessions unused for the retention.
PRUNE_SECONDS = 300.0
#: Default retention of an unused session, seconds (``lineage.gateway-session-retention``).
RETENTION_SECONDS = 86400.0
_STATEMENT_FIELDS = {Call.CONFIGURE_SESSION: "statement", Call.STATEMENT: "statement", Call.SCRIPT: "script"}


class Exchange(NamedTuple):
    """One call the gateway answered, as the proxy saw it."""

    call: Classified
    status: int
    request_body: bytes | None  # None: not read (too large, or a call whose request is not read)
    response_body: bytes | None
    at: float  # epoch seconds of the answer


class Recorder:
    """Records the sessions behind one gateway in ``store``; hands each job over to ``on_job``.

    ``ask_version()`` asks the gateway its Flink version (``GET /v1/info``); called from the
    background thread, at most until it answers once.
    """

    def __init__(
        self,
        gateway: str,
        store: Any,
        on_job: Callable[[JobSubmitted], object],
        ask_version: Callable[[], str | None] | None = None,
        *,
        queue_limit: int = QUEUE_LIMIT,
        queue_bytes_limit: int = QUEUE_BYTES_LIMIT,
        retention: float = RETENTION_SECONDS,
        clock: Callable[[], float] = time.time,
    ):
        self.gateway = gateway
        self.store = store
        self.on_job = on_job
        self.ask_version = ask_version
        self.version: str | None = None
        self.dropped = 0  # calls not recorded because the queue was full
        self._handed: set[str] = set()  # job ids known handed over (skips the store on later pages)
        self._answered: dict[str, None] = {}  # operations whose result came (in order, the oldest dropped)
        self.retention = retention
        self._clock = clock
        self._used: dict[str, float] = {}  # session -> when last used, not yet written
        self._used_written = clock()
        self._pruned = float("-inf")  # a (re)started proxy looks at once
        self._queue: queue.Queue[Exchange | None] = queue.Queue(maxsize=queue_limit)
        self._bytes_limit = queue_bytes_limit
        self._queued_bytes = 0  # the bodies' bytes on the queue, under _bytes_lock
        self._bytes_lock = threading.Lock()
        self._recording = threading.Thread(target=self._work, name="planlineage-gateway-recorder", daemon=True)
        self._stopping = False
        self._recording.start()

    # -- the request path: cheap -------------------------------------------------------------

    def record(self, exchange: Exchange) -> None:
        if self._stopping:
            return
        if exchange.call.call is Call.SESSION_USED:  # only its session is read: no body held
            exchange = exchange._replace(request_body=None, response_body=None)
        size = _size(exchange)
        try:
            with self._bytes_lock:
                if size and self._queued_bytes + size > self._bytes_limit:
                    raise queue.Full
                self._queue.put_nowait(exchange)
                self._queued_bytes += size
        except queue.Full:
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 1000 == 0:
                log.warning(
                    "planlineage gateway: the recorder is %d calls behind; %d call(s) not recorded so far",
                    self._queue.qsize(),
                    self.dropped,
                )

    # -- stopping ------------------------------------------------------------------------------

    def pending(self) -> int:
        return self._queue.qsize()

    def close(self, timeout: float = 30.0) -> int:
        """Record what is queued (at most ``timeout`` seconds), then stop; the calls left unrecorded."""
        self._stopping = True
        deadline = time.monotonic() + timeout
        while True:
            try:
                self._queue.put(None, timeout=max(0.0, deadline - time.monotonic()))
                break
            except queue.Full:
                if time.monotonic() >= deadline:
                    break
        self._recording.join(max(0.0, deadline - time.monotonic()))
        return self._queue.qsize() if self._recording.is_alive() else 0

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Whether every call recorded so far was processed within ``timeout`` (tests, the bench)."""
        done = threading.Event()
        self._queue.put(_Marker(done))  # type: ignore[arg-type]
        return done.wait(timeout)

    # -- the background thread -----------------------------------------------------------------

    def _work(self) -> None:
        while True:
            try:
                exchange = self._queue.get(timeout=USED_WRITE_SECONDS)
            except queue.Empty:
                self._maintain()
                continue
            if exchange is None:
                self._write_used()
                return
            if isinstance(exchange, _Marker):
                self._maintain()
                exchange.done.set()
                continue
            size = _size(exchange)
            if size:
                with self._bytes_lock:
                    self._queued_bytes -= size
            try:
                self._apply(exchange)
            except Exception as error:  # the store, a callback: logged, never the client's problem
                log.warning(
                    "planlineage gateway: could not record a %s call of session %s: %s",
                    exchange.call.call.value,
                    exchange.call.session or "-",
                    _one_line(error),
                )
            self._maintain()

    def _maintain(self) -> None:
        """Write when the sessions were last used, and forget the unused ones, when it is time."""
        now = self._clock()
        if self._used and now - self._used_written >= USED_WRITE_SECONDS:
            self._write_used()
        if now - self._pruned < PRUNE_SECONDS:
            return
        self._pruned = now
        self._write_used()  # a session in use, not yet written, must not look unused
        try:
            sessions, jobs = self.store.write(lambda c: ledger.forget_unused(c, now - self.retention))
        except Exception as error:
            log.warning("planlineage gateway: could not forget the unused sessions: %s", _one_line(error))
            return
        if sessions or jobs:
            log.info(
                "planlineage gateway: forgot %d session(s) unused for %.0f s, and %d job id(s) handed over before",
                sessions,
                self.retention,
                jobs,
            )

    def _write_used(self) -> None:
        self._used_written = self._clock()
        if not self._used:
            return
        used, self._used = self._used, {}
        try:
            self.store.write(lambda c: ledger.mark_used(c, self.gateway, used))
        except Exception as error:  # kept for the next write; newer uses win
            self._used = {**used, **self._used}
            log.warning("planlineage gateway: could not note when sessions were last used: %s", _one_line(error))

    def _apply(self, exchange: Exchange) -> None:
        call, status = exchange.call, exchange.status
        if call.session and 200 <= status < 300:  # the gateway still knows it: in use
            if call.call is Call.CLOSE_SESSION:
                self._used.pop(call.session, None)
            else:
                self._used[call.session] = self._clock()
        if call.call is Call.SESSION_USED:
            return
        if call.call is Call.INFO:
            if 200 <= status < 300 and self.version is None:
                self.version = answers.flink_version(exchange.response_body)
            return
        if call.call in (Call.RESULT, Call.STATUS):
            if call.session and call.operation:
                self._operation(call.call, call.session, call.operation, status, exchange)
            return
        if not 200 <= status < 300:
            return  # the gateway refused it: the session did not change
        if call.call is Call.OPEN_SESSION:
            session = answers.text_field(exchange.response_body, "sessionHandle")
            if session:
                properties = answers.properties(exchange.request_body)
                self.store.write(lambda c: ledger.open_session(c, self.gateway, session, properties, exchange.at))
        elif call.call is Call.CLOSE_SESSION and call.session:
            session = call.session
            self.store.write(lambda c: ledger.close_session(c, self.gateway, session))
        elif call.call in _STATEMENT_KINDS and call.session:
            self._statement(exchange)

    def _statement(self, exchange: Exchange) -> None:
        call = exchange.call
        session = call.session or ""
        text = answers.text_field(exchange.request_body, _STATEMENT_FIELDS[call.call])
        if text is None:
            # Not read (over the size the proxy keeps) or not JSON: the session's script has a gap
            # from here on, which the lineage side would compile wrongly; said once per statement.
            log.warning(
                "planlineage gateway: a %s of session %s was not recorded (its body was not read or not JSON)",
                call.call.value,
                session,
            )
            return
        operation = answers.text_field(exchange.response_body, "operationHandle")
        kind = _STATEMENT_KINDS[call.call]
        self.store.write(lambda c: ledger.append(c, self.gateway, session, kind, text, operation, exchange.at))

    def _operation(self, call: Call, session: str, operation: str, status: int, exchange: Exchange) -> None:
        """A statement's result or status: its job id, or that it failed.

        The gateway accepts any statement (an operation handle) and runs it afterwards: one that
        fails answers its first fetch with an error (500), or its status with ERROR.  Such a
        statement changed nothing in the session, so it is left out of the session's script (it
        would make every later compile fail).  A result answered once (not NOT_READY) was run:
        a later error (the operation closed, the session gone) does not undo it."""
        ok = 200 <= status < 300
        if call is Call.STATUS:
            if ok and answers.text_field(exchange.response_body, "status") == "ERROR":
                self._failed(session, operation)
            return
        if not ok:
            if operation not in self._answered:
                self._failed(session, operation)
            return
        if answers.text_field(exchange.response_body, "resultType") in ("PAYLOAD", "EOS"):
            self._answered[operation] = None
            if len(self._answered) > _ANSWERED_KEPT:
                del self._answered[next(iter(self._answered))]
        found = answers.job_id(exchange.response_body)
        if found and found not in self._handed:
            self._job(session, operation, found, exchange.at)

    def _failed(self, session: str, operation: str) -> None:
        if self.store.write(lambda c: ledger.forget_statement(c, self.gateway, session, operation)):
            log.warning(
                "planlineage gateway: a statement of session %s failed at the gateway; left out of its script",
                session,
            )

    def _job(self, session: str, operation: str, job_id: str, at: float) -> None:
        script = self.store.read(lambda c: ledger.script_until(c, self.gateway, session, operation))
        if script is None:
            self._handed.add(job_id)  # nothing to hand over; not asked again on its later pages
            log.warning(
                "planlineage gateway: job %s of session %s: the statement that started it was not seen "
                "by this proxy (sent before it stood in front of the gateway?); not reported",
                job_id,
                session,
            )
            return
        if not self.store.write(lambda c: ledger.claim_job(c, job_id, self.gateway, session, operation, at)):
            self._handed.add(job_id)  # handed over before (before a restart, or by another proxy)
            return
        self._handed.add(job_id)
        submitted = JobSubmitted(
            gateway=self.gateway,
            session=session,
            operation=operation,
            job_id=job_id,
            statements=script.statements,
            properties=script.properties,
            submitted_at=at,
            flink_version=self._flink_version(),
        )
        try:
            self.on_job(submitted)
        except Exception:
            # Not handed over: the claim is released so the next answer naming the job tries again.
            self._handed.discard(job_id)
            self.store.write(lambda c: ledger.release_job(c, job_id))
            raise

    def _flink_version(self) -> str | None:
        if self.version is None and self.ask_version is not None:
            try:
                self.version = self.ask_version()
            except Exception as error:
                log.warning("planlineage gateway: could not ask the gateway its version: %s", _one_line(error))
        return self.version


def _size(exchange: Exchange) -> int:
    return len(exchange.request_body or b"") + len(exchange.response_body or b"")


class _Marker(NamedTuple):
    done: threading.Event


def _one_line(error: BaseException) -> str:
    from planlineage.registry.secrets import redact_text

    text = " ".join(str(error).split()) or type(error).__name__
    return redact_text(text)[:300]
