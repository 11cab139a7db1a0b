"""A warm `extract` through the CLI is a thin client: the warm planner compiles, walks, names and
renders, and the command prints the very bytes it would have printed by itself, importing neither
the pipeline nor pydantic nor networkx (nor anything of the event side)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from planlineage.pipeline import ExtractError, extract
from planlineage.planner import warm
from planlineage.render import FORMATS, render

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from command_imports import imported_by

ROOT = Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "examples" / "cdc_pipeline.sql"
#: What only the command's own (not warm) path loads: the document's models, the walk, the naming.
PIPELINE = {"planlineage.pipeline", "planlineage.document", "planlineage.registry", "planlineage.planner.walk"}


@pytest.fixture(scope="module")
def running_worker(tmp_path_factory, provisioned):
    folder = Path("/tmp") / f"pl-imports-{os.getpid()}-{tmp_path_factory.mktemp('w').name[-8:]}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(warm.PLANNER_DIR_ENV, str(folder))
        warm.start(provisioned.flink.minor, warm.Limits(), idle_seconds=300)
        try:
            yield provisioned.flink.minor
        finally:
            warm.stop()
            for leftover in folder.glob("*"):
                leftover.unlink()
            folder.rmdir()


def jobs() -> int:
    (status,) = warm.status()
    return status["jobs"]


def test_warm_extract_imports_neither_the_pipeline_nor_pydantic_nor_networkx(running_worker):
    before = jobs()
    found = imported_by(
        ["extract", str(SCRIPT), "--flink-version", running_worker, "--format", "json"], env=dict(os.environ)
    )
    assert found["code"] == 0
    assert not set(found["top"]) & {"pydantic", "pydantic_core", "networkx", "openlineage", "httpx", "httpcore"}
    assert not set(found["planlineage"]) & PIPELINE
    assert not [m for m in found["planlineage"] if m.startswith(("planlineage.graph", "planlineage.planner.columns"))]
    assert jobs() == before + 1  # answered by the warm planner, not a cold child


def cli(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-P", "-m", "planlineage", "extract", *argv],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        cwd=cwd,
        timeout=300,
    )


@pytest.mark.parametrize("columns", [False, True])
@pytest.mark.parametrize("fmt", FORMATS)
def test_the_warm_planner_prints_what_the_command_prints_by_itself(running_worker, fmt, columns):
    before = jobs()
    done = cli(str(SCRIPT), "--flink-version", running_worker, "--format", fmt, *(["--columns"] if columns else []))
    assert done.returncode == 0, done.stderr
    assert jobs() == before + 1
    # The command's own path: the pipeline and the renderer in this process.
    itself = render(extract(SCRIPT.read_text(), flink_version=running_worker, columns=columns), fmt, str(SCRIPT))
    assert done.stdout == itself
    assert done.stderr == ""


def test_a_script_that_does_not_compile_ends_the_command_as_it_would_by_itself(running_worker, tmp_path):
    bad = tmp_path / "bad.sql"
    bad.write_text(
        "CREATE TABLE s (a INT) WITH ('connector' = 'datagen', 'password' = 's3cr3t-test-only');\n"
        "CREATE TABLE o (a INT) WITH ('connector' = 'blackhole');\n"
        "INSERT INTO o SELECT no_such_column FROM s;\n"
    )
    with pytest.raises(ExtractError) as itself:
        extract(bad.read_text(), flink_version=running_worker)
    done = cli(str(bad), "--flink-version", running_worker)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"planlineage: {itself.value}\n"
    assert "s3cr3t-test-only" not in done.stderr


def test_what_the_warm_planner_cannot_say_as_the_command_would_the_command_says_itself(running_worker, tmp_path):
    """A rules file named relative to the command's folder, and a missing jar: the messages name
    them as the user did."""
    (tmp_path / "rules.toml").write_text("[connectors]\n")
    done = cli(str(SCRIPT), "--flink-version", running_worker, "--rules", "missing.toml", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (2, "planlineage: missing.toml: identity configuration file not found\n")
    done = cli(str(SCRIPT), "--flink-version", running_worker, "--jar", "no.jar", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.startswith("planlineage: jar no.jar does not exist")
    done = cli(
        str(SCRIPT), "--flink-version", running_worker, "--rules", "rules.toml", "--format", "json", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == render(extract(SCRIPT.read_text(), flink_version=running_worker), "json", str(SCRIPT))
