"""Which class archive a planner JVM records and maps: one per Java runtime, named after the
version its ``release`` file states; an AOT cache from Java 25, a class-data sharing archive
before."""

from __future__ import annotations

from pathlib import Path

import pytest

from planlineage.planner import class_archive


def runtime(tmp_path: Path, release: str | None) -> str:
    """A Java runtime image with a ``release`` file (or none); the path of its ``java`` launcher."""
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text("#!/bin/sh\n")
    if release is not None:
        (home / "release").write_text(release)
    return str(java)


def test_the_runtime_version_is_read_from_its_release_file(tmp_path):
    java = runtime(
        tmp_path, 'IMPLEMENTOR="Eclipse Adoptium"\nJAVA_VERSION="25.0.3"\nJAVA_RUNTIME_VERSION="25.0.3+9-LTS"\n'
    )
    assert class_archive.runtime_version(java) == "25.0.3"


def test_a_launcher_reached_through_a_link_names_its_runtime(tmp_path):
    java = runtime(tmp_path, 'JAVA_VERSION="17.0.15"\n')
    link = tmp_path / "usr-bin-java"
    link.symlink_to(java)
    assert class_archive.runtime_version(str(link)) == "17.0.15"


@pytest.mark.parametrize("release", [None, "IMPLEMENTOR=somebody\n", 'JAVA_VERSION="; rm -rf /"\n'])
def test_a_runtime_that_does_not_state_a_usable_version_has_none(tmp_path, release):
    assert class_archive.runtime_version(runtime(tmp_path, release)) is None


@pytest.mark.parametrize(
    ("version", "feature"),
    [("25.0.3", 25), ("17.0.15", 17), ("21", 21), ("1.8.0_402", 8), ("26-ea", 26), (None, None), ("", None)],
)
def test_the_feature_release_of_a_version(version, feature):
    assert class_archive.feature_release(version) == feature


def test_java_25_and_later_get_an_aot_cache_and_earlier_runtimes_a_class_data_archive(tmp_path):
    assert class_archive.archive_path(tmp_path, "25.0.3") == tmp_path / "planner-java25.0.3.aot"
    assert class_archive.archive_path(tmp_path, "26.0.1") == tmp_path / "planner-java26.0.1.aot"
    assert class_archive.archive_path(tmp_path, "21.0.8") == tmp_path / "planner-java21.0.8.jsa"
    assert class_archive.archive_path(tmp_path, "17.0.15") == tmp_path / "planner-java17.0.15.jsa"
    assert class_archive.archive_path(tmp_path, None) == tmp_path / "planner.jsa"


def test_each_kind_is_recorded_and_mapped_with_its_own_options(tmp_path):
    aot = tmp_path / "planner-java25.0.3.aot"
    jsa = tmp_path / "planner-java17.0.15.jsa"
    assert class_archive.record_options(aot) == [f"-XX:AOTCacheOutput={aot}"]
    assert class_archive.record_options(jsa) == [f"-XX:ArchiveClassesAtExit={jsa}"]
    assert class_archive.use_options(aot) == [] and class_archive.use_options(jsa) == []  # not recorded yet
    aot.write_bytes(b"x")
    jsa.write_bytes(b"x")
    assert class_archive.use_options(aot) == [f"-XX:AOTCache={aot}"]
    assert class_archive.use_options(jsa) == [f"-XX:SharedArchiveFile={jsa}"]
