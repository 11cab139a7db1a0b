"""A home's compile service and the planner JVMs under it, found in /proc: one harness for the
lifecycle tests, tests/flink/test_compile_service_load.py and bench/lifecycle_load.py."""

from __future__ import annotations

from pathlib import Path


def stat_fields(pid: int) -> list[str]:
    """The fields of /proc/<pid>/stat after the command name (state first)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def services(home: Path) -> list[int]:
    """Pids of the live (not zombie) compile services of ``home``."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
            state = stat_fields(int(proc.name))[0]
        except OSError:
            continue
        if b"_compile-service" in cmdline and any(str(home).encode() in part for part in cmdline) and state != "Z":
            found.append(int(proc.name))
    return found


def process_tree(root: int) -> list[int]:
    """``root`` and every process under it."""
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        try:  # children hang off the thread that started them: every task of the process
            for task in Path(f"/proc/{pid}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def planner_jvms(home: Path) -> list[int]:
    """Live JVMs under the compile services of ``home``."""
    found = []
    for service in services(home):
        for pid in process_tree(service):
            try:
                if Path(f"/proc/{pid}/comm").read_text().strip() == "java" and stat_fields(pid)[0] != "Z":
                    found.append(pid)
            except OSError:
                continue
    return found
