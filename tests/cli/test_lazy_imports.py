"""The command line imports only the chosen command's module, and `submit`/`state` only what
records the run (checked in the process that ran them, not by a clock: see
bench/lifecycle_load.py for the time)."""

from __future__ import annotations

import fcntl
import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from command_imports import HEAVY, imported_by
from compile_services import services, stat_fields

from planlineage.cli.main import COMMANDS

COMMAND_MODULES = {f"planlineage.cli.{module}" for module, _ in COMMANDS.values()}
#: Standard modules a command that logs nothing and starts nothing must not load: each costs every
#: one of a platform's concurrent submissions milliseconds of CPU.
SLOW_STDLIB = {"logging", "dataclasses", "inspect", "uuid", "socket", "shutil", "tempfile", "subprocess"}
LISTING = {
    "planlineage",
    "planlineage.cli",
    "planlineage.cli.main",
    "planlineage.deprecated",
    "planlineage.errors",
    "planlineage.lazylog",
}
#: Everything `state` loads: the store, the settings, the run state machine, the spool, and the
#: check that the compile service runs.  Nothing that builds or sends events.
STATE = LISTING | {
    "planlineage.cli.lifecycle",
    "planlineage.cli.messages",
    "planlineage.clock",
    "planlineage.config",
    "planlineage.emitter",
    "planlineage.emitter.run_ids",
    "planlineage.store.sqlite",
    "planlineage.emitter.transport_kinds",
    "planlineage.home",
    "planlineage.known_settings",
    "planlineage.openlineage_config",
    "planlineage.lifecycle",
    "planlineage.lifecycle.fail_open",
    "planlineage.lifecycle.job_files",
    "planlineage.lifecycle.run_rows",
    "planlineage.lifecycle.runs",
    "planlineage.lifecycle.service_start",
    "planlineage.lifecycle.spool",
    "planlineage.settings",
    "planlineage.store",
    "planlineage.store.dialect",
    "planlineage.store.local",
    "planlineage.store.migrations",
    "planlineage.store.url",
}
#: `submit` also reads the script (its statements say whether it writes a table) and queues its compile.
SUBMIT = STATE | {
    "planlineage.script",
    "planlineage.script_size",
    "planlineage.lifecycle.runner",
    "planlineage.lifecycle.compile_queue",
    # the engine picker and the facts of the job's engine (not one of its stages): is it Flink's kind
    # that may coexist with openlineage-flink's listener?
    "planlineage.engines",
    "planlineage.planner.engine",
    "planlineage.planner",
}


#: `extract` with a warm planner running: a thin client that reads the script and prints the warm
#: planner's rendering. Neither the pipeline nor the document's models (pydantic), the walk
#: (networkx), the naming or the planner's own modules: the warm planner holds them.
WARM_EXTRACT = LISTING | {
    "planlineage.cli.extract",
    "planlineage.planner",
    "planlineage.planner.cluster_jars",
    "planlineage.script",
    "planlineage.script_size",
    "planlineage.planner.versions",
    "planlineage.planner.warm_client",
    "planlineage.engines",  # the picker, and the facts of the engine asked for (does it have a warm planner?)
    "planlineage.planner.engine",
}


@pytest.mark.parametrize("argv", [["--help"], [], ["no-such-command"], ["--version"]])
def test_the_listing_imports_no_command(clean_env, argv):
    found = imported_by(argv, env=dict(os.environ))
    assert found["code"] == (2 if argv in ([], ["no-such-command"]) else 0)
    assert set(found["planlineage"]) == LISTING
    assert not set(found["top"]) & (SLOW_STDLIB | set(HEAVY) | {"sqlite3", "platformdirs"})


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_command_imports_its_own_module_only(clean_env, command):
    found = imported_by([command, "--help"], env=dict(os.environ))
    assert found["code"] == 0
    assert set(found["planlineage"]) & COMMAND_MODULES == {f"planlineage.cli.{COMMANDS[command][0]}"}
    assert not set(found["top"]) & set(HEAVY)


