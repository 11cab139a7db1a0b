"""Talks to a compile server: the child process that runs in a Flink version's virtualenv.

One `Planner` is one JVM. A cold `extract` starts one, compiles one job and closes it; tests and
warm planners keep it and send many jobs, each compiled in a fresh TableEnvironment; a backfill
sends them from several threads to a JVM that compiles as many at once.
"""

from __future__ import annotations

import json
import os
import re
from importlib import resources
from pathlib import Path

from planlineage.errors import PlannerError, PlannerTimeout
from planlineage.line_child import LineChild, child_env, find_java_tool
from planlineage.planner import class_archive
from planlineage.planner.protocol import CompileAnswer, CompileRequest
from planlineage.planner.provisioned import Provisioned

__all__ = ["Planner", "PlannerError", "PlannerTimeout"]

#: JVM flags for a short compile: C1 only and the serial collector start measurably faster on
#: small machines, and a deep stack lets Calcite plan wide joins.
JAVA_OPTIONS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss16m", "-XX:-UsePerfData"]
START_TIMEOUT = 60.0
#: The planner JVM's heap cap (its -Xmx): without one a JVM may take a quarter of the machine's
#: memory, and a job with a huge literal drove one past 1 GB while other jobs waited. A job that
#: needs more fails alone with an error that says so (OutOfMemoryError is answered, not fatal).
HEAP_ENV = "PLANLINEAGE_PLANNER_HEAP"
DEFAULT_HEAP = "1g"


def heap() -> str:
    """The heap cap from ``PLANLINEAGE_PLANNER_HEAP`` (``512m``, ``2g``; anything else: 1g)."""
    value = os.environ.get(HEAP_ENV, "").strip()
    return value if re.fullmatch(r"[1-9][0-9]*[kKmMgG]?", value) else DEFAULT_HEAP


class Planner(LineChild):
    def __init__(
        self,
        provisioned: Provisioned,
        *,
        start_timeout: float = START_TIMEOUT,
        java_options: list[str] | None = None,
        long_lived: bool = False,
        threads: int = 1,
        recording_archive: bool = False,
    ):
        """`long_lived`: many jobs will follow, so the server prepares each next environment
        between jobs (a one-job planner would only pay for it before exiting). `threads`: how
        many jobs the JVM compiles at once, for callers that send jobs from several threads.
        `recording_archive`: the JVM records the class archive (its `java_options` say where), so
        it maps none."""
        self.provisioned = provisioned
        java = find_java_tool("java")
        if java is None:
            raise PlannerError("no `java` found (JAVA_HOME or PATH): install a Java 11+ runtime.")
        server = Path(str(resources.files("planlineage.planner.child") / "compile_server.py"))
        command = [str(provisioned.python), str(server), "--lib", str(provisioned.lib), "--log", str(provisioned.log)]
        if provisioned.stand_in:
            command += ["--stand-in", str(provisioned.stand_in)]
        if long_lived:
            command.append("--prepare-next")
        if threads > 1:
            command += ["--threads", str(threads)]
        options = [*JAVA_OPTIONS, *provisioned.flink.java_options, f"-Xmx{heap()}"]
        if not recording_archive:
            # The class archive recorded at provisioning for this Java runtime: about 1 s off every
            # JVM start (planlineage.planner.class_archive).
            options += class_archive.use_options(provisioned.class_archive(java))
        options += java_options or []
        command += [f"--java-option={option}" for option in options]
        self.jobs = 0
        name = "the Flink planner"
        super().__init__(
            command, child_env(java), provisioned.log, name, start_timeout, close_timeout=5.0, in_turn=threads == 1
        )
        if not self.hello.get("ready"):
            self.close()
            raise PlannerError(f"the Flink {provisioned.flink.version} planner did not start; see {provisioned.log}")

    def compile(self, request: CompileRequest, timeout: float = 120.0) -> CompileAnswer:
        """Sends one job; returns the server's answer (see compile_server's docstring)."""
        answer: CompileAnswer = json.loads(self.compile_raw(request, timeout))
        return answer

    def compile_raw(self, request: CompileRequest, timeout: float = 120.0) -> str:
        """The server's answer as its JSON text, for a caller that hands it on without reading it."""
        answer = self.ask_raw(request, timeout)
        with self._lock:  # jobs may be answered in several threads at once
            self.jobs += 1
        return answer

    def __enter__(self) -> Planner:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
