"""Per-version Spark virtualenvs, built the way Flink's are (planner/provision.py).

Each supported Spark version gets its own virtualenv holding PySpark (Spark's jars) and py4j,
nothing else: the child (`child/analyze_server.py`) runs there with the standard library and
PySpark only. Provisioning happens on first use with progress on stderr, under a file lock (a
second process waiting for the lock finds the first one's work), and a venv whose recorded
fingerprint no longer matches is rebuilt.

Where: `$PLANLINEAGE_SPARK_CACHE`, else `<user cache dir>/planlineage/spark`, the sibling of
Flink's default `…/planlineage/flink`. A separate variable rather than one derived from
`PLANLINEAGE_FLINK_CACHE`: a shared read-only Flink cache must not decide where Spark writes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import platformdirs
from filelock import FileLock

from planlineage.planner.provision import ProvisionError
from planlineage.spark.versions import DEFAULT_MINOR, SUPPORTED, SparkVersion

CACHE_ENV = "PLANLINEAGE_SPARK_CACHE"
MARKER = "ready.json"
#: Bumped when what provisioning produces changes.
LAYOUT = 1


@dataclass(frozen=True)
class ProvisionedSpark:
    spark: SparkVersion
    home: Path

    @property
    def python(self) -> Path:
        return self.home / "venv" / "bin" / "python"

    @property
    def log(self) -> Path:
        return self.home / "jvm.log"


def cache_root() -> Path:
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else Path(platformdirs.user_cache_dir("planlineage")) / "spark"


def resolve_version(requested: str | None) -> SparkVersion:
    """`3.5` or `3.5.9` (or None for the default) to a supported version."""
    wanted = (requested or DEFAULT_MINOR).strip()
    minor = ".".join(wanted.split(".")[:2])
    spark = SUPPORTED.get(minor)
    if spark is None or (wanted.count(".") >= 2 and wanted != spark.version):
        known = ", ".join(f"{v.minor} ({v.version})" for v in SUPPORTED.values())
        raise ProvisionError(f"Spark {wanted} is not supported; supported versions: {known}.")
    return spark


def _fingerprint(spark: SparkVersion) -> str:
    payload = [LAYOUT, spark.version, list(spark.requirements), sys.version_info[:2]]
    return hashlib.sha256(json.dumps(payload).encode()).hexdigest()[:16]


def list_installed() -> dict[str, dict]:
    result = {}
    for minor, spark in SUPPORTED.items():
        home = cache_root() / spark.version
        state = "not installed"
        if (home / MARKER).exists():
            state = "ready" if _ready(home, _fingerprint(spark)) else "outdated"
        elif home.exists():
            state = "incomplete"
        result[minor] = {"version": spark.version, "state": state, "path": str(home)}
    return result


def ensure(
    requested: str | None, *, force: bool = False, progress: Callable[[str], None] | None = None
) -> ProvisionedSpark:
    """The provisioned Spark version, building its venv first if needed (or again, with `force`)."""
    spark = resolve_version(requested)
    say = progress or _stderr
    root = cache_root()
    home = root / spark.version
    fingerprint = _fingerprint(spark)
    if not force and _ready(home, fingerprint):
        return ProvisionedSpark(spark, home)
    root.mkdir(parents=True, exist_ok=True)
    with FileLock(str(root / f"{spark.version}.lock")):
        if not force and _ready(home, fingerprint):
            return ProvisionedSpark(spark, home)
        _build(spark, home, fingerprint, say)
    return ProvisionedSpark(spark, home)


def _ready(home: Path, fingerprint: str) -> bool:
    try:
        recorded = json.loads((home / MARKER).read_text())
    except (OSError, ValueError):
        return False
    return recorded.get("fingerprint") == fingerprint and (home / "venv" / "bin" / "python").exists()


def _stderr(message: str) -> None:
    print(f"planlineage: {message}", file=sys.stderr, flush=True)


def _build(spark: SparkVersion, home: Path, fingerprint: str, say: Callable[[str], None]) -> None:
    started = time.monotonic()
    say(f"provisioning Spark {spark.version} in {home} (first use; a few minutes)")
    if home.exists():
        shutil.rmtree(home)
    home.mkdir(parents=True)
    try:
        venv = home / "venv"
        say(f"[1/2] creating a virtualenv for Spark {spark.version}")
        _run([sys.executable, "-m", "venv", str(venv)], "create the virtualenv")
        say(f"[2/2] installing {' '.join(spark.requirements)} (~400 MB download, built once into the pip cache)")
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
                *spark.requirements,
            ],
            f"install Spark {spark.version}",
            stream=say,
        )
        if not list(venv.glob("lib/python*/site-packages/pyspark/jars/spark-catalyst_*.jar")):
            raise ProvisionError(
                f"Spark's jars are missing from {venv}; run `planlineage spark install {spark.minor}`."
            )
        (home / MARKER).write_text(
            json.dumps(
                {"fingerprint": fingerprint, "version": spark.version, "seconds": round(time.monotonic() - started, 1)}
            )
        )
    except BaseException:
        shutil.rmtree(home, ignore_errors=True)
        raise
    say(f"Spark {spark.version} ready in {time.monotonic() - started:.0f} s")


def _run(command: list[str], what: str, stream: Callable[[str], None] | None = None) -> None:
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    tail: list[str] = []
    assert process.stdout is not None
    for line in process.stdout:
        line = line.rstrip()
        tail = (tail + [line])[-15:]
        if stream and line.startswith(("Collecting", "Downloading", "Building", "Installing", "Successfully")):
            stream("    " + line)
    if process.wait() != 0:
        raise ProvisionError(
            f"could not {what}: {' / '.join(tail[-5:]) or 'no output'}. "
            "Check network access to the package index, then run `planlineage spark install VERSION`."
        )
