"""`watch --history` refuses what it cannot do, with a line that says what to change (exit 2,
no traceback, nothing connected to)."""

from __future__ import annotations

import pytest

from planlineage.cli.main import main

URL = "postgresql://planlineage@127.0.0.1:1/streampark"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--history"], "--history replays once: add --once"),
        (["--once", "--since", "2026-01-01"], "--since applies to --history: add --history"),
        (["--history", "--once", "--since", "2026-13-01"], "--since '2026-13-01': give a day as YYYY-MM-DD"),
        (["--history", "--once", "--streampark-timezone", "Mars/Base"], "'Mars/Base': not a time zone"),
    ],
)
def test_history_usage_errors_say_what_to_change(args, said, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("PLANLINEAGE_HOME", str(tmp_path))
    assert main(["watch", "--streampark-db", URL, *args]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err
