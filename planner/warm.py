"""Warm planners: one long-lived compile server per Flink version, reached over a local socket.

A cold compile pays for a JVM start and the planner's first compile (seconds); a warm JVM
compiles the next job in a TableEnvironment of its own in a fraction of a second. A warm planner is a
small daemon that keeps one `Planner` per Flink version and serves compile requests on a Unix
socket that only its user can open (a 0700 folder, a 0600 socket). Callers that find none
fall back to a cold child, so a missing or dead warm planner costs time, never a result.

`SelfHealingPlanner` is what both the daemon and the batch mode (`extract DIR --jobs N`) run: it
restarts a planner that died, kills and replaces one that hangs past the job timeout, and
recycles it after a number of jobs or once its memory grows past a limit.
"""

from __future__ import annotations

import json
import os
import socketserver
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from planlineage.errors import PlannerError, PlannerTimeout, WarmPlannerError
from planlineage.planner.compiler import Planner
from planlineage.planner.protocol import CompileAnswer, CompileRequest
from planlineage.planner.provision import Provisioned, ensure
from planlineage.planner.warm_client import (
    PLANNER_DIR_ENV,
    call,
    compile_warm,
    idle_marker,
    planner_dir,
    socket_name,
    socket_path,
    status,
    stop,
)
from planlineage.planner.warm_up import TRAINING_SCRIPTS, WARM_UP, training_requests

#: The caller's side (planner.warm_client) is named here too, with the daemon it talks to.
__all__ = [
    "PLANNER_DIR_ENV",
    "Limits",
    "SelfHealingPlanner",
    "call",
    "compile_warm",
    "planner_dir",
    "serve",
    "socket_name",
    "socket_path",
    "start",
    "status",
    "stop",
]

DEFAULT_IDLE_SECONDS = 15 * 60
#: A JVM is replaced after this many jobs, a guard against leaks its memory cap would not see.
#: Each new JVM compiles at half speed while its JIT warms (25 jobs/s in its first 300 jobs, 66-74
#: after), so replacing often costs throughput; one JVM grew 294 -> 327 MB over 4,500 jobs on two
#: threads (~8 kB a job), far under the memory cap by 20,000.
DEFAULT_MAX_JOBS = 20_000
DEFAULT_MAX_RSS_MB = 600
DEFAULT_JOB_TIMEOUT = 120.0
#: A planner's memory is read after its first job, then at most this often: reading the process
#: tree's /proc files right after each answer added 0.1-0.2 ms to every warm job (a job is ~15 ms),
#: while memory grows over many jobs, so a check every half second stops a planner as surely.
DEFAULT_MEMORY_CHECK_SECONDS = 0.5


@dataclass
class Limits:
    job_timeout: float = DEFAULT_JOB_TIMEOUT
    max_jobs: int = DEFAULT_MAX_JOBS
    max_rss_mb: int = DEFAULT_MAX_RSS_MB
    memory_check_seconds: float = DEFAULT_MEMORY_CHECK_SECONDS


