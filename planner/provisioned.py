"""What a provisioned Flink version looks like on disk.

Shared by provisioning (which builds it) and the compiler (which runs a planner in it), so that
neither has to import the other's module.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from planlineage.flink_versions import FlinkVersion
from planlineage.planner.class_archive import archive_path, runtime_version
from planlineage.version_venvs import MARKER, InVenv

STAND_IN_JAR = "planlineage-standin.jar"


@dataclass(frozen=True)
class Provisioned(InVenv):
    """A ready Flink version: where its python, jars and stand-in connector are."""

    flink: FlinkVersion
    home: Path

    @property
    def lib(self) -> Path:
        return Path(json.loads((self.home / MARKER).read_text())["lib"])

    @property
    def stand_in(self) -> Path | None:
        jar = self.home / STAND_IN_JAR
        return jar if jar.exists() else None

    def class_archive(self, java: str) -> Path:
        """The planner's class archive for the Java runtime of the ``java`` launcher
        (planlineage.planner.class_archive)."""
        return archive_path(self.home, runtime_version(java))
