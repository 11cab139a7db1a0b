"""A child process in a version's virtualenv, spoken to one JSON object per line.

Flink's compile server and Spark's analyze server share this protocol: the child prints
``{"ready": true, ..}`` once its JVM is up, then answers each request ``{"id": n, ..}`` on stdin
with one line ``{"id": n, ..}`` on stdout. Anything else it prints (a JVM's chatter) is skipped.
Its stderr goes to the version's log, trimmed when it grows. It runs in its own session, so
killing its process group ends its JVM too. Both find their Java with :func:`find_java_tool`.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import re
import select
import shutil
import subprocess
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from planlineage.errors import PlannerError, PlannerTimeout

LOG_LIMIT = 5 * 1024 * 1024
#: Flink's compile server writes "id" first in every answer: its answer is found by this prefix.
_ANSWER_ID = re.compile(r'\{"id": (\d+)[,}]')


def child_env(java: str, drop: tuple[str, ...] = ()) -> dict[str, str]:
    """This process's environment for a child: the found `java` first on PATH, and without the
    parent's Python paths (the child runs on its venv's packages alone) nor ``drop``."""
    env = dict(os.environ)
    env["PATH"] = str(Path(java).parent) + os.pathsep + env.get("PATH", "")
    for key in ("PYTHONPATH", "PYTHONHOME", *drop):
        env.pop(key, None)
    return env


def nice_session_group(pid: int | str, nice: int) -> None:
    """Gives the session group of ``pid`` (a process leading a session of its own; ``"self"``)
    the nice value ``nice``. Linux's autogroup scheduling (most distributions' default) shares the
    CPU between sessions before nice values count, so such a process would otherwise get as much
    CPU as everything else together. No autogroup (or not Linux): its nice value is what counts."""
    try:
        with open(f"/proc/{pid}/autogroup", "w") as group:
            group.write(str(nice))
    except OSError:
        pass


def _keep_niceness(pid: int) -> None:
    """A child in a session of its own keeps its parent's niceness, as soon as it is started,
    before its JVM's start-up work."""
    try:
        nice = os.getpriority(os.PRIO_PROCESS, 0)
    except (OSError, AttributeError):
        return
    if nice > 0:
        nice_session_group(pid, nice)


