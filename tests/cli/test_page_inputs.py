"""`ui`, `graph` and `doctor` read a script, a folder of scripts, `extract`'s JSON output and event
files alike, told apart by content, and say what a file is when it is none of these.

The real CLI in a fresh process per command; only the JVM is replaced by the recorded planner
(tests/lifecycle/recorded_planner.py).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from lifecycle_helpers import Cli
from recorded_planner import case_sql


@pytest.fixture
def cli(clean_env, tmp_path):
    runner = Cli(clean_env, tmp_path)
    yield runner
    runner.planner.release()


def _jobs(cli: Cli) -> Path:
    folder = cli.tmp / "jobs"
    (folder / "nested").mkdir(parents=True)
    for name, case in (("enrich.sql", "regular_join"), ("nested/daily.sql", "batch")):
        (folder / name).write_text(cli.planner.record(case_sql(case), case), encoding="utf-8")
    return folder


def _ok(done) -> str:
    assert done.returncode in (0, 1), done.stderr.decode()  # doctor: 1 = splits found
    return done.stdout.decode()


def _dot_lines(text: str) -> list[str]:
    """The DOT's lines without the ids that differ between two runs of the same jobs."""
    return sorted(re.sub(r"[0-9a-f]{8}-[0-9a-f-]{27}", "RUN", line) for line in text.splitlines())


def test_a_folder_extract_output_and_its_events_are_the_same_graph(cli):
    folder = _jobs(cli)
    lines = cli.tmp / "lines.jsonl"
    lines.write_bytes(cli("extract", str(folder)).stdout)
    events = cli.tmp / "events.jsonl"
    assert cli("extract", str(folder), "--events", str(events)).returncode == 0

    from_scripts = cli("graph", str(folder), "--format", "dot")
    assert from_scripts.returncode == 0, from_scripts.stderr.decode()
    assert "enrich" in from_scripts.stdout.decode() and "daily" in from_scripts.stdout.decode()
    for other in (lines, events):
        drawn = cli("graph", str(other), "--format", "dot")
        assert drawn.returncode == 0, drawn.stderr.decode()
        assert _dot_lines(drawn.stdout.decode()) == _dot_lines(from_scripts.stdout.decode()), other.name

    said = _ok(cli("doctor", str(folder), str(lines), "--events", str(events)))
    assert f"read {events}: " in said
    assert f"read {folder / 'enrich.sql'}: script compiled: 1 event(s)" in said
    assert f"read {lines}: extract lines: 2 job(s)" in said
    assert not cli.home.exists()  # nothing written, nothing configured


def test_one_script_and_one_extract_document_by_content_not_suffix(cli):
    folder = _jobs(cli)
    script = cli.tmp / "enrich.txt"  # a script under another suffix
    shutil.copy(folder / "enrich.sql", script)
    document = cli.tmp / "enrich_job.out"
    document.write_bytes(cli("extract", str(folder / "enrich.sql"), "--format", "json").stdout)
    events = cli.tmp / "events.sql"  # events under a script's suffix
    assert cli("extract", str(script), "--events", str(events)).returncode == 0

    said = _ok(cli("doctor", str(script), str(document), str(events)))
    assert f"read {script}: script compiled: 1 event(s)" in said
    assert f"read {document}: extract document: 1 event(s)" in said
    assert f"read {events}: 1 event(s)" in said

    page = cli.tmp / "lineage.html"
    drawn = cli("graph", str(document), "--out", str(page))
    assert drawn.returncode == 0, drawn.stderr.decode()
    assert "1 job(s)" in drawn.stderr.decode() and "enrich_job" in page.read_text(encoding="utf-8")


def test_a_file_that_is_none_of_these_is_said_to_be(cli):
    notes = cli.tmp / "notes.txt"
    notes.write_text("remember to buy milk\nand bread\n", encoding="utf-8")
    empty = cli.tmp / "empty"
    empty.mkdir()
    for command in ("doctor", "graph", "ui"):
        done = cli(command, str(notes), *(["--out", str(cli.tmp / "x.html")] if command == "graph" else []))
        assert done.returncode == 2
        err = done.stderr.decode()
        assert f"{notes} is none of what this command reads" in err, err
        assert "a .sql script, a folder of them, extract's JSON output" in err and "Traceback" not in err
    done = cli("doctor", str(empty))
    assert done.returncode == 2 and b"is a folder without a .sql script below it" in done.stderr
    done = cli("doctor", str(cli.tmp / "missing.sql"))
    assert done.returncode == 2 and b"missing.sql: no such file or folder" in done.stderr


def test_a_script_that_does_not_compile_is_left_out_with_flinks_reason(cli):
    folder = _jobs(cli)
    broken = cli.planner.record_error("INSERT INTO nowhere SELECT 1", "Object 'nowhere' not found")
    (folder / "broken.sql").write_text(broken, encoding="utf-8")

    done = cli("doctor", str(folder))
    said = _ok(done)
    assert "broken.sql is left out" in done.stderr.decode() and "Object 'nowhere' not found" in done.stderr.decode()
    assert f"read {folder / 'broken.sql'}: not compiled" in said
    assert "compiled 3 scripts" in done.stderr.decode() and "2 ok, 1 failed" in done.stderr.decode()

    alone = cli("graph", str(folder / "broken.sql"), "--format", "dot")
    assert alone.returncode == 2
    assert b"broken.sql cannot be compiled" in alone.stderr and b"Object 'nowhere' not found" in alone.stderr


def test_ui_serves_the_scripts_of_a_folder(cli):
    """`ui` compiles the folder once and serves its jobs."""
    import os
    import signal
    import subprocess
    import sys
    import time
    import urllib.request

    folder = _jobs(cli)
    process = subprocess.Popen(
        [sys.executable, "-P", "-m", "planlineage", "ui", str(folder), "--port", "0"],
        env=cli.env,
        cwd=cli.tmp,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C reaches it even when the tests run in the background of a non-interactive shell,
        # which starts them with SIGINT ignored (and Python keeps an inherited SIG_IGN).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        url = None
        end = time.monotonic() + 60
        while url is None and time.monotonic() < end:
            line = process.stderr.readline()
            found = re.search(r"serving (http://\S+/)", line)
            url = found.group(1) if found else None
            assert line or process.poll() is None, "ui ended before serving"
        assert url, "ui did not say where it serves"
        with urllib.request.urlopen(url + "api/graph", timeout=10) as answer:
            body = json.loads(answer.read())
        text = json.dumps(body)
        assert "enrich" in text and "daily" in text
    finally:
        os.kill(process.pid, signal.SIGINT)
        process.wait(10)
