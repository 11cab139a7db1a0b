"""Planner JVMs a test started, found by their command line: the test gives them a heap cap
(``PLANLINEAGE_PLANNER_HEAP``) that no other JVM of the test run uses."""

from __future__ import annotations

import time
from pathlib import Path


def marked_jvms(heap: str) -> list[int]:
    """The processes whose command line caps the heap at ``heap`` (``777m``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if f"-Xmx{heap}".encode() in argv:
                found.append(int(entry.name))
    return found


def wait_until(condition, timeout: float) -> bool:
    """Whether ``condition()`` came true within ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True