class SelfHealingPlanner:
    """A Planner that is replaced when it dies, hangs, or has served long enough.

    Safe to use from several threads at once (a backfill's threads share one): with `threads`
    above 1 its JVM compiles that many jobs at once. A planner due for recycling takes no new job
    and is closed when its last job in flight is answered.
    """

    def __init__(self, provisioned: Provisioned, limits: Limits | None = None, threads: int = 1):
        self.provisioned = provisioned
        self.limits = limits or Limits()
        self.threads = threads
        self._planner: Planner | None = None
        self._lock = threading.Lock()
        self._in_flight: dict[Planner, int] = {}
        self.generation = 0  # how many planners this one has started
        self.jobs = 0
        self._memory_read_at = float("-inf")  # when the running planner's memory was last read

    def compile(self, request: CompileRequest, timeout: float | None = None) -> CompileAnswer:
        """The compile server's answer; a planner that dies mid-job is replaced and asked again once.

        `timeout` is accepted for the Planner interface; the job timeout of the limits applies.
        """
        answer: CompileAnswer = json.loads(self.compile_raw(request))
        return answer

    def compile_raw(self, request: CompileRequest) -> str:
        """`compile`'s answer as JSON text, for the daemon, which hands it on unread."""
        for attempt in (1, 2):
            planner = self._take()
            try:
                answer = planner.compile_raw(request, timeout=self.limits.job_timeout)
            except PlannerError as error:
                self._give_back(planner, retire=True)
                timed_out = isinstance(error, PlannerTimeout)
                if timed_out or attempt == 2:
                    # A job that hangs would hang again: report it rather than retry it.
                    reason = f"the job took longer than {self.limits.job_timeout:g} s" if timed_out else str(error)
                    return json.dumps({"ok": False, "error": {"statement": None, "message": reason}})
                continue
            with self._lock:
                self.jobs += 1
            due = planner.jobs >= self.limits.max_jobs or self._over_memory(planner)
            self._give_back(planner, retire=due)
            return answer
        raise AssertionError("unreachable")

    def _over_memory(self, planner: Planner) -> bool:
        """Whether the planner's process tree has grown past the limit, read when it is due."""
        now = time.monotonic()
        if now - self._memory_read_at < self.limits.memory_check_seconds:
            return False
        self._memory_read_at = now
        return process_tree_rss_mb(planner.pid) > self.limits.max_rss_mb

    def start(self) -> int:
        """Starts the planner now unless one runs; its process id (recorded by callers before a job)."""
        planner = self._take()
        self._give_back(planner, retire=False)
        return planner.pid

    def _take(self) -> Planner:
        """The running planner (started when there is none or it died), with one more job in flight."""
        with self._lock:
            dead = self._retire() if self._planner is not None and not self._planner.alive else None
            if self._planner is None:
                self._planner = Planner(self.provisioned, long_lived=True, threads=self.threads)
                self.generation += 1
                self._memory_read_at = float("-inf")  # a new planner is read after its first job
            planner = self._planner
            self._in_flight[planner] = self._in_flight.get(planner, 0) + 1
        if dead is not None:
            dead.close()
        return planner

    def _give_back(self, planner: Planner, retire: bool) -> None:
        """One job fewer in flight on `planner`; `retire`: it takes no new job. A retired planner
        is closed by the last of its jobs."""
        with self._lock:
            left = self._in_flight.pop(planner, 1) - 1
            if left:
                self._in_flight[planner] = left
            if retire and planner is self._planner:
                self._retire()
            close = not left and planner is not self._planner
        if close:
            planner.close()

    def _retire(self) -> Planner | None:
        """(Under the lock.) The next job starts a new planner; the old one, when no job of it is
        in flight, to be closed by the caller (else its last job closes it)."""
        planner, self._planner = self._planner, None
        return planner if planner is not None and planner not in self._in_flight else None

    def rss_mb(self) -> float:
        """Resident memory of the planner's process tree (python child + JVM), in MB."""
        planner = self._planner
        return 0.0 if planner is None else process_tree_rss_mb(planner.pid)

    @property
    def planner_pid(self) -> int | None:
        planner = self._planner
        return planner.pid if planner is not None and planner.alive else None

    def close(self) -> None:
        with self._lock:
            idle = self._retire()
        if idle is not None:
            idle.close()


_PAGE_MB = os.sysconf("SC_PAGE_SIZE") / (1024 * 1024) if hasattr(os, "sysconf") else 4096 / (1024 * 1024)


