"""The Spark versions planlineage supports, one TOML description each (e.g. `3.5.toml`), read the
way `planlineage.flink_versions` reads Flink's: a new version is one more file."""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from importlib import resources


@dataclass(frozen=True)
class SparkVersion:
    minor: str  # "3.5": what users type
    version: str  # "3.5.9": what is installed
    #: pip requirement lines, each pinned to its release (PySpark and the py4j it requires)
    requirements: tuple[str, ...]


@functools.cache  # the files ship with the package: read once per process, not once per job
def supported() -> dict[str, SparkVersion]:
    """Every described version, keyed by minor version, oldest first (shared: do not modify)."""
    found = {}
    for entry in resources.files(__name__).iterdir():
        if entry.name.endswith(".toml"):
            data = tomllib.loads(entry.read_text(encoding="utf-8"))
            minor = entry.name[: -len(".toml")]
            found[minor] = SparkVersion(minor=minor, version=data["version"], requirements=tuple(data["requirements"]))
    return dict(sorted(found.items(), key=lambda item: tuple(int(p) for p in item[0].split("."))))
