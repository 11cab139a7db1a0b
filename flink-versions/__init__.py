"""The Flink versions planlineage supports, one TOML description each (e.g. `1.20.toml`)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from planlineage.version_files import described


@dataclass(frozen=True)
class FlinkVersion:
    minor: str  # "1.20": what users type
    version: str  # "1.20.5": what is installed
    #: pip requirement lines, each pinned to the sha256 of every file it may install
    requirements: tuple[str, ...]
    batch_compiled_plan: bool
    # JVM options the compile server of this version needs on the Java it runs on (default none)
    java_options: tuple[str, ...] = ()
    #: What builds a requirement that is a source distribution (installed first, hash-pinned too)
    build_requirements: tuple[str, ...] = ()


@functools.cache  # the files ship with the package: read once per process, not once per job
def supported() -> dict[str, FlinkVersion]:
    """Every described version, keyed by minor version, oldest first (shared: do not modify)."""
    return described(__name__, _flink)


def _flink(minor: str, data: dict) -> FlinkVersion:
    return FlinkVersion(
        minor=minor,
        version=data["version"],
        requirements=tuple(data["requirements"]),
        batch_compiled_plan=bool(data["batch_compiled_plan"]),
        java_options=tuple(data.get("java_options", ())),
        build_requirements=tuple(data.get("build_requirements", ())),
    )
