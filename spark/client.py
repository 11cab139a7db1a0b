"""Talks to the Spark analyze server: the child that runs in a Spark version's virtualenv.

One `SparkParser` is one child process with one JVM (one local SparkSession). A cold `extract`
starts one, sends one job and closes it; a test module keeps one and sends many jobs.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import threading
import time
from importlib import resources
from pathlib import Path

from planlineage.planner.compiler import PlannerError
from planlineage.planner.provision import find_java_tool
from planlineage.spark.provision import ProvisionedSpark

#: A session that only parses: C1 only, the serial collector and a small heap start fastest on
#: small machines; a deep stack lets the parser take long scripts.
JAVA_OPTIONS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss16m", "-XX:-UsePerfData"]
START_TIMEOUT = 120.0
LOG_LIMIT = 5 * 1024 * 1024


class SparkParser:
    def __init__(self, provisioned: ProvisionedSpark, *, start_timeout: float = START_TIMEOUT):
        self.provisioned = provisioned
        java = find_java_tool("java")
        if java is None:
            raise PlannerError("no `java` found (JAVA_HOME or PATH): install a Java 17 runtime for Spark.")
        _trim_log(provisioned.log)
        server = Path(str(resources.files("planlineage.spark.child") / "analyze_server.py"))
        command = [str(provisioned.python), str(server), *[f"--java-option={o}" for o in JAVA_OPTIONS]]
        env = dict(os.environ)
        env["PATH"] = str(Path(java).parent) + os.pathsep + env.get("PATH", "")
        if "JAVA_HOME" not in env:
            # spark-submit needs JAVA_HOME or `java` on PATH; give it the one we found.
            env["JAVA_HOME"] = str(Path(os.path.realpath(java)).parent.parent)
        for key in ("PYTHONPATH", "PYTHONHOME", "SPARK_HOME", "PYSPARK_SUBMIT_ARGS"):
            env.pop(key, None)  # the child runs on its venv's PySpark alone
        env["SPARK_LOCAL_IP"] = "127.0.0.1"
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
        threading.Thread(target=self._read, daemon=True).start()
        self._ids = itertools.count(1)
        ready = self._next(time.monotonic() + start_timeout)
        if not ready.get("ready"):
            self.close()
            raise PlannerError(f"Spark {provisioned.spark.version} did not start; see {provisioned.log}")
        self.version = ready.get("spark_version") or provisioned.spark.version

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _next(self, deadline: float) -> dict:
        """The next protocol line (a JSON object with `ready` or `id`)."""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.close()
                raise PlannerError(f"Spark did not answer in time; see {self.provisioned.log}")
            try:
                line = self._lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                code = self._process.wait()
                raise PlannerError(f"the Spark analyzer exited (code {code}); see {self.provisioned.log}")
            line = line.strip()
            if line.startswith("{"):
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if isinstance(message, dict) and ("ready" in message or "id" in message):
                    return message

    def parse(self, statements: list[dict], timeout: float = 120.0) -> dict:
        """Sends one job's statements; returns the server's answer (see analyze_server)."""
        if self._process.poll() is not None:
            raise PlannerError("the Spark analyzer is not running")
        request = {"id": next(self._ids), "statements": statements}
        assert self._process.stdin is not None
        try:
            self._process.stdin.write(json.dumps(request) + "\n")
            self._process.stdin.flush()
        except OSError as error:
            raise PlannerError(f"the Spark analyzer is not running ({error})") from None
        deadline = time.monotonic() + timeout
        while True:
            answer = self._next(deadline)
            if answer.get("id") == request["id"]:
                return answer

    def close(self) -> None:
        if self._process.poll() is None:
            try:
                assert self._process.stdin is not None
                self._process.stdin.close()
                self._process.wait(timeout=20)
            except (OSError, subprocess.TimeoutExpired):
                self._process.kill()
                self._process.wait()
        self._log.close()

    def __enter__(self) -> SparkParser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _trim_log(path: Path) -> None:
    try:
        if path.stat().st_size > LOG_LIMIT:
            path.write_bytes(b"")
    except FileNotFoundError:
        pass
