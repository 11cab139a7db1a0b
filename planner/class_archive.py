"""The planner JVM's archive of the classes it loads: recorded once at provisioning, mapped by
every planner JVM that starts afterwards.

An archive holds Flink's planner classes already parsed and verified, so a JVM does not read and
check them from the jars again. Which kind depends on the Java runtime that runs the planner
(``JAVA_HOME``, else ``java`` on ``PATH``):

- Java 25 and later: an **AOT cache** (``-XX:AOTCacheOutput`` to record, ``-XX:AOTCache`` to use;
  JEP 483 and 514), which also keeps the classes linked and the lambdas and method handles of
  Flink's Scala code resolved: a cold ``extract`` took 1.26 s on Java 25 with it against 1.44 s
  on Java 17 with its archive (eight paired runs, 2 cores; docs/performance.md). Java 17's
  archive would not map on Java 25: without a cache of its own, that runtime's JVMs started
  from the jars.
- Earlier runtimes: a **class-data sharing archive** (``-XX:ArchiveClassesAtExit``,
  ``-XX:SharedArchiveFile``).

An archive is valid only for the JVM build that recorded it, so each is named after the runtime's
version (its ``release`` file) and a JVM is never handed another runtime's. A runtime that has
none yet records its own on first use (planlineage.planner.provision); one that states no version
maps the archive provisioning recorded with it, if any.
"""

from __future__ import annotations

import re
from pathlib import Path

#: The first Java release whose JVM records and maps an AOT cache.
AOT_CACHE_SINCE = 25


def runtime_version(java: str) -> str | None:
    """The ``JAVA_VERSION`` of the runtime that owns the ``java`` launcher (``17.0.15``,
    ``25.0.3``), read from its ``release`` file; None when it has none (a launcher outside a
    runtime image)."""
    try:
        release = Path(java).resolve().parents[1] / "release"
        text = release.read_text(encoding="utf-8", errors="replace")
    except (OSError, IndexError):
        return None
    found = re.search(r'^JAVA_VERSION="?([0-9][0-9A-Za-z._+-]*)"?\s*$', text, re.M)
    return found.group(1) if found else None


def feature_release(version: str | None) -> int | None:
    """The feature release of a ``JAVA_VERSION`` (``25.0.3`` → 25; ``1.8.0_402`` → 8)."""
    if not version:
        return None
    parts = re.findall(r"\d+", version)
    if not parts:
        return None
    first = int(parts[0])
    return int(parts[1]) if first == 1 and len(parts) > 1 else first


def archive_path(home: Path, version: str | None) -> Path:
    """Where the archive for the runtime of ``version`` lies in a provisioned version's ``home``."""
    if version is None:
        return home / "planner.jsa"  # a runtime that does not say its version: one archive for it
    feature = feature_release(version)
    kind = "aot" if feature is not None and feature >= AOT_CACHE_SINCE else "jsa"
    return home / f"planner-java{version}.{kind}"


def record_options(archive: Path) -> list[str]:
    """The JVM options that make a JVM write ``archive`` when it exits."""
    if archive.suffix == ".aot":
        return [f"-XX:AOTCacheOutput={archive}"]
    return [f"-XX:ArchiveClassesAtExit={archive}"]


def use_options(archive: Path) -> list[str]:
    """The JVM options that map ``archive``, or none when it was not recorded."""
    if not archive.exists():
        return []
    if archive.suffix == ".aot":
        return [f"-XX:AOTCache={archive}"]
    return [f"-XX:SharedArchiveFile={archive}"]
