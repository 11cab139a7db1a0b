"""Per-version Flink virtualenvs: the analogue of StreamPark's per-version shims class loaders.

Each supported Flink version gets its own virtualenv in a per-user cache with only what compiling
a plan needs (Flink's jars and py4j), plus the stand-in connector built against that version's
jars. Provisioning happens on first use, shows its progress on stderr, is safe when several
processes ask at once (a file lock; the loser finds the winner's work), and is repaired by
`planlineage flink install VERSION`.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from planlineage.errors import ProvisionError
from planlineage.flink_versions import FlinkVersion, supported
from planlineage.line_child import find_java_tool
from planlineage.planner.provisioned import STAND_IN_JAR, Provisioned
from planlineage.planner.versions import DEFAULT_MINOR
from planlineage.version_venvs import VenvCache, fingerprint

__all__ = ["ProvisionError", "Provisioned", "cache_root", "ensure", "find_java_tool", "list_installed"]

CACHE_ENV = "PLANLINEAGE_FLINK_CACHE"

#: Bumped when what provisioning produces changes (2: class-data sharing archive).
LAYOUT = 2
CACHE = VenvCache(engine="Flink", command="flink", cache_env=CACHE_ENV, cache_dir="flink")
#: What a first use costs, as provisioning and `watch --check` say it (issue 30 measured 1.20: 368 MB, 100 s).
FIRST_USE = "a minute or two"
DOWNLOAD = "~370 MB download"


def cache_root() -> Path:
    return CACHE.root()


#: CompiledPlan, which planlineage's lineage is read from, arrived in Flink 1.15.
FIRST_COMPILED_PLAN = (1, 15)
_MINOR = re.compile(r"^\s*(\d+)\.(\d+)(?:\.\d+)?\s*$")


def without_compiled_plan(requested: str | None) -> str | None:
    """The requested version (as given) when it is a Flink older than 1.15, whose planner has no
    CompiledPlan: its jobs are read from the SQL text, never compiled by another version."""
    found = _MINOR.match(requested or "")
    if found and (int(found.group(1)), int(found.group(2))) < FIRST_COMPILED_PLAN:
        return requested.strip() if requested else None
    return None


def resolve_version(requested: str | None) -> FlinkVersion:
    """`1.20` or `1.20.5` (or None for the default) to a supported version."""
    return CACHE.resolve(supported(), requested, DEFAULT_MINOR)


@functools.cache  # the sources ship with the package: hashed once per process, not once per job
def _fingerprint(flink: FlinkVersion) -> str:
    """Changes when what a venv must contain changes, so an old venv is rebuilt, not trusted."""
    sources = [(str(p.relative_to(_java_root())), p.read_bytes()) for p in sorted(_java_sources(), key=str)]
    return fingerprint(LAYOUT, flink.version, flink.requirements, sources)


def _java_root() -> Path:
    return Path(str(resources.files("planlineage.planner") / "java"))


def _java_sources() -> list[Path]:
    return sorted(_java_root().rglob("*.java"))


def state(flink: FlinkVersion) -> str:
    """`ready`, `outdated`, `broken`, `incomplete` or `not installed` here."""
    return CACHE.state(flink.version, _fingerprint(flink))


def list_installed() -> dict[str, dict]:
    """What the cache holds, per minor version: ready or not, and where."""
    return CACHE.listing(supported(), _fingerprint)


def ensure(
    requested: str | None,
    *,
    force: bool = False,
    progress: Callable[[str], None] | None = None,
) -> Provisioned:
    """The provisioned version, building it first if needed (or again, with `force`): Flink's
    jars and py4j, the stand-in connector built against them, a class-data sharing archive."""
    flink = resolve_version(requested)

    def finish(home: Path, venv: Path, say: Callable[[str], None]) -> dict:
        lib = _find_lib(venv)
        say("[3/4] building the stand-in connector against this version's jars")
        stand_in = _build_stand_in(lib, home, say)
        return {"lib": str(lib), "stand_in": stand_in is not None}

    def after(home: Path, say: Callable[[str], None]) -> None:
        say("[4/4] recording a class-data sharing archive of the planner (faster JVM starts)")
        _build_class_archive(Provisioned(flink, home), say)

    home = CACHE.ensure(
        flink.version,
        _fingerprint(flink),
        flink.requirements,
        finish,
        after=after,
        first_use=FIRST_USE,
        download=DOWNLOAD,
        steps=4,
        force=force,
        progress=progress,
    )
    return Provisioned(flink, home)


def _find_lib(venv: Path) -> Path:
    found = list(venv.glob("lib/python*/site-packages/pyflink/lib"))
    if not found:
        raise ProvisionError(f"the Flink jars are missing from {venv}; run `planlineage flink install VERSION`.")
    return found[0]


def _build_stand_in(lib: Path, home: Path, say: Callable[[str], None]) -> Path | None:
    javac = find_java_tool("javac")
    jar_tool = find_java_tool("jar")
    if not javac or not jar_tool:
        say(
            "WARNING: no JDK (javac) found: the stand-in connector is not built, so tables whose "
            "connector jar is absent cannot be compiled. Install a JDK 11+ and run "
            "`planlineage flink install VERSION`."
        )
        return None
    with tempfile.TemporaryDirectory(prefix="planlineage-standin-") as work:
        classes = Path(work) / "classes"
        classes.mkdir()
        classpath = os.pathsep.join(str(p) for p in sorted(lib.glob("*.jar")))
        CACHE.run(
            [
                javac,
                "--release",
                "11",
                "-nowarn",
                "-d",
                str(classes),
                "-cp",
                classpath,
                *[str(p) for p in _java_sources()],
            ],
            "compile the stand-in connector",
        )
        shutil.copytree(_java_root() / "META-INF", classes / "META-INF")
        jar = home / STAND_IN_JAR
        CACHE.run([jar_tool, "cf", str(jar), "-C", str(classes), "."], "package the stand-in connector")
    return jar


def _build_class_archive(provisioned: Provisioned, say: Callable[[str], None]) -> None:
    """Compiles the warm-up job with -XX:ArchiveClassesAtExit; the JVM writes the archive of every
    class it loaded on exit. (Recorded over the training scripts too, the archive made no
    difference to a from-cold backfill of the corpus: 5.7-6.6 s either way, paired runs.)

    Optional: a JVM that cannot write or later read the archive (another JDK build) starts
    without it, so a failure here only costs speed.
    """
    from planlineage.planner.compiler import Planner, PlannerError
    from planlineage.planner.warm_up import WARM_UP

    archive = provisioned.class_archive
    try:
        planner = Planner(provisioned, java_options=[f"-XX:ArchiveClassesAtExit={archive}"])
        planner.close_timeout = 120.0
        with planner:
            planner.compile(WARM_UP, timeout=120)
    except (PlannerError, OSError) as error:
        say(f"no class-data archive ({error}); JVM starts will be about 1 s slower")
        archive.unlink(missing_ok=True)