class LineChild:
    """One child process; ``name`` ("the Flink planner") is how errors call it.

    ``in_turn``: the child answers one request after the other (a JVM with one thread), so the
    thread that asks reads the answer itself and askers take turns. Otherwise a reader thread
    hands each answer to the thread that waits for its id (a JVM with ``--threads N`` answers in
    the order its jobs finish); that handoff wakes a second thread, which cost ~0.15 ms of every
    warm job.
    """

    def __init__(
        self,
        command: list[str],
        env: dict[str, str],
        log: Path,
        name: str,
        start_timeout: float,
        close_timeout: float,
        in_turn: bool = False,
    ):
        self.name = name
        self.log_path = log
        self.close_timeout = close_timeout
        _trim_log(log)
        self._log = open(log, "ab")  # noqa: SIM115 - closed in close()
        self._process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=env,
            start_new_session=True,
        )
        _keep_niceness(self._process.pid)
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._in_turn = in_turn
        #: A job was left unanswered (timed out, or its asker interrupted: Ctrl-C, SIGTERM): the
        #: child, busy with it and not reading its input, is killed rather than waited for.
        self._abandoned = False
        deadline = time.monotonic() + start_timeout
        if in_turn:
            assert self._process.stdout is not None
            self._fd = self._process.stdout.fileno()  # read raw: what is read is in _pending
            self._pending = bytearray()
            self._turn = threading.Lock()
            self.hello = self._message(deadline)
            return
        self._waiting: dict[int, queue.Queue[str | None]] = {}
        self._ended = False
        #: The child's lines that answer nobody waiting: its hello, and chatter that looks like JSON.
        self._unrouted: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        #: The child's first protocol line (``{"ready": true, ..}`` when it started).
        self.hello = self._message(deadline)

    def _read(self) -> None:
        assert self._process.stdout is not None
        for raw in self._process.stdout:
            line = raw.decode("utf-8", "replace").strip()
            if not line.startswith("{"):
                continue  # a JVM's chatter
            ident = _answer_id(line)
            with self._lock:
                box = self._waiting.pop(ident, None) if isinstance(ident, int) else None
            (box if box is not None else self._unrouted).put(line)
        with self._lock:
            self._ended = True
            boxes = list(self._waiting.values())
            self._waiting.clear()
        for box in [*boxes, self._unrouted]:
            box.put(None)

    def _message(self, deadline: float) -> dict:
        """The next protocol message nobody waits for (a JSON object with ``ready`` or ``id``)."""
        while True:
            line = self._line_in_turn(deadline) if self._in_turn else self._wait(self._unrouted, deadline)
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict) and ("ready" in message or "id" in message):
                return message

    def _wait(self, box: queue.Queue[str | None], deadline: float) -> str:
        """The line put in ``box``; the child is closed when none comes before ``deadline``."""
        try:
            line = box.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise self._timeout() from None
        if line is None:
            raise self._exited()
        return line

    def ask_raw(self, request: Mapping[str, Any], timeout: float) -> str:
        """Sends ``request`` with the next id; the child's answer to it, as its JSON text (for a
        caller that hands it on unread). Safe to call from several threads at once."""
        if self._process.poll() is not None:
            raise PlannerError(f"{self.name} is not running")
        try:
            return self._ask(request, timeout)
        except BaseException:
            self._abandoned = True
            raise

    def _ask(self, request: Mapping[str, Any], timeout: float) -> str:
        ident = next(self._ids)
        if self._in_turn:
            return self._ask_in_turn(ident, request, time.monotonic() + timeout)
        box: queue.Queue[str | None] = queue.Queue(maxsize=1)
        with self._lock:
            if self._ended:
                raise PlannerError(f"{self.name} is not running")
            self._waiting[ident] = box
        try:
            self._send(ident, request)
        except PlannerError:
            with self._lock:
                self._waiting.pop(ident, None)
            raise
        try:
            return self._wait(box, time.monotonic() + timeout)
        finally:
            with self._lock:
                self._waiting.pop(ident, None)

    def _send(self, ident: int, request: Mapping[str, Any]) -> None:
        assert self._process.stdin is not None
        line = (json.dumps(dict(request, id=ident)) + "\n").encode()
        try:
            with self._write_lock:
                self._process.stdin.write(line)
                self._process.stdin.flush()
        except (OSError, ValueError) as error:  # ValueError: stdin closed by another thread
            raise PlannerError(f"{self.name} is not running ({error})") from None

    def _ask_in_turn(self, ident: int, request: Mapping[str, Any], deadline: float) -> str:
        """(in_turn) Waits for the turn, sends, and reads lines until the answer to ``ident``."""
        if not self._turn.acquire(timeout=max(0.0, deadline - time.monotonic())):
            raise self._timeout()
        try:
            self._send(ident, request)
            while True:
                line = self._line_in_turn(deadline)
                if _answer_id(line) == ident:
                    return line
        finally:
            self._turn.release()

    def _line_in_turn(self, deadline: float) -> str:
        """(in_turn) The child's next line that may be a message (chatter is skipped); the child
        is closed when none comes before ``deadline``."""
        while True:
            end = self._pending.find(b"\n")
            if end >= 0:
                line = self._pending[:end].decode("utf-8", "replace").strip()
                del self._pending[: end + 1]
                if line.startswith("{"):
                    return line
                continue
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self._fd], [], [], remaining)[0]:
                raise self._timeout()
            chunk = os.read(self._fd, 1 << 16)
            if not chunk:
                raise self._exited()
            self._pending += chunk

    def _exited(self) -> PlannerError:
        """The error of a child whose output ended."""
        return PlannerError(f"{self.name} exited (code {self._process.wait()}); see {self.log_path}")

    def _timeout(self) -> PlannerTimeout:
        """The error of an answer that did not come in time, the child closed."""
        self._abandoned = True
        self.close()
        return PlannerTimeout(f"{self.name} did not answer in time; see {self.log_path}")

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def alive(self) -> bool:
        return self._process.poll() is None

    def close(self) -> None:
        """Closes its stdin (the child exits at end of input), killing it if it does not, or at
        once when a job of it was abandoned."""
        if self._process.poll() is None and self._abandoned:
            self._process.kill()
            self._process.wait()
        if self._process.poll() is None:
            try:
                assert self._process.stdin is not None
                self._process.stdin.close()
                self._process.wait(timeout=self.close_timeout)
            except (OSError, subprocess.TimeoutExpired):
                self._process.kill()
                self._process.wait()
        self._log.close()


def _answer_id(line: str) -> object:
    """The id a line answers: read from its start when the child writes it first (Flink's
    plans are large, so they are not parsed here), else from the parsed line (Spark's)."""
    matched = _ANSWER_ID.match(line)
    if matched:
        return int(matched.group(1))
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message.get("id") if isinstance(message, dict) else None


def _trim_log(path: Path) -> None:
    try:
        if path.stat().st_size > LOG_LIMIT:
            path.write_bytes(b"")
    except FileNotFoundError:
        pass


def find_java_tool(name: str) -> str | None:
    """`java` or `javac` from JAVA_HOME, else from PATH."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / name).exists():
        return str(Path(java_home) / "bin" / name)
    return shutil.which(name)
