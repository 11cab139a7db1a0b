"""``planlineage gateway`` run as users run it (its own process, the real CLI), and what reached
the lineage backend behind it, read per sink dataset."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from gateway_cluster import LiveFlink, free_port
from gravitino_server import GravitinoTestServer
from marked_jvms import processes_where

# The heap cap of the planner JVMs the proxy's compiles start: no other JVM of the test run uses
# it, so the session's end finds and stops them (tests/marked_jvms.py).
PLANNER_HEAP = "901m"
TERMINAL = {"COMPLETE", "FAIL", "ABORT"}


@dataclass
class Proxy:
    live: LiveFlink
    lineage: GravitinoTestServer
    planner_dir: str
    work: Path
    port: int = 0
    process: subprocess.Popen | None = None
    starts: int = 0
    env: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.work / "proxy.log"

    def start(self, timeout: float = 60) -> None:
        """Starts the proxy (again, on the same home and port after :meth:`kill`); waits until it answers."""
        self.work.mkdir(parents=True, exist_ok=True)
        self.port = self.port or free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PLANLINEAGE_", "OPENLINEAGE_"))}
        env.update(
            PLANLINEAGE_HOME=str(self.work / "home"),
            PLANLINEAGE_PLANNER_DIR=self.planner_dir,
            PLANLINEAGE_PLANNER_HEAP=PLANNER_HEAP,
            PLANLINEAGE_LINEAGE_ADDRESS=self.lineage.address,
            PLANLINEAGE_LINEAGE_RETRY_BACKOFF="0.5",
            # the compile service a proxy's lineage work starts ends soon after its last job
            PLANLINEAGE_COMPILE_IDLE_SECONDS="0.5",
            **self.env,
        )
        if os.environ.get("PLANLINEAGE_FLINK_CACHE"):  # the provisioned versions
            env["PLANLINEAGE_FLINK_CACHE"] = os.environ["PLANLINEAGE_FLINK_CACHE"]
        command = [sys.executable, "-P", "-m", "planlineage", "gateway", "--listen", self.endpoint]
        command += ["--sql-gateway", self.live.gateway, "--jobmanager", self.live.jobmanager]
        self.starts += 1
        with self.log.open("a") as out:
            out.write(f"--- start {self.starts}: {' '.join(command)}\n")
            out.flush()
            self.process = subprocess.Popen(
                command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, cwd=self.work
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"planlineage gateway exited {self.process.returncode}:\n{self.output()}")
            try:
                if httpx.get(f"{self.url}/api_versions", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"planlineage gateway did not answer within {timeout}s:\n{self.output()}")

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-6000:] if self.log.exists() else ""

    def kill(self) -> None:
        """Ends the proxy at once (SIGKILL): no goodbye, as a crashed or OOM-killed one."""
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        # the detached compile service of this proxy's home (a killed proxy leaves it behind)
        for pid in self.helpers():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def helpers(self) -> list[int]:
        """The processes started for this proxy's home that are still alive."""
        home = str(self.work / "home")
        return processes_where(lambda argv: "--home" in argv and home in argv)


def outputs(event: dict[str, Any]) -> set[tuple[str, str]]:
    return {(dataset["namespace"], dataset["name"]) for dataset in event.get("outputs") or []}


def inputs(event: dict[str, Any]) -> set[tuple[str, str]]:
    return {(dataset["namespace"], dataset["name"]) for dataset in event.get("inputs") or []}


def run_of(event: dict[str, Any]) -> str:
    return event["run"]["runId"]


@dataclass
class SinkRuns:
    """What the backend received about the runs that wrote one sink dataset."""

    sink: tuple[str, str]
    starts: list[dict[str, Any]]  # the START events naming the sink as an output
    events: list[dict[str, Any]]  # every event of those STARTs' runs, in arrival order

    @property
    def types(self) -> Counter:
        return Counter(event["eventType"] for event in self.events)

    @property
    def terminal(self) -> list[str]:
        return [event["eventType"] for event in self.events if event["eventType"] in TERMINAL]


def sink_runs(server: GravitinoTestServer, sink: tuple[str, str]) -> SinkRuns:
    events = list(server.events)
    starts = [e for e in events if e["eventType"] == "START" and sink in outputs(e)]
    runs = {run_of(e) for e in starts}
    return SinkRuns(sink, starts, [e for e in events if run_of(e) in runs])


def wait_for_end(
    server: GravitinoTestServer, sink: tuple[str, str], proxy: Proxy, timeout: float = 120, settle: float = 1
) -> SinkRuns:
    """The sink's runs once each has a terminal event (and ``settle`` seconds more, for a duplicate
    to show if one were coming)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        seen = sink_runs(server, sink)
        runs = {run_of(e) for e in seen.starts}
        ended = {run_of(e) for e in seen.events if e["eventType"] in TERMINAL}
        if runs and runs <= ended:
            time.sleep(settle)
            return sink_runs(server, sink)
        time.sleep(0.3)
    seen = sink_runs(server, sink)
    kinds = [(e["eventType"], sorted(outputs(e))) for e in server.events]
    raise AssertionError(
        f"no START and terminal event for sink {sink} within {timeout}s: runs {dict(seen.types)}; "
        f"all events {kinds}\nproxy log:\n{proxy.output()}"
    )


def assert_reported_once(
    server: GravitinoTestServer,
    proxy: Proxy,
    sink: tuple[str, str],
    terminal: str,
    sources: set[tuple[str, str]] | None = None,
) -> SinkRuns:
    """One START naming ``sink`` (with ``sources`` as its inputs when given), then exactly one
    terminal event ``terminal`` on its run, and no event of the run twice."""
    seen = wait_for_end(server, sink, proxy)
    assert len(seen.starts) == 1, f"{len(seen.starts)} STARTs name {sink}: {seen.starts}"
    if sources is not None:
        assert inputs(seen.starts[0]) == sources, seen.starts[0]
    assert seen.terminal == [terminal], f"{sink}: terminal events {seen.terminal}, not [{terminal}]"
    # a run may name several sinks (a STATEMENT SET): the same kind about the same outputs twice is a duplicate
    sent = Counter((event["eventType"], tuple(sorted(outputs(event)))) for event in seen.events)
    twice = {kind: count for kind, count in sent.items() if count > 1}
    assert not twice, f"{sink}: events sent more than once: {twice}"
    return seen