@pytest.fixture
def configured(clean_env):
    """Lineage on (an address nothing listens on: submit and state send nothing themselves) and a
    compile service 'running' for the home: its lock held by the test, so nothing is started."""
    from planlineage.settings import Settings

    Settings().set("lineage.address", "http://127.0.0.1:9")
    fd = os.open(clean_env / "compile-service.lock", os.O_CREAT | os.O_RDWR, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    yield clean_env
    os.close(fd)


def test_submit_imports_what_records_the_run_and_nothing_else(configured, tmp_path):
    script = tmp_path / "job.sql"
    script.write_text("INSERT INTO sink SELECT * FROM source;\n", encoding="utf-8")
    found = imported_by(
        ["submit", "--app-id", "app-1", "--job-name", "etl", "--sql-file", str(script), "--lineage-enable"],
        env=dict(os.environ),
    )
    assert found["code"] == 0
    assert set(found["planlineage"]) == SUBMIT
    assert not set(found["top"]) & (SLOW_STDLIB | set(HEAVY) | {"platformdirs"})
    assert len(list((configured / "jobs").glob("*.json"))) == 1  # recorded and queued all the same


def test_state_imports_what_records_the_transition_and_nothing_else(configured, tmp_path):
    script = tmp_path / "job.sql"
    script.write_text("INSERT INTO sink SELECT * FROM source;\n", encoding="utf-8")
    imported_by(
        ["submit", "--app-id", "app-1", "--job-name", "etl", "--sql-file", str(script), "--lineage-enable"],
        env=dict(os.environ),
    )
    found = imported_by(["state", "--app-id", "app-1", "--state", "RUNNING"], env=dict(os.environ))
    assert found["code"] == 0
    assert set(found["planlineage"]) == STATE
    assert not set(found["top"]) & (SLOW_STDLIB | set(HEAVY) | {"platformdirs"})
    from planlineage.store.sqlite import Store

    (row,) = Store(configured / "state.db").rows("SELECT last_event, pending FROM runs")
    assert row["last_event"] == "RUNNING" and '"RUNNING"' in row["pending"]


def test_the_caller_that_starts_the_service_hands_it_the_lock_and_it_runs_niced(clean_env, monkeypatch):
    """From the moment one caller decides to start the service, every other caller sees it running
    (so concurrent submissions start one service, not one interpreter each), and the whole service
    process runs niced."""
    from planlineage.lifecycle import service_start
    from planlineage.store.sqlite import Store

    monkeypatch.setenv("PLANLINEAGE_COMPILE_IDLE_SECONDS", "1")
    clean_env.mkdir(mode=0o700)
    store = Store(clean_env / "state.db")
    assert service_start.ensure_running(store) is True
    # At once, before the new interpreter could have locked anything itself: the lock is held.
    assert service_start.try_lock(service_start.lock_path(store)) is None
    assert service_start.ensure_running(store) is False
    end = time.monotonic() + 20
    nice = group = None
    while time.monotonic() < end:
        pids = services(clean_env)
        if pids:
            assert len(pids) == 1
            try:
                nice = int(stat_fields(pids[0])[16])
                autogroup = Path(f"/proc/{pids[0]}/autogroup")  # Linux's per-session CPU shares
                group = autogroup.read_text().split()[-1] if autogroup.exists() else "10"
            except OSError:
                pass
            if nice == 10 and group == "10":
                break
        time.sleep(0.02)
    # PLANLINEAGE_COMPILE_NICE's default: the process itself, not only its JVMs, and its session's
    # group (autogroup scheduling shares the CPU between sessions before nice values count).
    assert (nice, group) == (10, "10")
    while services(clean_env) and time.monotonic() < end + 20:  # idle: it stops by itself
        time.sleep(0.1)
    assert not services(clean_env)
    fd = service_start.try_lock(service_start.lock_path(store))
    assert fd is not None  # and its lock went with it
    os.close(fd)


def test_warm_extract_is_a_thin_client_of_the_warm_planner(clean_env, tmp_path):
    """A warm planner (here one that answers the socket protocol's `extract` without a JVM) gets the
    script and the options; the command prints its answer and imports nothing that walks or names."""
    import json
    import socket
    import tempfile
    import threading

    folder = Path(tempfile.mkdtemp(prefix="pl-thin-"))  # socket paths are short: not under tmp_path
    from planlineage.planner.warm_client import socket_name

    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(folder / socket_name("1.20")))  # this installation's
    server.listen(1)
    asked = []

    def answer() -> None:
        conn, _ = server.accept()
        with conn:
            asked.append(json.loads(conn.makefile("rb").readline()))
            conn.sendall(json.dumps({"ok": True, "output": "rendered by the warm planner\n"}).encode() + b"\n")

    threading.Thread(target=answer, daemon=True).start()
    script = tmp_path / "job.sql"
    script.write_text("INSERT INTO sink SELECT * FROM source;\n", encoding="utf-8")
    try:
        found = imported_by(
            ["extract", str(script), "--format", "dot", "--columns"],
            env=dict(os.environ, PLANLINEAGE_PLANNER_DIR=str(folder)),
        )
    finally:
        server.close()
        for leftover in folder.iterdir():
            leftover.unlink()
        folder.rmdir()
    assert found["code"] == 0
    ((message,),) = [asked]
    assert message["op"] == "extract"
    request = message["request"]
    assert (request["script"], request["format"], request["columns"]) == (script.read_text(), "dot", True)
    assert (request["name"], request["flink_version"], request["jars"]) == (str(script), None, [])
    assert set(found["planlineage"]) == WARM_EXTRACT
    assert not set(found["top"]) & (set(HEAVY) | {"typing", "subprocess", "sqlite3", "platformdirs", "logging"})


