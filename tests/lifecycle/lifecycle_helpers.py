"""Helpers of the lifecycle CLI tests (a CLI runner whose detached workers use a fake planner)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

FAKE_PLANNER = Path(__file__).resolve().parent / "fake_planner"


def lineage_settings(token: str, **settings: str | None) -> dict:
    """Settings as `Settings.list()` gives them: the defaults, an address, `token`, the Flink
    listener toggle on, and `settings` (a None value unsets one)."""
    from planlineage.emitter.store import Store
    from planlineage.settings import Settings

    base = {"lineage.address": "http://127.0.0.1:8090", "lineage.token": token, "lineage.flink-listener": "true"}
    base.update(settings)
    result = Settings(Store("/nonexistent/planlineage-test.db"), environ={}).list()
    result.update({k: (v, "store") for k, v in base.items() if v is not None})
    return result


def write_lineage(path: Path, lineage) -> Path:
    path.write_text(json.dumps(lineage.to_json_dict()), encoding="utf-8")
    return path


class Cli:
    """Runs `python -m planlineage ...` like a platform does: a fresh process per command."""

    def __init__(self, home: Path, tmp: Path):
        self.home = home
        self.tmp = tmp
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("PLANLINEAGE_")}
        self.env["PLANLINEAGE_HOME"] = str(home)
        self.env["PLANLINEAGE_FLINK_CACHE"] = os.environ["PLANLINEAGE_FLINK_CACHE"]
        self.env["PYTHONPATH"] = os.pathsep.join(
            [str(FAKE_PLANNER)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        )
        self.env["PLANLINEAGE_WORKER_FLUSH_SECONDS"] = "3"
        # The compile service stops soon after its work, so that a test can wait for it to end.
        self.env["PLANLINEAGE_COMPILE_IDLE_SECONDS"] = "0.3"
        self.env["PLANLINEAGE_TEST_FAKE_MARK"] = str(tmp / "compiling")

    def fake(self, lineage, delay: float = 0.0) -> None:
        self.env["PLANLINEAGE_TEST_FAKE_LINEAGE"] = str(write_lineage(self.tmp / "fake-lineage.json", lineage))
        self.env["PLANLINEAGE_TEST_FAKE_DELAY"] = str(delay)

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
        found = []
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                cmdline = (proc / "cmdline").read_bytes().split(b"\0")
                state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if (
                b"_compile-service" in cmdline
                and any(str(self.home).encode() in part for part in cmdline)
                and state != "Z"
            ):
                found.append(int(proc.name))
        return found

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
