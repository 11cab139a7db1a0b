"""Helpers of the lifecycle CLI tests (a CLI runner whose compile service compiles with the
recorded planner: real pipeline, recorded plans, no JVM)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compile_services import services
from recorded_planner import RecordedPlanner


def lineage_settings(token: str, **settings: str | None):
    """The settings (`Settings.config()`) of the defaults, an address, `token`, the Flink
    listener toggle on, and `settings` (a None value unsets one)."""
    from planlineage.config import from_listing
    from planlineage.settings import Settings
    from planlineage.store.sqlite import Store

    base = {"lineage.address": "http://127.0.0.1:8090", "lineage.token": token, "lineage.flink-listener": "true"}
    base.update(settings)
    result = Settings(Store("/nonexistent/planlineage-test.db"), environ={}).list()
    result.update({k: (v, "store") for k, v in base.items() if v is not None})
    return from_listing(result)


class Cli:
    """Runs `python -m planlineage ...` like a platform does: a fresh process per command."""

    def __init__(self, home: Path, tmp: Path):
        self.home = home
        self.tmp = tmp
        # neither planlineage's nor OpenLineage's configuration from the outside
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("PLANLINEAGE_", "OPENLINEAGE_"))}
        self.env["PLANLINEAGE_HOME"] = str(home)
        self.planner = RecordedPlanner(tmp / "flink-cache")
        self.env.update(self.planner.env())
        # No warm planner of the machine's user answers for ours (socket paths are short: not tmp).
        self.env["PLANLINEAGE_PLANNER_DIR"] = tempfile.mkdtemp(prefix="pl-life-")
        self.env["PLANLINEAGE_COMPILE_FLUSH_SECONDS"] = "3"
        # The compile service stops soon after its work, so that a test can wait for it to end.
        self.env["PLANLINEAGE_COMPILE_IDLE_SECONDS"] = "0.3"

    def __call__(self, *args: str, input: bytes | None = None, timeout: float = 60, **env: str):
        environment = dict(self.env, **env)
        return subprocess.run(
            [sys.executable, "-P", "-m", "planlineage", *args],
            input=input,
            capture_output=True,
            env=environment,
            timeout=timeout,
            cwd=self.tmp,
        )

    def workers(self) -> list[int]:
        """Pids of the live (not zombie) compile services of this home."""
        return services(self.home)

    def wait_workers(self, timeout: float = 30.0) -> None:
        end = time.monotonic() + timeout
        while self.workers():
            if time.monotonic() > end:
                raise AssertionError(f"compile service still running: {self.workers()}")
            time.sleep(0.05)


def wait_for(predicate, timeout: float = 20.0, what: str = "condition"):
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
