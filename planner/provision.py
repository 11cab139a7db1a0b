"""Per-version Flink virtualenvs: the analogue of StreamPark's per-version shims class loaders.

Each supported Flink version gets its own virtualenv in a per-user cache with only what compiling
a plan needs (Flink's jars, every file verified by the sha256 its `flink-versions/*.toml` lists),
plus the compile server and stand-ins (planner/java) built against that version's jars by the
JDK's javac. Provisioning happens on first use, shows its progress on stderr, is safe when several
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

from filelock import FileLock

from planlineage.errors import ProvisionError
from planlineage.flink_versions import FlinkVersion, supported
from planlineage.line_child import find_java_tool
from planlineage.planner import class_archive
from planlineage.planner.provisioned import STAND_IN_JAR, Provisioned
from planlineage.planner.versions import DEFAULT_MINOR
from planlineage.version_venvs import VenvCache, fingerprint, stderr

__all__ = ["ProvisionError", "Provisioned", "cache_root", "ensure", "find_java_tool", "list_installed"]

CACHE_ENV = "PLANLINEAGE_FLINK_CACHE"

#: Bumped when what provisioning produces changes (2: class-data sharing archive; 3: one class
#: archive per Java runtime, an AOT cache on Java 25+; 4: hash-checked installs, no py4j). A
#: version file's requirements and build requirements are in the fingerprint too: changing one
#: re-provisions that version.
LAYOUT = 4
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
    return fingerprint(LAYOUT, flink.version, [*flink.requirements, *flink.build_requirements], sources)


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
    jars, the compile server and stand-ins built against them, the planner's class archive for
    the Java runtime in use (recorded on its own when only another runtime's is there)."""
    flink = resolve_version(requested)
    if force or state(flink) != "ready":
        _jdk_tools()  # before a 370 MB download that could not be used

    def finish(home: Path, venv: Path, say: Callable[[str], None]) -> dict:
        lib = _find_lib(venv)
        say("[3/4] building the compile server and stand-ins against this version's jars")
        _build_stand_in(lib, home, say)
        return {"lib": str(lib), "stand_in": True}

    def after(home: Path, say: Callable[[str], None]) -> None:
        say("[4/4] recording a class archive of the planner for this Java runtime (faster JVM starts)")
        _build_class_archive(Provisioned(flink, home), say)

    home = CACHE.ensure(
        flink.version,
        _fingerprint(flink),
        flink.requirements,
        finish,
        build_requirements=flink.build_requirements,
        after=after,
        first_use=FIRST_USE,
        download=DOWNLOAD,
        steps=4,
        force=force,
        progress=progress,
    )
    provisioned = Provisioned(flink, home)
    _archive_for_this_runtime(provisioned, progress or stderr)
    return provisioned


def _archive_for_this_runtime(provisioned: Provisioned, say: Callable[[str], None]) -> None:
    """A version provisioned while another Java runtime was in use has no class archive for this
    one (each runtime maps only its own): recorded once, under the version's lock, so that every
    later JVM start of this runtime has it. A recording that failed leaves a mark instead, and
    is not tried again at every start. Only for a runtime that states its version (its
    ``release`` file), the name its archive is found by."""
    java = find_java_tool("java")
    runtime = class_archive.runtime_version(java) if java is not None else None
    if java is None or runtime is None:
        return  # no java (the planner says why), or a launcher outside a runtime image: left as it is
    archive = provisioned.class_archive(java)
    if archive.exists() or _failed_mark(archive).exists():
        return
    with FileLock(str(CACHE.root() / f"{provisioned.flink.version}.lock")):
        if archive.exists() or _failed_mark(archive).exists():
            return  # recorded while this process waited
        say(
            f"recording the Flink {provisioned.flink.version} planner's class archive for Java "
            f"{runtime} (once per Java runtime, about 10 s: faster JVM starts after)"
        )
        _build_class_archive(provisioned, say)


def _find_lib(venv: Path) -> Path:
    found = list(venv.glob("lib/python*/site-packages/pyflink/lib"))
    if not found:
        raise ProvisionError(f"the Flink jars are missing from {venv}; run `planlineage flink install VERSION`.")
    return found[0]


def _jdk_tools() -> tuple[str, str]:
    """javac and jar, which build the planner's own jar: its compile server (the JVM every job is
    compiled in) is in it with the stand-ins, so without a JDK no job of any version compiles."""
    javac, jar_tool = find_java_tool("javac"), find_java_tool("jar")
    if not javac or not jar_tool:
        raise ProvisionError(
            "no JDK found (javac and jar, in JAVA_HOME/bin or on PATH): provisioning builds the Flink "
            "planner's compile server with it, and no Flink SQL can be compiled without one (a Java "
            "runtime alone is not enough). Install a JDK 11+, then run `planlineage flink install VERSION`."
        )
    return javac, jar_tool


def _build_stand_in(lib: Path, home: Path, say: Callable[[str], None]) -> Path:
    javac, jar_tool = _jdk_tools()
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
    """Compiles the warm-up job and the training scripts in a JVM that records the planner's class
    archive for the Java runtime in use when it exits (planlineage.planner.class_archive): the
    classes, and on Java 25+ their links, of the shapes platforms submit most. (Recorded over the
    training scripts rather than the warm-up job alone, a from-cold backfill of 180 scripts took
    2% less time on Java 17: 5.93 s against 6.05 s, eight paired runs.)

    Optional: a JVM that cannot write or later map the archive starts without it, so a failure
    here only costs speed.
    """
    from planlineage.planner.compiler import Planner, PlannerError
    from planlineage.planner.warm_up import WARM_UP, training_requests

    java = find_java_tool("java")
    if java is None:
        return  # the planner cannot start either; it says so itself
    archive = provisioned.class_archive(java)
    archive.unlink(missing_ok=True)
    _failed_mark(archive).unlink(missing_ok=True)
    try:
        planner = Planner(provisioned, java_options=class_archive.record_options(archive), recording_archive=True)
        # The JVM writes the archive as it exits: on Java 25 it starts a second JVM to assemble it.
        planner.close_timeout = 300.0
        with planner:
            for request in [WARM_UP, *training_requests(provisioned)]:
                planner.compile(request, timeout=120)
    except (PlannerError, OSError) as error:
        say(f"no class archive ({error}); JVM starts will be about 1 s slower")
        archive.unlink(missing_ok=True)
    if not archive.exists():
        _failed_mark(archive).touch()


def _failed_mark(archive: Path) -> Path:
    """Says that recording ``archive`` failed once (`flink install VERSION --force` tries again)."""
    return archive.with_name(archive.name + ".failed")
