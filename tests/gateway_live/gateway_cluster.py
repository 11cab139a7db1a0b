"""A real Flink session cluster and the real Flink SQL Gateway on loopback, for the gateway tests.

Built from the jars of a provisioned Flink version (``pyflink/lib``, ``pyflink/opt``,
``pyflink/bin/bash-java-utils.jar``: PyPI's ``apache-flink`` is a Flink distribution without its
scripts) and the SQL Gateway jar from Maven (pinned in tests/artifacts.toml).  Started the way
Flink's own ``bin/`` scripts start them: the JobManager and TaskManager get the JVM and ``-D``
memory flags BashJavaUtils computes from the configuration.  Every JVM started here carries
``-D{MARKER_PROPERTY}=<run id>`` so that :meth:`LiveFlink.stop` can find and kill any of them that
outlived its process handle; logs stay under the work dir for a failing test to show.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from marked_jvms import processes_where

MARKER_PROPERTY = "planlineage.test.gateway_live"

# What the distribution's config file passes to every Flink JVM on Java 17 (env.java.opts.all):
# Flink's serializers and the planner's code generation reflect into these packages.
JAVA17_OPENS = [
    "-XX:+IgnoreUnrecognizedVMOptions",
    *(
        f"--add-exports={module}=ALL-UNNAMED"
        for module in (
            "java.base/sun.net.util",
            "java.rmi/sun.rmi.registry",
            "jdk.compiler/com.sun.tools.javac.api",
            "jdk.compiler/com.sun.tools.javac.file",
            "jdk.compiler/com.sun.tools.javac.parser",
            "jdk.compiler/com.sun.tools.javac.tree",
            "jdk.compiler/com.sun.tools.javac.util",
            "java.security.jgss/sun.security.krb5",
        )
    ),
    *(
        f"--add-opens=java.base/{package}=ALL-UNNAMED"
        for package in (
            "java.lang",
            "java.net",
            "java.io",
            "java.nio",
            "sun.nio.ch",
            "java.lang.reflect",
            "java.text",
            "java.time",
            "java.util",
            "java.util.concurrent",
            "java.util.concurrent.atomic",
            "java.util.concurrent.locks",
        )
    ),
]

LOG4J = """rootLogger.level = INFO
rootLogger.appenderRef.file.ref = MainAppender
appender.main.name = MainAppender
appender.main.type = File
appender.main.append = true
appender.main.fileName = ${sys:log.file}
appender.main.layout.type = PatternLayout
appender.main.layout.pattern = %d{HH:mm:ss,SSS} %-5p %c{1} - %m%n
"""


class ClusterError(RuntimeError):
    """A Flink process did not come up; the message names its log."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def java() -> str:
    home = os.environ.get("JAVA_HOME")
    return str(Path(home) / "bin" / "java") if home else (shutil.which("java") or "java")


def marked_pids(run_id: str) -> list[int]:
    """The processes started with ``-D{MARKER_PROPERTY}={run_id}`` that are still alive."""
    flag = f"-D{MARKER_PROPERTY}={run_id}"
    return processes_where(lambda argv: flag in argv)


