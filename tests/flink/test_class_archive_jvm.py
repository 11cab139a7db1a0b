"""The planner's class archive on real JVMs: provisioning records one for the Java runtime in use,
every planner of that runtime maps it, a planner of another runtime gets its own (an AOT cache on
Java 25) recorded once, and a recording that fails is not tried again at every start."""

from __future__ import annotations

import glob
import os
import stat
from pathlib import Path

import pytest
from marked_jvms import command_line

from planlineage.line_child import find_java_tool
from planlineage.pipeline import extract
from planlineage.planner import class_archive
from planlineage.planner.compiler import Planner
from planlineage.planner.provision import ensure
from planlineage.planner.warm_up import WARM_UP

ROOT = Path(__file__).resolve().parents[2]
VERSION = os.environ.get("PLANLINEAGE_TEST_FLINK", "1.20")
SCRIPT = (ROOT / "examples" / "kafka_to_jdbc_enrichment.sql").read_text()


def _argv(planner: Planner) -> list[str]:
    return command_line(planner.pid)


def _java_25_home() -> str | None:
    """A Java 25+ runtime of this machine: PLANLINEAGE_TEST_JAVA25, else one under /usr/lib/jvm."""
    candidates = [os.environ.get("PLANLINEAGE_TEST_JAVA25", "")] + sorted(glob.glob("/usr/lib/jvm/*"))
    for home in candidates:
        java = Path(home) / "bin" / "java"
        if home and java.exists():
            feature = class_archive.feature_release(class_archive.runtime_version(str(java)))
            if feature is not None and feature >= class_archive.AOT_CACHE_SINCE:
                return home
    return None


def test_a_planner_maps_the_archive_recorded_for_its_runtime(provisioned):
    java = find_java_tool("java")
    assert java is not None
    archive = provisioned.class_archive(java)
    assert archive.exists(), f"provisioning recorded no class archive for {java}"
    with Planner(provisioned) as planner:
        assert class_archive.use_options(archive)[0] in _argv(planner)
        assert planner.compile(WARM_UP)["ok"]


def test_a_recording_that_failed_is_not_tried_again(provisioned, tmp_path, monkeypatch):
    # A runtime whose JVM cannot start: its archive cannot be recorded.
    home = tmp_path / "broken-jdk"
    (home / "bin").mkdir(parents=True)
    (home / "release").write_text('JAVA_VERSION="99.0.1"\n')
    java = home / "bin" / "java"
    java.write_text("#!/bin/sh\nexit 1\n")
    java.chmod(java.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("JAVA_HOME", str(home))
    archive = provisioned.class_archive(str(java))
    mark = archive.with_name(archive.name + ".failed")
    try:
        said: list[str] = []
        ensure(VERSION, progress=said.append)
        assert any("recording" in line and "99.0.1" in line for line in said), said
        assert mark.exists() and not archive.exists()
        said.clear()
        ensure(VERSION, progress=said.append)
        assert said == []  # marked: no JVM started for it again
    finally:
        mark.unlink(missing_ok=True)


@pytest.mark.skipif(VERSION != "1.20", reason="one Flink version is enough: runs in the flink120 env")
def test_a_java_25_planner_records_its_aot_cache_once_maps_it_and_answers_alike(provisioned, monkeypatch):
    java_25 = _java_25_home()
    if java_25 is None:
        pytest.skip("no Java 25+ runtime on this machine (set PLANLINEAGE_TEST_JAVA25 to one)")
    default_java = find_java_tool("java")
    with Planner(provisioned) as planner:
        expected = extract(SCRIPT, planner=planner, columns=True).to_json_dict()

    monkeypatch.setenv("JAVA_HOME", java_25)
    archive = provisioned.class_archive(str(Path(java_25) / "bin" / "java"))
    assert archive.suffix == ".aot"
    archive.unlink(missing_ok=True)  # recorded by this test, not left from an earlier run
    said: list[str] = []
    again = ensure(VERSION, progress=said.append)
    assert archive.exists() and any("recording" in line for line in said), said
    said.clear()
    ensure(VERSION, progress=said.append)
    assert said == []
    with Planner(again) as planner:
        assert f"-XX:AOTCache={archive}" in _argv(planner)
        assert extract(SCRIPT, planner=planner, columns=True).to_json_dict() == expected
    assert default_java is not None and provisioned.class_archive(default_java).exists()  # the other runtime's kept
