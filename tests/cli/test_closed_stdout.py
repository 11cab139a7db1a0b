"""A reader that stops reading (`planlineage settings list | head -1`) is not the command's
problem: every command ends quietly, exit 0, without a traceback or a message blaming settings,
whether stdout is written as it goes (PYTHONUNBUFFERED) or flushed at the end."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_into_a_closed_pipe(args, home, unbuffered):
    """The command with a stdout whose reader has already gone: every write to it fails (EPIPE)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANLINEAGE_") and k != "PYTHONUNBUFFERED"}
    env.update(PYTHONPATH=str(ROOT), PLANLINEAGE_HOME=str(home))
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    try:
        result = subprocess.run(
            [sys.executable, "-P", "-m", "planlineage", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write_end)
    return result


@pytest.mark.parametrize("unbuffered", [True, False], ids=["unbuffered", "buffered"])
@pytest.mark.parametrize(
    "args",
    [
        ["settings", "list"],
        ["--help"],
        ["settings", "--help"],
        ["identity", '{"connector": "kafka", "topic": "t", "properties.bootstrap.servers": "k1:9092"}'],
    ],
    ids=["settings-list", "help", "command-help", "identity"],
)
def test_a_closed_stdout_ends_the_command_quietly(tmp_path, args, unbuffered):
    result = run_into_a_closed_pipe(args, tmp_path / "home", unbuffered)
    assert result.stderr == ""
    assert result.returncode == 0


def test_settings_still_reports_a_folder_it_cannot_write(tmp_path):
    """The settings command's own OSError message stays for its own files."""
    home = tmp_path / "home"
    home.write_text("not a folder")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANLINEAGE_")}
    env.update(PYTHONPATH=str(ROOT), PLANLINEAGE_HOME=str(home))
    result = subprocess.run(
        [sys.executable, "-P", "-m", "planlineage", "settings", "set", "lineage.namespace", "ns"],
        capture_output=True,
        env=env,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("planlineage: cannot ") and "Not a directory" in result.stderr


def test_a_connection_closed_under_a_command_is_not_taken_for_the_reader_leaving(monkeypatch, capsys):
    from planlineage.cli import main as cli_main
    from planlineage.cli import settings as settings_cli

    def closed(args):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(settings_cli, "cmd_settings", closed)
    assert cli_main.main(["settings", "list"]) == 1
    assert capsys.readouterr().err == "planlineage: the other end closed the connection (Broken pipe)\n"
