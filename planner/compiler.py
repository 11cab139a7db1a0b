"""Talks to a compile server: the child process that runs in a Flink version's virtualenv.

One `Planner` is one JVM. A cold `extract` starts one, compiles one job and closes it; tests and
warm workers keep it and send many jobs, each compiled in a fresh TableEnvironment.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import re
import subprocess
import threading
import time
from importlib import resources
from pathlib import Path

from planlineage.errors import PlannerError, PlannerTimeout
from planlineage.planner.provisioned import Provisioned, find_java_tool

#: JVM flags for a short compile: C1 only and the serial collector start measurably faster on
#: small machines, and a deep stack lets Calcite plan wide joins.
JAVA_OPTIONS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss16m", "-XX:-UsePerfData"]
START_TIMEOUT = 60.0
LOG_LIMIT = 5 * 1024 * 1024
#: The server writes "id" first in every answer, so the answer to a request is found by its prefix.
_ANSWER_ID = re.compile(r'\{"id": (\d+)[,}]')


class Planner:
    def __init__(
        self,
        provisioned: Provisioned,
        *,
        start_timeout: float = START_TIMEOUT,
        java_options: list[str] | None = None,
        long_lived: bool = False,
    ):
        """`long_lived`: many jobs will follow, so the server prepares each next environment
        between jobs (a one-job planner would only pay for it before exiting)."""
        self.provisioned = provisioned
        java = find_java_tool("java")
        if java is None:
            raise PlannerError("no `java` found (JAVA_HOME or PATH): install a Java 11+ runtime.")
        _trim_log(provisioned.log)
        server = Path(str(resources.files("planlineage.planner.child") / "compile_server.py"))
        command = [str(provisioned.python), str(server), "--lib", str(provisioned.lib), "--log", str(provisioned.log)]
        if provisioned.stand_in:
            command += ["--stand-in", str(provisioned.stand_in)]
        if long_lived:
            command.append("--prepare-next")
        options = list(JAVA_OPTIONS)
        if provisioned.class_archive.exists():
            # Class-data sharing archive made at provisioning: about 1 s off every JVM start.
            options.append(f"-XX:SharedArchiveFile={provisioned.class_archive}")
        options += java_options or []
        command += [f"--java-option={option}" for option in options]
        env = dict(os.environ)
        env["PATH"] = str(Path(java).parent) + os.pathsep + env.get("PATH", "")
        # The child must not see the parent's packages: it runs in the version's venv alone.
        env.pop("PYTHONPATH", None)
        env.pop("PYTHONHOME", None)
        self._log = open(provisioned.log, "ab")  # noqa: SIM115 - closed in close()
        self._process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=env,
            text=True,
            bufsize=1,
            start_new_session=True,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._ids = itertools.count(1)
        self.close_timeout = 5.0
        self.jobs = 0
        ready = json.loads(self._next(time.monotonic() + start_timeout))
        if not ready.get("ready"):
            self.close()
            raise PlannerError(f"the Flink {provisioned.flink.version} planner did not start; see {provisioned.log}")

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _next(self, deadline: float) -> str:
        """The server's next line of JSON, as text (what the JVM prints otherwise is skipped)."""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.close()
                raise PlannerTimeout("the Flink planner did not answer in time")
            try:
                line = self._lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                code = self._process.wait()
                raise PlannerError(f"the Flink planner exited (code {code}); see {self.provisioned.log}")
            line = line.strip()
            if line.startswith("{"):
                return line

    def compile(self, request: dict, timeout: float = 120.0) -> dict:
        """Sends one job; returns the server's answer (see compile_server's docstring)."""
        return json.loads(self.compile_raw(request, timeout))

    def compile_raw(self, request: dict, timeout: float = 120.0) -> str:
        """The server's answer as its JSON text, for a caller that hands it on without reading it."""
        if self._process.poll() is not None:
            raise PlannerError("the Flink planner is not running")
        request = dict(request, id=next(self._ids))
        assert self._process.stdin is not None
        try:
            self._process.stdin.write(json.dumps(request) + "\n")
            self._process.stdin.flush()
        except (BrokenPipeError, OSError) as error:
            raise PlannerError(f"the Flink planner is not running ({error})") from None
        deadline = time.monotonic() + timeout
        while True:
            answer = self._next(deadline)
            matched = _ANSWER_ID.match(answer)
            if matched and int(matched.group(1)) == request["id"]:
                self.jobs += 1
                return answer

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def alive(self) -> bool:
        return self._process.poll() is None

    def close(self) -> None:
        if self._process.poll() is None:
            try:
                assert self._process.stdin is not None
                self._process.stdin.close()
                self._process.wait(timeout=self.close_timeout)
            except (OSError, subprocess.TimeoutExpired):
                self._process.kill()
                self._process.wait()
        self._log.close()

    def __enter__(self) -> Planner:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _trim_log(path: Path) -> None:
    try:
        if path.stat().st_size > LOG_LIMIT:
            path.write_bytes(b"")
    except FileNotFoundError:
        pass
