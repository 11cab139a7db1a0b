"""Provisioning a Flink or Spark version on first use (hundreds of MB, a minute or more) shows its
steps and its download progress, and a process that waits for another one's provisioning (`watch`
waits for the compile service) shows them too."""

from __future__ import annotations

import json
import os
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from planlineage import version_venvs
from planlineage.errors import ProvisionError
from planlineage.version_venvs import PROGRESS_SUFFIX, ProgressFollower, VenvCache

#: A pip that downloads a 3 MB file the way pip does: "Downloading NAME (SIZE)" indented under
#: "Collecting", the file growing in a pip-unpack-* folder of $TMPDIR, then the install.
FAKE_PIP = textwrap.dedent(
    """
    import os, sys, time
    print("Collecting fake-flink==1.0", flush=True)
    print("  Downloading fake_flink-1.0.tar.gz (3.0 MB)", flush=True)
    folder = os.path.join(os.environ["TMPDIR"], "pip-unpack-x1")
    os.mkdir(folder)
    with open(os.path.join(folder, "fake_flink-1.0.tar.gz"), "wb") as handle:
        for _ in range(3):
            handle.write(b"x" * 1_000_000)
            handle.flush()
            time.sleep(0.6)
    print("Installing collected packages: fake-flink", flush=True)
    print("Successfully installed fake-flink-1.0", flush=True)
    """
)

CACHE = VenvCache(engine="Flink", command="flink", cache_env="PLANLINEAGE_TEST_NO_SUCH_CACHE", cache_dir="flink")


def test_a_download_says_its_progress_every_few_seconds(tmp_path, monkeypatch):
    monkeypatch.setattr(version_venvs, "DOWNLOAD_EVERY", 0.25)
    said: list[str] = []
    CACHE.run([sys.executable, "-c", FAKE_PIP], "install Flink 1.0", stream=said.append, downloads=tmp_path / "tmp")
    assert said[:2] == ["    Collecting fake-flink==1.0", "    Downloading fake_flink-1.0.tar.gz (3.0 MB)"]
    progress = [line for line in said if line.startswith("    downloading ")]
    assert progress, said
    assert all(line.startswith("    downloading fake_flink-1.0.tar.gz: ") for line in progress)
    assert all(line.endswith("%)") and " MB of 3.0 MB (" in line for line in progress)
    assert len(progress) == len(set(progress))  # only when it changed
    assert said[-2:] == ["    Installing collected packages: fake-flink", "    Successfully installed fake-flink-1.0"]


def test_pip_size_reading():
    assert version_venvs._bytes("231.5 MB") == 231.5e6
    assert version_venvs._bytes("11 kB") == 11e3
    assert version_venvs._bytes("") is None and version_venvs._bytes("a lot") is None


def fake_build(monkeypatch, pip_lines):
    """VenvCache's steps without a real venv or pip: the venv step makes its python, the pip step
    says ``pip_lines`` as pip's output would be said."""

    def run(self, command, what, stream=None, downloads=None):
        if what == "create the virtualenv":
            python = Path(command[-1]) / "bin" / "python"
            python.parent.mkdir(parents=True)
            python.write_text("")
        for line in pip_lines if stream else []:
            stream("    " + line)
            time.sleep(0.05)

    monkeypatch.setattr(VenvCache, "run", run)


def test_a_provisioning_is_followed_from_another_process(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE.cache_env, str(tmp_path / "cache"))
    fake_build(monkeypatch, ["Collecting apache-flink==1.20.5", "Successfully installed apache-flink-1.20.5"])
    shown: list[str] = []
    said: list[str] = []
    (tmp_path / "cache").mkdir()
    old = tmp_path / "cache" / f"1.19.3{PROGRESS_SUFFIX}"
    old.write_text("provisioning Flink 1.19.3 (an earlier one)\n")
    past = time.time() - 3600
    os.utime(old, (past, past))
    with ProgressFollower([tmp_path / "cache"], shown.append, every=0.05):
        home = CACHE.ensure(
            "1.20.5",
            "f1",
            ["apache-flink==1.20.5"],
            lambda home, venv, say: {"lib": "x"},
            first_use="about a minute",
            download="~250 MB download",
            steps=2,
            progress=said.append,
        )
    assert json.loads((home / "ready.json").read_text())["fingerprint"] == "f1"
    assert said[0].startswith("provisioning Flink 1.20.5 in ")
    assert said[-1].startswith("Flink 1.20.5 ready in ")
    assert "    Collecting apache-flink==1.20.5" in said
    assert shown == said  # every line, in order; not the old file's
    assert not (home / "tmp").exists()


def test_a_failed_provisioning_says_so_in_its_progress(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE.cache_env, str(tmp_path / "cache"))
    fake_build(monkeypatch, ["Collecting apache-flink==1.20.5"])

    def finish(home, venv, say):
        raise ProvisionError("the Flink jars are missing; run `planlineage flink install VERSION`.")

    shown: list[str] = []
    with ProgressFollower([tmp_path / "cache"], shown.append, every=0.05), pytest.raises(ProvisionError):
        CACHE.ensure("1.20.5", "f1", ["x"], finish, first_use="a minute", download="", progress=lambda _: None)
    assert shown[-1] == (
        "provisioning Flink 1.20.5 failed: the Flink jars are missing; run `planlineage flink install VERSION`."
    )
    assert not (tmp_path / "cache" / "1.20.5").exists()


