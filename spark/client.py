"""Talks to the Spark analyze server: the child that runs in a Spark version's virtualenv.

One `SparkParser` is one child process with one JVM (one local SparkSession). A cold `extract`
starts one, sends one job and closes it; a test module keeps one and sends many jobs.
"""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path

from planlineage.errors import PlannerError
from planlineage.line_child import LineChild, child_env, find_java_tool
from planlineage.spark.provision import ProvisionedSpark
from planlineage.spark.request import ParseRequest

#: A session that only parses: C1 only, the serial collector and a small heap start fastest on
#: small machines; a deep stack lets the parser take long scripts.
JAVA_OPTIONS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss16m", "-XX:-UsePerfData"]
START_TIMEOUT = 120.0


class SparkParser(LineChild):
    def __init__(self, provisioned: ProvisionedSpark, *, start_timeout: float = START_TIMEOUT):
        self.provisioned = provisioned
        java = find_java_tool("java")
        if java is None:
            raise PlannerError("no `java` found (JAVA_HOME or PATH): install a Java 17 runtime for Spark.")
        server = Path(str(resources.files("planlineage.spark.child") / "analyze_server.py"))
        command = [str(provisioned.python), str(server), *[f"--java-option={o}" for o in JAVA_OPTIONS]]
        # the child runs on its venv's PySpark alone
        env = child_env(java, drop=("SPARK_HOME", "PYSPARK_SUBMIT_ARGS"))
        if "JAVA_HOME" not in env:
            # spark-submit needs JAVA_HOME or `java` on PATH; give it the one we found.
            env["JAVA_HOME"] = str(Path(os.path.realpath(java)).parent.parent)
        env["SPARK_LOCAL_IP"] = "127.0.0.1"
        name = "the Spark analyzer"
        super().__init__(command, env, provisioned.log, name, start_timeout, close_timeout=20.0)
        if not self.hello.get("ready"):
            self.close()
            raise PlannerError(f"Spark {provisioned.spark.version} did not start; see {provisioned.log}")
        self.version = self.hello.get("spark_version") or provisioned.spark.version

    def parse(self, request: ParseRequest, timeout: float = 120.0) -> dict:
        """Sends one job's statements; returns the server's answer (see analyze_server)."""
        return json.loads(self.ask_raw(request, timeout))

    def __enter__(self) -> SparkParser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