def port_is_free(port: int) -> bool:
    """Whether nothing listens on the loopback ``port`` (connections in TIME_WAIT do not count: a
    server binds with SO_REUSEADDR, as this probe does)."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@dataclass
class FlinkJars:
    """The jars of one provisioned Flink version."""

    version: str  # the full version, e.g. 2.3.0
    lib: Path  # pyflink/lib

    @property
    def pyflink(self) -> Path:
        return self.lib.parent

    @property
    def classpath(self) -> str:
        return str(self.lib / "*")

    @property
    def sql_client(self) -> Path:
        return next((self.pyflink / "opt").glob("flink-sql-client*.jar"))

    @property
    def bash_java_utils(self) -> Path:
        return self.pyflink / "bin" / "bash-java-utils.jar"

    @property
    def config_file(self) -> str:
        # Flink 2.x reads only config.yaml; 1.x the legacy flink-conf.yaml (flat keys suit both)
        return "config.yaml" if int(self.version.split(".")[0]) >= 2 else "flink-conf.yaml"


@dataclass
class LiveFlink:
    """A session cluster (one JobManager, one TaskManager) and a SQL Gateway in front of it."""

    jars: FlinkJars
    gateway_jar: Path
    work: Path
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    jobmanager_port: int = 0
    gateway_port: int = 0
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def jobmanager(self) -> str:
        return f"http://127.0.0.1:{self.jobmanager_port}"

    @property
    def gateway(self) -> str:
        return f"http://127.0.0.1:{self.gateway_port}"

    @property
    def conf(self) -> Path:
        return self.work / "conf"

    @property
    def logs(self) -> Path:
        return self.work / "log"

    # --- start -------------------------------------------------------------------------------

    def start(self) -> LiveFlink:
        self.jobmanager_port, self.gateway_port = free_port(), free_port()
        self._write_conf()
        try:
            self._start_with_retry("jobmanager", self._start_jobmanager, self._jobmanager_ready)
            self._start_with_retry("taskmanager", self._start_taskmanager, self._taskmanager_registered)
            self._start_with_retry("sql-gateway", self._start_gateway, self._gateway_ready)
        except BaseException:
            self.stop()
            raise
        return self

    def _write_conf(self) -> None:
        self.conf.mkdir(parents=True, exist_ok=True)
        self.logs.mkdir(parents=True, exist_ok=True)
        (self.work / "tmp").mkdir(exist_ok=True)
        settings = {
            "jobmanager.rpc.address": "127.0.0.1",
            "jobmanager.rpc.port": free_port(),
            "jobmanager.bind-host": "127.0.0.1",
            "taskmanager.bind-host": "127.0.0.1",
            "taskmanager.host": "127.0.0.1",
            "rest.address": "127.0.0.1",
            "rest.bind-address": "127.0.0.1",
            "rest.port": self.jobmanager_port,
            "jobmanager.memory.process.size": "1000m",
            "taskmanager.memory.process.size": "1200m",
            "taskmanager.numberOfTaskSlots": 6,
            "parallelism.default": 1,
            # a job that fails at run time fails at once, instead of restarting
            "restart-strategy.type": "none",
            "io.tmp.dirs": str(self.work / "tmp"),
            "web.tmpdir": str(self.work / "tmp"),
            "sql-gateway.endpoint.rest.address": "127.0.0.1",
            "sql-gateway.endpoint.rest.bind-address": "127.0.0.1",
            "sql-gateway.endpoint.rest.port": self.gateway_port,
        }
        text = "".join(f"{key}: {value}\n" for key, value in settings.items())
        (self.conf / self.jars.config_file).write_text(text)
        (self.conf / "log4j.properties").write_text(LOG4J)

    def _resource_params(self, which: str) -> tuple[list[str], list[str]]:
        """BashJavaUtils' JVM flags and ``-D`` dynamic properties for ``JM`` or ``TM``."""
        command = [java(), "-cp", f"{self.jars.bash_java_utils}:{self.jars.classpath}"]
        command += ["org.apache.flink.runtime.util.bash.BashJavaUtils", f"GET_{which}_RESOURCE_PARAMS"]
        command += ["--configDir", str(self.conf)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        prefix = "BASH_JAVA_UTILS_EXEC_RESULT:"
        results = [line[len(prefix) :] for line in done.stdout.splitlines() if line.startswith(prefix)]
        if done.returncode != 0 or not results:
            raise ClusterError(f"BashJavaUtils {which} failed: {(done.stdout + done.stderr)[-2000:]}")
        jvm = results[0].split()
        dynamic = results[1].split() if len(results) > 1 else []
        return jvm, dynamic

    def _jvm(self, name: str, classpath: str, main: str, jvm_flags: list[str], args: list[str]) -> None:
        log = self.logs / f"{name}.log"
        command = [java(), f"-D{MARKER_PROPERTY}={self.run_id}", *jvm_flags, *JAVA17_OPENS]
        command += [f"-Dlog.file={log}", f"-Dlog4j.configurationFile=file:{self.conf / 'log4j.properties'}"]
        command += ["-cp", classpath, main, *args]
        env = {**os.environ, "FLINK_CONF_DIR": str(self.conf)}
        with (self.logs / f"{name}.out").open("ab") as out:
            self.processes[name] = subprocess.Popen(
                command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, cwd=self.work
            )

    def _start_jobmanager(self) -> None:
        jvm, dynamic = self._resource_params("JM")
        main = "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint"
        self._jvm("jobmanager", self.jars.classpath, main, jvm, ["--configDir", str(self.conf), *dynamic])

    def _start_taskmanager(self) -> None:
        jvm, dynamic = self._resource_params("TM")
        main = "org.apache.flink.runtime.taskexecutor.TaskManagerRunner"
        self._jvm("taskmanager", self.jars.classpath, main, jvm, ["--configDir", str(self.conf), *dynamic])

    def _start_gateway(self) -> None:
        classpath = f"{self.jars.classpath}:{self.gateway_jar}"
        main = "org.apache.flink.table.gateway.SqlGateway"
        self._jvm("sql-gateway", classpath, main, ["-Xmx512m"], [])

    def _jobmanager_ready(self) -> bool:
        return self._get_json(f"{self.jobmanager}/overview") is not None

    def _taskmanager_registered(self) -> bool:
        overview = self._get_json(f"{self.jobmanager}/overview")
        return bool(overview) and overview.get("taskmanagers", 0) >= 1 and overview.get("slots-total", 0) >= 1

    def _gateway_ready(self) -> bool:
        return self._get_json(f"{self.gateway}/api_versions") is not None

    @staticmethod
    def _get_json(url: str) -> dict | None:
        try:
            response = httpx.get(url, timeout=2)
        except httpx.HTTPError:
            return None
        return response.json() if response.status_code == 200 else None

    def _start_with_retry(self, name: str, start, ready, attempts: int = 3, timeout: float = 90) -> None:
        # Under load a fresh Flink JVM now and then dies at start without a word: start it again.
        for attempt in range(1, attempts + 1):
            start()
            process = self.processes[name]
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and process.poll() is None:
                if ready():
                    return
                time.sleep(0.3)
            self._end(name)
            with (self.logs / f"{name}.out").open("a") as out:
                out.write(f"\n--- attempt {attempt} did not come up (exit {process.returncode}); retrying ---\n")
        raise ClusterError(f"the {name} did not come up after {attempts} attempts; see {self.logs}")

    # --- jobs at the JobManager --------------------------------------------------------------

    def job(self, job_id: str) -> dict:
        response = httpx.get(f"{self.jobmanager}/jobs/{job_id}", timeout=10)
        response.raise_for_status()
        return response.json()

    def wait_for_state(self, job_id: str, states: set[str], timeout: float = 120) -> str:
        deadline = time.monotonic() + timeout
        state = "?"
        while time.monotonic() < deadline:
            try:
                state = self.job(job_id)["state"]
            except httpx.HTTPError:
                state = "unknown to the JobManager"
            if state in states:
                return state
            time.sleep(0.3)
        raise AssertionError(f"job {job_id} is {state}, not {sorted(states)} after {timeout}s; logs in {self.logs}")

    def cancel(self, job_id: str) -> None:
        httpx.patch(f"{self.jobmanager}/jobs/{job_id}", params={"mode": "cancel"}, timeout=10).raise_for_status()

    def running_jobs(self) -> list[str]:
        overview = httpx.get(f"{self.jobmanager}/jobs/overview", timeout=10).json()
        return [job["jid"] for job in overview["jobs"] if job["state"] not in {"FINISHED", "FAILED", "CANCELED"}]

    # --- stop --------------------------------------------------------------------------------

    def _end(self, name: str) -> None:
        process = self.processes.pop(name, None)
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def stop(self) -> None:
        for name in ("sql-gateway", "taskmanager", "jobmanager"):
            self._end(name)
        for name in list(self.processes):
            self._end(name)
        for pid in marked_pids(self.run_id):  # a JVM whose handle was lost (a retried start)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def __enter__(self) -> LiveFlink:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
