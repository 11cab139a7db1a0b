"""Planner JVMs a test started, found by their command line: the test gives them a heap cap
(``PLANLINEAGE_PLANNER_HEAP``) that no other JVM of the test run uses; and a JVM's command line."""

from __future__ import annotations

import time
from pathlib import Path


def command_line(pid: int) -> list[str]:
    """The arguments of a running process (a planner's pid is its JVM's: the server execs java)."""
    return (Path("/proc") / str(pid) / "cmdline").read_bytes().decode(errors="replace").split("\0")


def processes_where(matches) -> list[int]:
    """The running processes whose command line (its arguments) ``matches``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = command_line(int(entry.name))
            except OSError:
                continue
            if matches(argv):
                found.append(int(entry.name))
    return found


def marked_jvms(heap: str) -> list[int]:
    """The processes whose command line caps the heap at ``heap`` (``777m``)."""
    return processes_where(lambda argv: f"-Xmx{heap}" in argv)


def wait_until(condition, timeout: float) -> bool:
    """Whether ``condition()`` came true within ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True
