"""Per-version Flink virtualenvs: the analogue of StreamPark's per-version shims class loaders.

Each supported Flink version gets its own virtualenv in a per-user cache with only what compiling
a plan needs (Flink's jars and py4j), plus the stand-in connector built against that version's
jars. Provisioning happens on first use, shows its progress on stderr, is safe when several
processes ask at once (a file lock; the loser finds the winner's work), and is repaired by
`planlineage flink install VERSION`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import platformdirs
from filelock import FileLock

from planlineage.errors import ProvisionError
from planlineage.flink_versions import FlinkVersion, supported
from planlineage.planner.provisioned import MARKER, STAND_IN_JAR, Provisioned, find_java_tool

CACHE_ENV = "PLANLINEAGE_FLINK_CACHE"
DEFAULT_MINOR = "1.20"
#: Bumped when what provisioning produces changes (2: class-data sharing archive).
LAYOUT = 2


def cache_root() -> Path:
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else Path(platformdirs.user_cache_dir("planlineage")) / "flink"


def resolve_version(requested: str | None) -> FlinkVersion:
    """`1.20` or `1.20.5` (or None for the default) to a supported version."""
    versions = supported()
    wanted = (requested or DEFAULT_MINOR).strip()
    minor = ".".join(wanted.split(".")[:2])
    flink = versions.get(minor)
    if flink is None or (wanted.count(".") >= 2 and wanted != flink.version):
        known = ", ".join(f"{v.minor} ({v.version})" for v in versions.values())
        raise ProvisionError(f"Flink {wanted} is not supported; supported versions: {known}.")
    return flink


@functools.cache  # the sources ship with the package: hashed once per process, not once per job
def _fingerprint(flink: FlinkVersion) -> str:
    """Changes when what a venv must contain changes, so an old venv is rebuilt, not trusted."""
    digest = hashlib.sha256()
    digest.update(json.dumps([LAYOUT, flink.version, list(flink.requirements), sys.version_info[:2]]).encode())
    for source in sorted(_java_sources(), key=lambda p: str(p)):
        digest.update(str(source.relative_to(_java_root())).encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


def _java_root() -> Path:
    return Path(str(resources.files("planlineage.planner") / "java"))


def _java_sources() -> list[Path]:
    return sorted(_java_root().rglob("*.java"))


def list_installed() -> dict[str, dict]:
    """What the cache holds, per minor version: ready or not, and where."""
    result = {}
    for minor, flink in supported().items():
        home = cache_root() / flink.version
        marker = home / MARKER
        state = "not installed"
        if marker.exists():
            try:
                recorded = json.loads(marker.read_text())
                state = "ready" if recorded.get("fingerprint") == _fingerprint(flink) else "outdated"
            except (OSError, ValueError):
                state = "broken"
        elif home.exists():
            state = "incomplete"
        result[minor] = {"version": flink.version, "state": state, "path": str(home)}
    return result


def ensure(
    requested: str | None,
    *,
    force: bool = False,
    progress: Callable[[str], None] | None = None,
) -> Provisioned:
    """The provisioned version, building it first if needed (or again, with `force`)."""
    flink = resolve_version(requested)
    say = progress or _stderr
    root = cache_root()
    home = root / flink.version
    fingerprint = _fingerprint(flink)
    if not force and _ready(home, fingerprint):
        return Provisioned(flink, home)
    root.mkdir(parents=True, exist_ok=True)
    with FileLock(str(root / f"{flink.version}.lock")):
        # Another process may have finished while we waited for the lock.
        if not force and _ready(home, fingerprint):
            return Provisioned(flink, home)
        _build(flink, home, fingerprint, say)
    return Provisioned(flink, home)


def _ready(home: Path, fingerprint: str) -> bool:
    try:
        recorded = json.loads((home / MARKER).read_text())
    except (OSError, ValueError):
        return False
    return recorded.get("fingerprint") == fingerprint and (home / "venv" / "bin" / "python").exists()


def _stderr(message: str) -> None:
    print(f"planlineage: {message}", file=sys.stderr, flush=True)


def _build(flink: FlinkVersion, home: Path, fingerprint: str, say: Callable[[str], None]) -> None:
    started = time.monotonic()
    say(f"provisioning Flink {flink.version} in {home} (first use; about a minute)")
    if home.exists():
        shutil.rmtree(home)
    home.mkdir(parents=True)
    try:
        venv = home / "venv"
        say(f"[1/4] creating a virtualenv for Flink {flink.version}")
        _run([sys.executable, "-m", "venv", str(venv)], "create the virtualenv")
        say(f"[2/4] installing {' '.join(flink.requirements)} (~250 MB download)")
        _run(
            [
                str(venv / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "--no-deps",
                "--disable-pip-version-check",
                "--progress-bar",
                "off",
                *flink.requirements,
            ],
            f"install Flink {flink.version}",
            stream=say,
        )
        lib = _find_lib(venv)
        say("[3/4] building the stand-in connector against this version's jars")
        stand_in = _build_stand_in(lib, home, say)
        (home / MARKER).write_text(
            json.dumps(
                {
                    "fingerprint": fingerprint,
                    "version": flink.version,
                    "lib": str(lib),
                    "stand_in": stand_in is not None,
                    "seconds": round(time.monotonic() - started, 1),
                }
            )
        )
        say("[4/4] recording a class-data sharing archive of the planner (faster JVM starts)")
        _build_class_archive(Provisioned(flink, home), say)
    except BaseException:
        shutil.rmtree(home, ignore_errors=True)
        raise
    say(f"Flink {flink.version} ready in {time.monotonic() - started:.0f} s")


def _run(command: list[str], what: str, stream: Callable[[str], None] | None = None) -> None:
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    tail: list[str] = []
    assert process.stdout is not None
    for line in process.stdout:
        line = line.rstrip()
        tail = (tail + [line])[-15:]
        if stream and line.startswith(("Collecting", "Downloading", "Installing", "Successfully")):
            stream("    " + line)
    if process.wait() != 0:
        raise ProvisionError(
            f"could not {what}: {' / '.join(tail[-5:]) or 'no output'}. "
            "Check network access to the package index, then run "
            "`planlineage flink install VERSION`."
        )


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
        _run(
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
        _run([jar_tool, "cf", str(jar), "-C", str(classes), "."], "package the stand-in connector")
    return jar


def _build_class_archive(provisioned: Provisioned, say: Callable[[str], None]) -> None:
    """Runs a representative compile with -XX:ArchiveClassesAtExit; the JVM writes it on exit.

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
