"""The three clients the tests drive a SQL Gateway with (directly or through ``planlineage gateway``):
its REST API with httpx, the SQL Client jar in gateway mode, and the Flink JDBC driver from a tiny
Java program compiled at test time.  Each submits statements and gives back the job ids it saw."""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from gateway_cluster import JAVA17_OPENS, LOG4J, MARKER_PROPERTY, FlinkJars, java

JOB_ID = re.compile(r"\b[0-9a-f]{32}\b")


@dataclass
class Exchange:
    """One REST call and the gateway's answer, for comparing a direct call with a proxied one."""

    method: str
    path: str
    status: int
    body: bytes
    content_type: str | None


@dataclass
class RestSession:
    """A SQL Gateway session driven over REST (API version ``api``), every exchange kept."""

    base: str
    api: str = "v2"
    properties: dict[str, str] = field(default_factory=dict)
    handle: str = ""
    exchanges: list[Exchange] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.client = httpx.Client(base_url=self.base, timeout=30)

    def call(self, method: str, path: str, **kwargs) -> httpx.Response:
        response = self.client.request(method, path, **kwargs)
        self.exchanges.append(
            Exchange(method, path, response.status_code, response.content, response.headers.get("content-type"))
        )
        return response

    def open(self) -> RestSession:
        body = {"properties": self.properties, "sessionName": "planlineage-gateway-live"}
        response = self.call("POST", f"/{self.api}/sessions", json=body)
        response.raise_for_status()
        self.handle = response.json()["sessionHandle"]
        return self

    def configure(self, statement: str) -> httpx.Response:
        path = f"/{self.api}/sessions/{self.handle}/configure-session"
        return self.call("POST", path, json={"statement": statement})

    def statement(self, sql: str) -> str:
        response = self.call("POST", f"/{self.api}/sessions/{self.handle}/statements", json={"statement": sql})
        response.raise_for_status()
        return response.json()["operationHandle"]

    def fetch(self, operation: str, timeout: float = 120) -> httpx.Response:
        """The gateway's answer to the operation's first result page once it is not NOT_READY."""
        path = f"/{self.api}/sessions/{self.handle}/operations/{operation}/result/0"
        params = {"rowFormat": "JSON"} if self.api != "v1" else {}
        deadline = time.monotonic() + timeout
        while True:
            response = self.call("GET", path, params=params)
            if response.status_code != 200 or response.json().get("resultType") != "NOT_READY":
                return response
            if time.monotonic() > deadline:
                raise AssertionError(f"{path}: not ready after {timeout}s")
            time.sleep(0.2)

    def result(self, operation: str, timeout: float = 120) -> dict:
        """The operation's first page of results, once it is ready (an error answer raises)."""
        response = self.fetch(operation, timeout)
        if response.status_code != 200:
            raise AssertionError(f"{response.url}: {response.status_code} {response.text[:2000]}")
        return response.json()

    def run(self, sql: str) -> dict:
        return self.result(self.statement(sql))

    def submit(self, sql: str) -> str:
        """Runs an INSERT or STATEMENT SET; its job id."""
        page = self.run(sql)
        job_id = page.get("jobID") or page["results"]["data"][0]["fields"][0]
        assert JOB_ID.fullmatch(job_id), page
        return job_id

    def close(self) -> None:
        if self.handle:
            self.call("DELETE", f"/{self.api}/sessions/{self.handle}")
        self.client.close()

    def __enter__(self) -> RestSession:
        return self.open()

    def __exit__(self, *exc) -> None:
        self.close()


def _client_conf(work: Path) -> Path:
    """A configuration directory of the clients' own: none of the cluster's settings."""
    conf = work / "client-conf"
    conf.mkdir(parents=True, exist_ok=True)
    (conf / "config.yaml").write_text("")
    (conf / "flink-conf.yaml").write_text("")
    (conf / "log4j-cli.properties").write_text(LOG4J)
    (conf / "log4j.properties").write_text(LOG4J)
    return conf


def sql_client(jars: FlinkJars, gateway_jar: Path, endpoint: str, script: str, work: Path, run_id: str) -> str:
    """Runs ``script`` with the SQL Client in gateway mode against ``endpoint`` (host:port); its output."""
    conf = _client_conf(work)
    file = work / f"sql-client-{time.monotonic_ns()}.sql"
    file.write_text(script)
    command = [java(), f"-D{MARKER_PROPERTY}={run_id}", "-Xmx256m", f"-Duser.home={work}", *JAVA17_OPENS]
    command += [f"-Dlog.file={work / 'sql-client.log'}", f"-Dlog4j.configurationFile=file:{conf / 'log4j.properties'}"]
    command += ["-cp", f"{jars.classpath}:{jars.sql_client}:{gateway_jar}", "org.apache.flink.table.client.SqlClient"]
    command += ["gateway", "--endpoint", endpoint, "-f", str(file)]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=180,
        cwd=work,
        env={"FLINK_CONF_DIR": str(conf), "PATH": "/usr/bin:/bin", "HOME": str(work)},
    )
    output = done.stdout + done.stderr
    if done.returncode != 0 or "[ERROR]" in output:
        raise AssertionError(f"the SQL Client failed ({done.returncode}):\n{output[-4000:]}")
    return output


@dataclass
class JdbcProgram:
    """GatewayJdbc.java compiled once into ``work``, run with the driver bundle and slf4j-api."""

    work: Path
    driver_jars: list[Path]
    run_id: str

    def __post_init__(self) -> None:
        source = Path(__file__).with_name("GatewayJdbc.java")
        self.classes = self.work / "jdbc-classes"
        self.classes.mkdir(parents=True, exist_ok=True)
        javac = str(Path(java()).with_name("javac"))
        subprocess.run([javac, "-d", str(self.classes), str(source)], check=True, capture_output=True, timeout=120)

    def run(self, endpoint: str, statements: list[str]) -> list[str]:
        """Runs the statements (one per line) on one connection to ``endpoint``; the values it printed."""
        file = self.work / f"jdbc-{time.monotonic_ns()}.sql"
        file.write_text("\n".join(" ".join(sql.split()) for sql in statements) + "\n")
        classpath = ":".join(str(path) for path in [self.classes, *self.driver_jars])
        command = [java(), f"-D{MARKER_PROPERTY}={self.run_id}", "-Xmx256m", "-cp", classpath, "GatewayJdbc"]
        command += [f"jdbc:flink://{endpoint}", str(file)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=180, cwd=self.work)
        if done.returncode != 0:
            raise AssertionError(f"the JDBC program failed ({done.returncode}):\n{(done.stdout + done.stderr)[-4000:]}")
        return [line[len("row: ") :] for line in done.stdout.splitlines() if line.startswith("row: ")]