def test_a_lazy_logger_sets_logging_up_before_its_first_record():
    import subprocess

    code = (
        "import sys\n"
        "from planlineage import lazylog\n"
        "log = lazylog.getLogger('planlineage.test')\n"
        "seen = []\n"
        "def set_up(logging):\n"
        "    seen.append('set up')\n"
        "    logging.basicConfig(format='configured: %(message)s')\n"
        "lazylog.on_load(set_up)\n"
        "print('logging' in sys.modules, seen)\n"
        "log.warning('first %s', 'record')\n"
        "log.warning('second')\n"
        "print(seen)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["False []", "['set up']"]  # nothing loaded until a record; set up once
    assert result.stderr.splitlines() == ["configured: first record", "configured: second"]


def test_submit_leaves_without_teardown_yet_loses_neither_its_output_nor_its_records(configured, tmp_path):
    """The installed command exits submit/state with os._exit: what they wrote and said is out first."""
    import subprocess

    env = dict(os.environ)
    command = [sys.executable, "-P", "-m", "planlineage"]
    said = subprocess.run(
        [*command, "submit", "--app-id", "app-1", "--job-name", "etl", "--lineage-enable"]
        + ["--sql-file", str(tmp_path / "missing.sql")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert said.returncode == 0
    assert "missing.sql" in said.stderr  # said, flushed before the fast exit
    ok = tmp_path / "job.sql"
    ok.write_text("INSERT INTO sink SELECT * FROM source;\n", encoding="utf-8")
    for argv in (
        ["submit", "--app-id", "app-2", "--job-name", "etl", "--lineage-enable", "--sql-file", str(ok)],
        ["state", "--app-id", "app-2", "--state", "RUNNING"],
    ):
        assert subprocess.run([*command, *argv], env=env, timeout=60).returncode == 0
    from planlineage.store.sqlite import Store

    rows = Store(configured / "state.db").rows("SELECT app_id, last_event FROM runs ORDER BY app_id")
    assert [(r["app_id"], r["last_event"]) for r in rows] == [("app-1", "START"), ("app-2", "RUNNING")]
    version = subprocess.run([*command, "--version"], capture_output=True, text=True, env=env, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("planlineage ")  # the ordinary exit
