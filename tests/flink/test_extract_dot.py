"""`planlineage extract job.sql --format dot` on a real planner: the STATEMENT SET's sinks as child
jobs inside the script's cluster, every table's dataset named."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from planlineage.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

pytestmark = pytest.mark.flink


def test_extract_statement_set_as_dot(provisioned, capsys):
    assert main(["extract", str(EXAMPLES / "statement_set.sql"), "--format", "dot"]) == 0
    text = capsys.readouterr().out
    assert text.startswith('digraph "statement_set" {')
    assert 'label="STATEMENT SET statement_set"' in text
    assert text.count('"statement_set.') >= 2  # one child job per sink
    if shutil.which("dot"):
        proc = subprocess.run(["dot", "-Tsvg"], input=text, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