def test_the_progress_file_holds_no_secret(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE.cache_env, str(tmp_path / "cache"))
    fake_build(monkeypatch, ["Looking in indexes: https://user:s3cr3t-test-only@pypi.example/simple"])
    said: list[str] = []
    CACHE.ensure("1.20.5", "f1", ["x"], lambda *_: {}, first_use="a minute", download="", progress=said.append)
    text = (tmp_path / "cache" / f"1.20.5{PROGRESS_SUFFIX}").read_text()
    assert "pypi.example" in text and "s3cr3t-test-only" not in text
    # the screen is masked as the file is: the same lines
    shown = [line for line in said if "pypi.example" in line]
    assert shown and not any("s3cr3t-test-only" in line for line in said)
    assert [line + "\n" for line in shown] == [line for line in text.splitlines(True) if "pypi.example" in line]


def test_a_failed_step_names_no_secret(tmp_path):
    pip = "print('ERROR: 401 from https://user:s3cr3t-test-only@pypi.example/simple/x/'); raise SystemExit(1)"
    with pytest.raises(ProvisionError) as failed:
        CACHE.run([sys.executable, "-c", pip], "install Flink 1.0", stream=lambda _: None, downloads=tmp_path / "tmp")
    assert "pypi.example" in str(failed.value) and "s3cr3t-test-only" not in str(failed.value)


def _closed(message: str) -> None:
    raise ValueError("I/O operation on closed file.")  # what print() to a closed stderr raises


def test_a_closed_stderr_ends_the_download_reports_quietly(tmp_path, monkeypatch):
    died: list[str] = []
    monkeypatch.setattr(
        threading, "excepthook", lambda hook: died.append(f"{hook.exc_type.__name__}: {hook.exc_value}")
    )
    monkeypatch.setattr(version_venvs, "DOWNLOAD_EVERY", 0.05)
    (tmp_path / "pip-unpack-x1").mkdir()
    (tmp_path / "pip-unpack-x1" / "fake_flink-1.0.tar.gz").write_bytes(b"x" * 1000)
    attempts: list[str] = []

    def say(message: str) -> None:
        attempts.append(message)
        _closed(message)

    watch = version_venvs._DownloadWatch(tmp_path, say)
    watch.line("  Downloading fake_flink-1.0.tar.gz (3.0 MB)")
    deadline = time.monotonic() + 5
    while not attempts and time.monotonic() < deadline:
        time.sleep(0.02)
    (tmp_path / "pip-unpack-x1" / "fake_flink-1.0.tar.gz").write_bytes(b"x" * 2000)  # news it would say
    time.sleep(0.3)
    watch.stop()
    assert died == []  # no "Exception in thread" traceback
    assert len(attempts) == 1 and not watch._thread.is_alive()  # one failed report, then none


def test_a_closed_stderr_does_not_stop_a_provisioning(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE.cache_env, str(tmp_path / "cache"))
    fake_build(monkeypatch, ["Collecting apache-flink==1.20.5", "Successfully installed apache-flink-1.20.5"])
    home = CACHE.ensure("1.20.5", "f1", ["x"], lambda *_: {}, first_use="a minute", download="", progress=_closed)
    assert json.loads((home / "ready.json").read_text())["fingerprint"] == "f1"
    lines = (tmp_path / "cache" / f"1.20.5{PROGRESS_SUFFIX}").read_text().splitlines()
    assert "    Successfully installed apache-flink-1.20.5" in lines and lines[-1].startswith("Flink 1.20.5 ready in ")
    # a follower whose stderr is closed ends quietly too
    follower = ProgressFollower([tmp_path / "cache"], _closed, every=0.05)
    follower._started -= 60
    died: list[str] = []
    monkeypatch.setattr(threading, "excepthook", lambda hook: died.append(str(hook.exc_value)))
    follower._thread.start()
    follower._thread.join(timeout=5)
    assert died == [] and not follower._thread.is_alive()


def test_watch_shows_the_provisionings_of_both_caches(tmp_path, monkeypatch, capsys):
    from planlineage.cli import watch

    for engine in ("FLINK", "SPARK"):
        monkeypatch.setenv(f"PLANLINEAGE_{engine}_CACHE", str(tmp_path / engine.lower()))
        (tmp_path / engine.lower()).mkdir()
    with watch._provisioning_shown() as follower:
        follower.every = 0.05
        (tmp_path / "flink" / f"1.19.3{PROGRESS_SUFFIX}").write_text("[2/4] installing apache-flink==1.19.3\n")
        (tmp_path / "spark" / f"3.5.7{PROGRESS_SUFFIX}").write_text("[1/3] creating a virtualenv for Spark 3.5.7\n")
    err = capsys.readouterr().err.splitlines()
    assert sorted(err) == [
        "planlineage watch: [1/3] creating a virtualenv for Spark 3.5.7",
        "planlineage watch: [2/4] installing apache-flink==1.19.3",
    ]
