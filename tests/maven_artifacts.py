"""Jars from Maven Central for the tests that run real producers, resolved by Maven itself.

The pins are in ``tests/artifacts.toml`` (coordinates and the sha256 of the artifact's own jar).
Each artifact is resolved once into ``$PLANLINEAGE_TEST_MAVEN_CACHE/<name>/`` (the tox envs point
it into their work dir), with its transitive dependencies unless the pin says
``transitive = false``, by ``mvn dependency:copy-dependencies`` over a one-dependency POM, and its
checksum is verified on every use. A pin that cannot be resolved or whose checksum differs raises
:class:`ArtifactError` with one line naming it: a suite that needs it fails, it never skips.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import tomllib
from pathlib import Path

PINS = Path(__file__).with_name("artifacts.toml")
CACHE_ENV = "PLANLINEAGE_TEST_MAVEN_CACHE"
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.6.1"
POM = """<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>planlineage.tests</groupId><artifactId>resolve</artifactId><version>1</version><packaging>pom</packaging>
<dependencies><dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId><version>{version}</version>
</dependency></dependencies></project>
"""


class ArtifactError(RuntimeError):
    """A pinned artifact could not be had as pinned."""


def pins() -> dict[str, dict]:
    return tomllib.loads(PINS.read_text(encoding="utf-8"))["artifacts"]


def cache_dir() -> Path:
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else Path.home() / ".cache" / "planlineage-test-maven"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def resolve(name: str) -> list[Path]:
    """The pinned artifact ``name``'s jar first, then its dependencies' jars."""
    pin = pins().get(name)
    if pin is None:
        raise ArtifactError(f"no artifact {name!r} is pinned in {PINS.name}")
    group, artifact, version = pin["coordinates"].split(":")
    folder = cache_dir() / name
    main = folder / f"{artifact}-{version}.jar"
    if not main.exists():
        _download(pin, group, artifact, version, folder)
    actual = _sha256(main)
    if actual != pin["sha256"]:
        raise ArtifactError(f"{pin['coordinates']}: sha256 {actual} is not the pinned {pin['sha256']}")
    return [main, *sorted(p for p in folder.glob("*.jar") if p != main)]


def _download(pin: dict, group: str, artifact: str, version: str, folder: Path) -> None:
    if shutil.which("mvn") is None:
        raise ArtifactError(f"{pin['coordinates']}: Maven (mvn) is not installed; .ci/run installs it")
    folder.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f"{folder.name}.", dir=folder.parent))
    try:
        (partial / "pom.xml").write_text(POM.format(group=group, artifact=artifact, version=version))
        command = ["mvn", "-q", "-B", "-f", str(partial / "pom.xml"), f"{DEPENDENCY_PLUGIN}:copy-dependencies"]
        command += [f"-DoutputDirectory={partial / 'jars'}", "-DincludeScope=runtime"]
        if not pin.get("transitive", True):
            command.append("-DexcludeTransitive=true")
        done = subprocess.run(command, capture_output=True, text=True, timeout=900)
        jars = partial / "jars"
        if done.returncode != 0 or not (jars / f"{artifact}-{version}.jar").exists():
            lines = [line for line in (done.stdout + done.stderr).splitlines() if "ERROR" in line] or ["no jar"]
            raise ArtifactError(f"{pin['coordinates']} could not be resolved from Maven Central: {lines[0][:300]}")
        jars.rename(folder)  # whole or not at all: a broken download is never taken for a resolved one
    finally:
        shutil.rmtree(partial, ignore_errors=True)
