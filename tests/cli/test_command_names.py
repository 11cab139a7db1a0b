"""Each word means one thing: `planner` = warm planners, `_compile-service` = the lifecycle's compile service."""

import subprocess
import sys


def run(*args, env_dir):
    import os

    env = dict(os.environ, PLANLINEAGE_PLANNER_DIR=str(env_dir))
    return subprocess.run(
        [sys.executable, "-m", "planlineage", *args], capture_output=True, text=True, timeout=60, env=env
    )


def test_planner_status_without_a_warm_planner(tmp_path):
    result = run("planner", "status", env_dir=tmp_path / "sockets")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "no warm planner running\n"
    assert result.stderr == ""


def test_worker_is_a_deprecated_alias_with_one_line_on_stderr(tmp_path):
    result = run("worker", "status", env_dir=tmp_path / "sockets")
    assert result.returncode == 0
    assert result.stdout == "no warm planner running\n"
    assert (
        result.stderr
        == "planlineage: `planlineage worker` is deprecated (removed in 0.3.0); use `planlineage planner`\n"
    )


def test_help_lists_neither_the_alias_nor_the_internal_compile_service(tmp_path):
    result = run("--help", env_dir=tmp_path / "sockets")
    assert result.returncode == 0
    assert "planner" in result.stdout
    assert "worker" not in result.stdout and "_compile-service" not in result.stdout and "SUPPRESS" not in result.stdout