def process_tree_rss_mb(pid: int) -> float:
    """Checked after every job: statm's one line (resident pages second) is the cheapest read."""
    pages = 0
    for child in [pid, *_descendants(pid)]:
        try:
            with open(f"/proc/{child}/statm", "rb") as statm:
                pages += int(statm.read().split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return pages * _PAGE_MB


def _descendants(pid: int) -> list[int]:
    found: list[int] = []
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return found
    for child in children:
        found.append(int(child))
        found.extend(_descendants(int(child)))
    return found


def start(version: str | None, limits: Limits, idle_seconds: float, wait: float = 90.0) -> dict:
    """Starts a detached warm planner for a version (provisioning it first) and waits until it answers."""
    provisioned = ensure(version)
    minor = provisioned.flink.minor
    planner_dir(create=True)
    path = socket_path(minor)
    try:
        return call(path, {"op": "status"}, 5.0)  # already running
    except (OSError, ValueError, WarmPlannerError):
        path.unlink(missing_ok=True)
    log_path = path.with_suffix(".log")
    command = [
        sys.executable,
        "-P",  # a planlineage/ folder in the working directory must not shadow the package
        "-m",
        "planlineage",
        "planner",
        "serve",
        "--flink-version",
        minor,
        "--idle-timeout",
        str(idle_seconds),
        "--max-jobs",
        str(limits.max_jobs),
        "--max-rss-mb",
        str(limits.max_rss_mb),
        "--job-timeout",
        str(limits.job_timeout),
    ]
    with open(log_path, "ab") as out:
        subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            return call(path, {"op": "status"}, 5.0)
        except (OSError, ValueError, WarmPlannerError):
            time.sleep(0.2)
    raise WarmPlannerError(f"the Flink {minor} warm planner did not start within {wait:g} s; see {log_path}")


# --- the daemon ---------------------------------------------------------------------------


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def serve(version: str | None, limits: Limits, idle_seconds: float) -> int:
    """Runs a warm planner in this process until stopped or idle for `idle_seconds`."""
    provisioned = ensure(version)
    minor = provisioned.flink.minor
    planner_dir(create=True)
    path = socket_path(minor)
    planner = SelfHealingPlanner(provisioned, limits)
    lock = threading.Lock()  # one job at a time per JVM; more throughput = more warm planners
    state = {"last_used": time.monotonic(), "started": time.time()}

    def compile_in_turn(request: CompileRequest) -> CompileAnswer:
        with lock:
            answer = planner.compile(request)
            state["last_used"] = time.monotonic()
        return answer

    from planlineage.planner import warm_extract  # the pipeline: only a warm planner's process needs it

    # Pay the JVM start and the first compile of every common shape now, not on the first jobs,
    # and the first walk, naming and rendering of the command line's `extract`.
    for request in [WARM_UP, *training_requests(provisioned)]:
        planner.compile(request)
    warm_extract.prepare(provisioned, compile_in_turn, TRAINING_SCRIPTS[0])
    planner.jobs = 0

    class Handler(socketserver.StreamRequestHandler):
        """One connection: messages one line each until the caller closes it (compile callers
        keep theirs open for their next job)."""

        def handle(self) -> None:
            for line in self.rfile:
                try:
                    message = json.loads(line)
                except ValueError:
                    return
                if not isinstance(message, dict):
                    return
                self.wfile.write(answer(message))

    def answer(message: dict) -> bytes:
        op = message.get("op")
        if op == "compile":
            with lock:
                raw = planner.compile_raw(cast(CompileRequest, message.get("request") or {}))
                state["last_used"] = time.monotonic()
            return raw.encode() + b"\n"  # the child's line as is: the caller parses it
        if op == "extract":  # the command line's: compiled, walked, named and rendered here
            reply: dict = dict(warm_extract.extract_answer(message["request"], provisioned, compile_in_turn))
        elif op == "status":
            reply = {
                "flink_version": provisioned.flink.version,
                "socket": str(path),
                "pid": os.getpid(),
                "planner_pid": planner.planner_pid,
                "jobs": planner.jobs,
                "planners_started": planner.generation,
                "rss_mb": round(planner.rss_mb(), 1),
                "idle_seconds": round(time.monotonic() - state["last_used"], 1),
                "uptime_seconds": round(time.time() - state["started"], 1),
                "state": "running",
            }
        elif op == "stop":
            reply = {"stopping": True}
            threading.Thread(target=server.shutdown, daemon=True).start()
        else:
            reply = {"error": f"unknown op {op!r}"}
        return json.dumps(reply).encode() + b"\n"

    old_mask = os.umask(0o177)  # the socket is created 0600: only this user may connect
    idle_marker(path).unlink(missing_ok=True)  # running again: nothing to tell
    try:
        path.unlink(missing_ok=True)
        server = _Server(str(path), Handler)
    finally:
        os.umask(old_mask)

    def watch_idle() -> None:
        while True:
            time.sleep(min(5.0, max(idle_seconds / 4, 0.2)))
            if not lock.locked() and time.monotonic() - state["last_used"] > idle_seconds:
                idle_marker(path).touch(mode=0o600)  # read (and removed) by the next compile_warm
                server.shutdown()
                return

    threading.Thread(target=watch_idle, daemon=True).start()
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        path.unlink(missing_ok=True)
        server.server_close()
        planner.close()
    return 0
