"""The Spark versions planlineage supports, one TOML description each (e.g. `3.5.toml`), read the
way `planlineage.flink_versions` reads Flink's: a new version is one more file."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from planlineage.version_files import described


@dataclass(frozen=True)
class SparkVersion:
    minor: str  # "3.5": what users type
    version: str  # "3.5.9": what is installed
    #: pip requirement lines, each pinned to its release and its files' sha256 (PySpark, its py4j)
    requirements: tuple[str, ...]
    #: what builds the requirements that are source distributions (PySpark's only file is one):
    #: installed first, and the build runs without isolation, so it uses only these
    build_requirements: tuple[str, ...] = ()


@functools.cache  # the files ship with the package: read once per process, not once per job
def supported() -> dict[str, SparkVersion]:
    """Every described version, keyed by minor version, oldest first (shared: do not modify)."""
    return described(__name__, _spark)


def _spark(minor: str, data: dict) -> SparkVersion:
    return SparkVersion(
        minor=minor,
        version=data["version"],
        requirements=tuple(data["requirements"]),
        build_requirements=tuple(data.get("build_requirements", ())),
    )
