"""Talks to a compile server: the child process that runs in a Flink version's virtualenv.

One `Planner` is one JVM. A cold `extract` starts one, compiles one job and closes it; tests and
warm planners keep it and send many jobs, each compiled in a fresh TableEnvironment; a backfill
sends them from several threads to a JVM that compiles as many at once.
"""

from __future__ import annotations

import json
import os
import re
import sys
from importlib import resources
from pathlib import Path

from planlineage.errors import PlannerError, PlannerTimeout
from planlineage.line_child import LineChild, child_env, find_java_tool
from planlineage.planner import class_archive
from planlineage.planner.protocol import CompileAnswer, CompileRequest
from planlineage.planner.provisioned import Provisioned

__all__ = ["Planner", "PlannerError", "PlannerTimeout"]

#: JVM flags for a short compile: C1 only and the serial collector start measurably faster on
#: small machines, and a deep stack lets Calcite plan wide joins. Flink's classes log through
#: Log4j's simple logger, errors to stderr (the planner's log) as Log4j's default configuration
#: did, so that no JVM starts Log4j's core (its plugins and its search for a configuration) or
#: walks its stack for each logger the planner's programs create.
JAVA_OPTIONS = [
    "-XX:TieredStopAtLevel=1",
    "-XX:+UseSerialGC",
    "-Xss16m",
    "-XX:-UsePerfData",
    "-Dlog4j2.loggerContextFactory=org.apache.logging.log4j.simple.SimpleLoggerContextFactory",
]
#: Linux only (other JVMs refuse the flag): the heap and the JIT's code on 2 MB pages where the
#: kernel allows them (fewer TLB misses over a JVM's ~100 MB of young heap). Where transparent
#: huge pages are off, the JVM writes a warning to its log and goes on.
LINUX_JAVA_OPTIONS = ["-XX:+UseTransparentHugePages"]
#: For a JVM that compiles many jobs (a warm planner, a backfill, the compile service): C1
#: compiles a method after a quarter of the calls it waits for by default, so the first hundred
#: jobs spend less time in the interpreter. A one-job JVM would compile code it never runs again
#: (0.05 s slower there), so it keeps the default.
#: With the two above: a from-cold backfill's CPU 0.90x, its wall 0.89x (docs/performance.md).
MANY_JOBS_JAVA_OPTIONS = ["-XX:CompileThresholdScaling=0.25"]
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


def java_options_of_this_platform(platform: str = sys.platform) -> list[str]:
    return LINUX_JAVA_OPTIONS if platform.startswith("linux") else []


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
        options = [*JAVA_OPTIONS, *java_options_of_this_platform(), *provisioned.flink.java_options, f"-Xmx{heap()}"]
        if long_lived or threads > 1:
            options += MANY_JOBS_JAVA_OPTIONS
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
