"""Hostile input against the real planner: a planner JVM dies with the command that started it,
its heap is capped, and a script nested too deeply is the script's problem (exit 2)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from marked_jvms import command_line

from planlineage.planner.compiler import Planner

ROOT = Path(__file__).parent.parent.parent
DDL = (
    "CREATE TABLE src (a INT, b STRING) WITH ('connector' = 'datagen');\n"
    "CREATE TABLE snk (a INT, b STRING) WITH ('connector' = 'blackhole');\n"
)
#: A literal large enough that its compile takes many seconds, small enough for the size cap.
LITERAL = 2_000_000


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _written(pid: int) -> int:
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    return 0


def _extract_mid_compile(tmp_path, provisioned):
    """An `extract` whose JVM is compiling a large job: (the command, its JVM's pid)."""
    script = tmp_path / "large.sql"
    script.write_text(DDL + "INSERT INTO snk SELECT a, '" + "x" * LITERAL + "' FROM src;\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    command = subprocess.Popen(
        [sys.executable, "-P", "-m", "planlineage", "extract", str(script), "--format", "json"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        # A test run started in the background of a non-interactive shell inherits SIGINT ignored,
        # and Python then never raises KeyboardInterrupt: give the command Ctrl-C as a terminal would.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 120
    while _written(command.pid) < LITERAL:  # the request is written once the JVM said it is ready
        assert command.poll() is None, command.stderr.read().decode()
        assert time.monotonic() < deadline, "the job was never sent"
        time.sleep(0.1)
    (jvm,) = _children(command.pid)
    assert b"java" in Path(f"/proc/{jvm}/cmdline").read_bytes()
    time.sleep(1.0)  # compiling now (a 2 MB literal takes tens of seconds)
    assert _alive(jvm)
    return command, jvm


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT], ids=["kill", "term", "int"])
def test_the_planner_jvm_dies_with_an_extract_killed_mid_compile(tmp_path, provisioned, how):
    """It outlived a killed extract by minutes (1.3 GB): it reads its input only between jobs."""
    command, jvm = _extract_mid_compile(tmp_path, provisioned)
    try:
        command.send_signal(how)
        command.wait(10)
        assert _gone_within(jvm, 5.0), "the planner JVM outlived the extract that started it"
        if how == signal.SIGTERM:
            assert command.returncode == 128 + signal.SIGTERM
        if how == signal.SIGINT:
            assert command.returncode == 130 and b"Traceback" not in command.stderr.read()
    finally:
        if _alive(jvm):
            os.kill(jvm, signal.SIGKILL)
        command.kill()
        command.wait()


def test_the_planner_heap_is_capped_and_configurable(provisioned, monkeypatch):
    with Planner(provisioned) as planner:
        assert "-Xmx1g" in command_line(planner.pid)
    monkeypatch.setenv("PLANLINEAGE_PLANNER_HEAP", "700m")
    with Planner(provisioned) as planner:
        assert "-Xmx700m" in command_line(planner.pid)


@pytest.mark.parametrize(
    ("text", "code", "said"),
    [
        ("", 2, "holds no SQL statement (it is empty or only comments): nothing to analyse."),
        ("-- every statement commented out\n-- INSERT INTO snk SELECT * FROM src;\n", 2, "holds no SQL statement"),
        (DDL + "SELECT a FROM src;\n", 0, "writes no table (no INSERT, STATEMENT SET or CREATE TABLE AS)"),
    ],
    ids=["empty", "comments", "no-insert"],
)
def test_a_script_without_lineage_says_so_with_the_version_under_test(tmp_path, provisioned, text, code, said):
    """They exited 0 without a word."""
    script = tmp_path / "job.sql"
    script.write_text(text)
    run = [sys.executable, "-P", "-m", "planlineage", "extract", str(script), "--format", "json"]
    result = subprocess.run(
        [*run, "--flink-version", provisioned.flink.minor],
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == code and said in result.stderr and "Traceback" not in result.stderr
    if code == 0:
        assert '"sinks": []' in result.stdout
    else:
        assert result.stdout == ""
