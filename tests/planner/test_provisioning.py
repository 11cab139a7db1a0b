"""Provisioning a Flink version installs only what its version file lists, every file verified by
the sha256 listed there (issue #38), with uv where it is found and pip otherwise; a changed version
file re-provisions; without a JDK it stops before downloading anything, and says why."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from planlineage import version_venvs
from planlineage.errors import ProvisionError
from planlineage.flink_versions import supported
from planlineage.planner import provision
from planlineage.version_venvs import VenvCache, install_command, installer

SHA256 = re.compile(r"--hash=sha256:[0-9a-f]{64}")
CACHE = VenvCache(engine="Flink", command="flink", cache_env="PLANLINEAGE_TEST_PROVISIONING_CACHE", cache_dir="flink")


def _pinned_and_hashed(line: str) -> bool:
    name, _, hashes = line.partition(" ")
    return "==" in name and bool(hashes) and all(SHA256.fullmatch(part) for part in hashes.split())


def test_every_version_file_pins_each_file_it_installs_by_its_sha256_and_no_py4j():
    versions = supported()
    assert versions
    for minor, flink in versions.items():
        assert flink.requirements, minor
        for line in (*flink.requirements, *flink.build_requirements):
            assert _pinned_and_hashed(line), (minor, line)
        names = [line.split("==")[0] for line in flink.requirements]
        assert names == ["apache-flink-libraries"], (minor, names)  # the child needs no py4j
        assert all(line.startswith("setuptools==") for line in flink.build_requirements), minor


def test_a_changed_version_file_provisions_the_version_again():
    flink = supported()["1.20"]
    other_hash = dataclasses.replace(flink, requirements=(flink.requirements[0][:-1] + "0",))
    other_builder = dataclasses.replace(flink, build_requirements=())
    prints = {provision._fingerprint(v) for v in (flink, other_hash, other_builder)}
    assert len(prints) == 3


def _wheel(folder: Path, name: str = "tiny_jars", version: str = "1.0") -> Path:
    """A real, minimal wheel: one module, its metadata and its RECORD."""
    dist = f"{name}-{version}.dist-info"
    files = {
        f"{name}.py": b"JARS = []\n",
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = (
        "".join(
            f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}\n"
            for path, data in files.items()
        )
        + f"{dist}/RECORD,,\n"
    )
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in {**files, f"{dist}/RECORD": record.encode()}.items():
            archive.writestr(path, data)
    return wheel


def _requirement(wheel: Path, digest: str) -> str:
    return f"tiny-jars @ {wheel.as_uri()} --hash=sha256:{digest}"


@pytest.mark.parametrize("tool", ["pip", "uv"])
def test_a_file_whose_hash_is_not_listed_is_refused_and_nothing_is_left(tmp_path, monkeypatch, tool):
    if tool == "uv" and installer()[0] != "uv":
        pytest.skip("no uv here (pip install uv): provisioning uses pip, tested above")
    monkeypatch.setattr(version_venvs, "installer", lambda: installer() if tool == "uv" else ["pip"])
    monkeypatch.setenv(CACHE.cache_env, str(tmp_path / "cache"))
    wheel = _wheel(tmp_path)
    good = hashlib.sha256(wheel.read_bytes()).hexdigest()
    said: list[str] = []

    def finish(home, venv, say):
        return {"lib": str(venv)}

    with pytest.raises(ProvisionError) as refused:
        CACHE.ensure(
            "9.9.9", "f1", [_requirement(wheel, "0" * 64)], finish, first_use="", download="", progress=said.append
        )
    assert "could not install Flink 9.9.9" in str(refused.value)
    assert "sha256 is not one its version file lists" in str(refused.value)  # not "check network access"
    assert not (tmp_path / "cache" / "9.9.9").exists()

    home = CACHE.ensure(
        "9.9.9", "f2", [_requirement(wheel, good)], finish, first_use="", download="", progress=said.append
    )
    python = home / "venv" / "bin" / "python"
    assert subprocess.run([python, "-c", "import tiny_jars"], check=False).returncode == 0
    assert f"every file verified by its sha256, with {tool}" in "\n".join(said)
    assert json.loads((home / "ready.json").read_text())["fingerprint"] == "f2"


def test_hashed_requirements_are_installed_in_hash_checking_mode_with_the_build_tools_first(tmp_path):
    venv = tmp_path / "venv"
    line = "apache-flink-libraries==1.20.5 --hash=sha256:" + "a" * 64
    for tool in (["pip"], ["uv", "/opt/uv"]):
        command = install_command(tool, venv, [line], tmp_path / "work", build_isolation=False)
        assert "--require-hashes" in command and "--no-deps" in command and "--no-build-isolation" in command
        listed = Path(command[command.index("-r") + 1])
        assert listed.read_text() == line + "\n"  # pip and uv read --hash only from a requirements file
    assert install_command(["uv", "/opt/uv"], venv, [line], tmp_path, build_isolation=True)[:4] == [
        "/opt/uv",
        "pip",
        "install",
        "--python",
    ]
    # unhashed requirements (a test's own) go on the command line
    assert install_command(["pip"], venv, ["pyspark==3.5.9"], tmp_path, build_isolation=True)[-1] == "pyspark==3.5.9"


def test_uv_is_used_where_it_is_found_and_pip_otherwise(tmp_path, monkeypatch):
    tools = tmp_path / "tools"
    tools.mkdir()
    uv = tools / "uv"
    uv.write_text("#!/bin/sh\n")
    uv.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python-without-uv" / "python"))
    monkeypatch.setenv("PATH", str(tools))
    assert installer() == ["uv", str(uv)]
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert installer() == ["pip"]
    monkeypatch.setattr(sys, "executable", str(tools / "python"))  # beside the Python, as `pip install uv` puts it
    assert installer() == ["uv", str(uv)]


def test_without_a_jdk_provisioning_stops_before_downloading_and_says_nothing_compiles(tmp_path, monkeypatch):
    monkeypatch.setenv(provision.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(provision, "find_java_tool", lambda name: None if name in ("javac", "jar") else "/usr/bin/java")
    built: list[str] = []
    monkeypatch.setattr(VenvCache, "_build", lambda self, version, *rest: built.append(version))
    with pytest.raises(ProvisionError) as refused:
        provision.ensure("1.20")
    message = str(refused.value)
    assert "no JDK" in message and "no Flink SQL can be compiled" in message and "JDK 11+" in message
    assert "planlineage flink install" in message
    assert built == [] and not (tmp_path / "cache" / "1.20.5").exists()
