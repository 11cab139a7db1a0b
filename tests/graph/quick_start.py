"""README.md's Quick start 3 as printed: its first code block's commands, run as a user runs them
from a checkout (the examples folder beside them), `ui` until it serves the page and then stopped
with Ctrl-C as the README says. Used with the recorded planner (tests/cli) and the real one
(tests/flink)."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
EXAMPLES = ROOT / "examples"


def commands() -> list[list[str]]:
    """The commands of Quick start 3's first `sh` block, comments stripped, `planlineage` first."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Quick start 3", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "Quick start 3 has no sh code block"
    found = [shlex.split(line, comments=True) for line in block.group(1).splitlines() if line.strip()]
    assert found and all(argv[0] == "planlineage" for argv in found), found
    return found


def run(cwd: Path, env: dict[str, str], timeout: float = 600) -> dict[str, str]:
    """Runs every command in ``cwd`` (a copy of the examples in it); each must succeed. Returns the
    output of each command by its name (`ui`: the page's JSON)."""
    shutil.copytree(EXAMPLES, cwd / "examples")
    outputs: dict[str, str] = {}
    for argv in commands():
        command = [sys.executable, "-P", "-m", "planlineage", *argv[1:]]
        if argv[1] == "ui":
            outputs["ui"] = _served(command, cwd, env, timeout)
            continue
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, timeout=timeout)
        assert done.returncode == 0, (argv, done.stderr.decode())
        outputs[argv[1]] = done.stdout.decode() + done.stderr.decode()
    return outputs


def _served(command: list[str], cwd: Path, env: dict[str, str], timeout: float) -> str:
    # Ctrl-C reaches it even when the tests run in the background of a non-interactive shell, which
    # starts them with SIGINT ignored (and Python keeps an inherited SIG_IGN).
    process = subprocess.Popen(
        command, cwd=cwd, env=env, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    try:
        end = time.monotonic() + timeout
        url = None
        while url is None and time.monotonic() < end:
            line = process.stderr.readline()  # type: ignore[union-attr]
            assert line or process.poll() is None, "ui ended before serving"
            found = re.search(r"serving (http://\S+/)", line)
            url = found.group(1) if found else None
        assert url, "ui did not say where it serves"
        with urllib.request.urlopen(url + "api/graph", timeout=30) as answer:
            page = json.loads(answer.read())
    finally:
        process.send_signal(signal.SIGINT)  # Ctrl-C, as the README says
        code = process.wait(30)
    assert code == 0, f"ui ended with {code} on Ctrl-C"
    return json.dumps(page)
