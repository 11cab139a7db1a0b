"""Per-version isolated virtualenvs in a per-user cache: what Flink's and Spark's provisioning share.

An engine (Flink, Spark) keeps one virtualenv per supported version under ``<cache>/<version>``
with only what its child process needs. A venv is trusted only when its ``ready.json`` records
the fingerprint of what it must contain (an old one is rebuilt, not trusted). Building happens on
first use with progress on stderr, under a file lock ``<cache>/<version>.lock`` (a process that
waited for the lock finds the winner's work), and a failed build leaves nothing behind.

What each engine adds (Flink's stand-in connector and class-data archive, Spark's jar check) is
the ``finish`` step of :meth:`VenvCache.ensure`; the layout, the fingerprint recipe and the
messages are the same for both, so existing caches stay valid.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

import platformdirs
from filelock import FileLock

from planlineage.errors import ProvisionError

MARKER = "ready.json"
#: pip's lines worth showing while a version installs (the rest is noise).
PROGRESS_LINES = ("Collecting", "Downloading", "Building", "Installing", "Successfully")

Say = Callable[[str], None]


class Version(Protocol):
    @property
    def minor(self) -> str: ...

    @property
    def version(self) -> str: ...


V = TypeVar("V", bound=Version)


def fingerprint(layout: int, version: str, requirements: Iterable[str], files: Iterable[tuple[str, bytes]] = ()) -> str:
    """Changes when what a venv must contain changes: the layout, the version and its
    requirements, this Python's minor version, and (Flink) the sources built into it."""
    digest = hashlib.sha256()
    digest.update(json.dumps([layout, version, list(requirements), sys.version_info[:2]]).encode())
    for name, data in files:
        digest.update(name.encode())
        digest.update(data)
    return digest.hexdigest()[:16]


def stderr(message: str) -> None:
    print(f"planlineage: {message}", file=sys.stderr, flush=True)


def venv_python(home: Path) -> Path:
    return home / "venv" / "bin" / "python"


class InVenv:
    """What a provisioned version (a dataclass with a ``home``) runs its child with: the venv's
    python, and the log its JVM writes to."""

    home: Path

    @property
    def python(self) -> Path:
        return venv_python(self.home)

    @property
    def log(self) -> Path:
        return self.home / "jvm.log"


@dataclass(frozen=True)
class VenvCache:
    """One engine's cache of per-version venvs.

    ``engine``: the name messages use ("Flink"); ``command``: its CLI group (``planlineage
    <command> install VERSION`` repairs a version); ``cache_env`` / ``cache_dir``: where the cache
    is (the variable, else ``<user cache dir>/planlineage/<cache_dir>``).
    """

    engine: str
    command: str
    cache_env: str
    cache_dir: str

    def root(self) -> Path:
        configured = os.environ.get(self.cache_env)
        return Path(configured) if configured else Path(platformdirs.user_cache_dir("planlineage")) / self.cache_dir

    def resolve(self, versions: Mapping[str, V], requested: str | None, default: str) -> V:
        """`1.20` or `1.20.5` (or None for ``default``) to one of the supported ``versions``."""
        wanted = (requested or default).strip()
        found = versions.get(".".join(wanted.split(".")[:2]))
        if found is None or (wanted.count(".") >= 2 and wanted != found.version):
            known = ", ".join(f"{v.minor} ({v.version})" for v in versions.values())
            raise ProvisionError(f"{self.engine} {wanted} is not supported; supported versions: {known}.")
        return found

    def listing(self, versions: Mapping[str, V], fingerprint_of: Callable[[V], str]) -> dict[str, dict]:
        """What the cache holds, per minor version: ready or not, and where."""
        return {
            minor: {
                "version": v.version,
                "state": self.state(v.version, fingerprint_of(v)),
                "path": str(self.root() / v.version),
            }
            for minor, v in versions.items()
        }

    def state(self, version: str, fingerprint: str) -> str:
        """`ready`, `outdated`, `broken` (an unreadable marker), `incomplete` or `not installed`."""
        home = self.root() / version
        marker = home / MARKER
        if not marker.exists():
            return "incomplete" if home.exists() else "not installed"
        try:
            json.loads(marker.read_text())
        except (OSError, ValueError):
            return "broken"
        return "ready" if ready(home, fingerprint) else "outdated"

    def ensure(
        self,
        version: str,
        fingerprint: str,
        requirements: Iterable[str],
        finish: Callable[[Path, Path, Say], dict],
        *,
        after: Callable[[Path, Say], None] | None = None,
        first_use: str,
        download: str,
        steps: int = 2,
        force: bool = False,
        progress: Say | None = None,
    ) -> Path:
        """The home of a ready venv of ``version``, building it first if needed (or again, with
        ``force``). The build creates the venv ([1/steps]), installs ``requirements`` without
        their dependencies ([2/steps], ``download`` says how big); ``finish(home, venv, say)``
        checks or adds what the engine needs and returns what the marker records besides the
        fingerprint, the version and the seconds taken; ``after(home, say)`` runs once the
        marker is written (a step that needs the ready venv)."""
        say = progress or stderr
        root = self.root()
        home = root / version
        if not force and ready(home, fingerprint):
            return home
        root.mkdir(parents=True, exist_ok=True)
        with FileLock(str(root / f"{version}.lock")):
            # Another process may have finished while we waited for the lock.
            if not force and ready(home, fingerprint):
                return home
            self._build(version, home, fingerprint, list(requirements), finish, after, first_use, download, steps, say)
        return home

    def _build(self, version, home, fingerprint, requirements, finish, after, first_use, download, steps, say) -> None:
        started = time.monotonic()
        say(f"provisioning {self.engine} {version} in {home} (first use; {first_use})")
        if home.exists():
            shutil.rmtree(home)
        home.mkdir(parents=True)
        try:
            venv = home / "venv"
            say(f"[1/{steps}] creating a virtualenv for {self.engine} {version}")
            self.run([sys.executable, "-m", "venv", str(venv)], "create the virtualenv")
            say(f"[2/{steps}] installing {' '.join(requirements)} ({download})")
            self.run(
                [
                    str(venv / "bin" / "python"),
                    "-m",
                    "pip",
                    "install",
                    "--no-deps",
                    "--disable-pip-version-check",
                    "--progress-bar",
                    "off",
                    *requirements,
                ],
                f"install {self.engine} {version}",
                stream=say,
            )
            record = {"fingerprint": fingerprint, "version": version, **finish(home, venv, say)}
            record["seconds"] = round(time.monotonic() - started, 1)
            (home / MARKER).write_text(json.dumps(record))
            if after is not None:
                after(home, say)
        except BaseException:
            shutil.rmtree(home, ignore_errors=True)
            raise
        say(f"{self.engine} {version} ready in {time.monotonic() - started:.0f} s")

    def run(self, command: list[str], what: str, stream: Say | None = None) -> None:
        """Runs a build step; its output's last lines make the error when it fails."""
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        tail: list[str] = []
        assert process.stdout is not None
        for line in process.stdout:
            line = line.rstrip()
            tail = (tail + [line])[-15:]
            if stream and line.startswith(PROGRESS_LINES):
                stream("    " + line)
        if process.wait() != 0:
            raise ProvisionError(
                f"could not {what}: {' / '.join(tail[-5:]) or 'no output'}. "
                f"Check network access to the package index, then run `planlineage {self.command} install VERSION`."
            )


def ready(home: Path, fingerprint: str) -> bool:
    try:
        recorded = json.loads((home / MARKER).read_text())
    except (OSError, ValueError):
        return False
    return recorded.get("fingerprint") == fingerprint and venv_python(home).exists()
