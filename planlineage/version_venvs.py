"""Per-version isolated virtualenvs in a per-user cache: what Flink's and Spark's provisioning share.

An engine (Flink, Spark) keeps one virtualenv per supported version under ``<cache>/<version>``
with only what its child process needs. A venv is trusted only when its ``ready.json`` records
the fingerprint of what it must contain (an old one is rebuilt, not trusted). Building happens on
first use with progress on stderr, under a file lock ``<cache>/<version>.lock`` (a process that
waited for the lock finds the winner's work), and a failed build leaves nothing behind.

What each engine adds (Flink's stand-in connector and class-data archive, Spark's jar check) is
the ``finish`` step of :meth:`VenvCache.ensure`; the layout, the fingerprint recipe and the
messages are the same for both, so existing caches stay valid.

Requirements pinned with ``--hash=sha256:...`` are installed in hash-checking mode: every file is
verified before it is installed, and a source distribution is built with the hash-pinned build
requirements installed first (no build isolation, which would fetch unverified build tools).
``uv`` installs when it is found (on PATH or beside this Python), pip otherwise.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
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
#: uv's lines worth showing (it says less, and nothing per file while it downloads).
UV_PROGRESS_LINES = ("Resolved", "Downloading", "Downloaded", "Building", "Built", "Prepared", "Installed", "+ ")
#: What marks a requirement pinned to its files' hashes (pip's and uv's requirement-file option).
HASH_OPTION = "--hash="
#: How pip and uv say that a file is not the one whose hash was listed.
HASH_MISMATCH = re.compile(r"DO NOT MATCH THE HASHES|hash mismatch", re.IGNORECASE)
#: Seconds between two lines of download progress (pip's own bar is off: its output is not a terminal).
DOWNLOAD_EVERY = 10.0
#: ``<cache>/<version>.progress``: the lines of the last provisioning of a version, as it goes, for
#: a process that waits for another one's provisioning (``watch`` waits for the compile service).
PROGRESS_SUFFIX = ".progress"

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
        build_requirements: Iterable[str] = (),
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
        marker is written (a step that needs the ready venv). ``build_requirements`` are
        installed before ``requirements`` and build them (see the module's docstring)."""
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
            wanted = _Requirements(list(requirements), list(build_requirements))
            self._build(version, home, fingerprint, wanted, finish, after, first_use, download, steps, say)
        return home

    def _build(self, version, home, fingerprint, wanted, finish, after, first_use, download, steps, say) -> None:
        started = time.monotonic()
        say = _Recorded(say, home.parent / f"{version}{PROGRESS_SUFFIX}")
        say(f"provisioning {self.engine} {version} in {home} (first use; {first_use})")
        if home.exists():
            shutil.rmtree(home)
        home.mkdir(parents=True)
        try:
            venv = home / "venv"
            say(f"[1/{steps}] creating a virtualenv for {self.engine} {version}")
            self.run([sys.executable, "-m", "venv", str(venv)], "create the virtualenv")
            tool = installer()
            say(f"[2/{steps}] installing {wanted.names()} ({download}{wanted.verified()}, with {tool[0]})")
            downloads = home / "tmp"
            if wanted.build:
                self.run(
                    install_command(tool, venv, wanted.build, downloads, build_isolation=True),
                    f"install what builds {self.engine} {version}",
                    stream=say,
                    downloads=downloads,
                )
            self.run(
                install_command(tool, venv, wanted.packages, downloads, build_isolation=not wanted.build),
                f"install {self.engine} {version}",
                stream=say,
                downloads=downloads,
            )
            shutil.rmtree(downloads, ignore_errors=True)
            record = {"fingerprint": fingerprint, "version": version, **finish(home, venv, say)}
            record["seconds"] = round(time.monotonic() - started, 1)
            (home / MARKER).write_text(json.dumps(record))
            if after is not None:
                after(home, say)
        except BaseException as error:
            shutil.rmtree(home, ignore_errors=True)
            say.record(f"provisioning {self.engine} {version} failed: {error}")  # raised: said by the caller
            raise
        say(f"{self.engine} {version} ready in {time.monotonic() - started:.0f} s")

    def run(self, command: list[str], what: str, stream: Say | None = None, downloads: Path | None = None) -> None:
        """Runs a build step; its output's last lines make the error when it fails. With
        ``downloads`` (pip), the step's temporary files go there, and while pip downloads a file
        its size so far is said every :data:`DOWNLOAD_EVERY` seconds."""
        env = None
        if downloads is not None:
            downloads.mkdir(parents=True, exist_ok=True)
            env = {**os.environ, "TMPDIR": str(downloads)}
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        watch = _DownloadWatch(downloads, stream) if downloads is not None and stream is not None else None
        tail: list[str] = []
        assert process.stdout is not None
        try:
            for line in process.stdout:
                line = line.rstrip()
                tail = (tail + [line])[-15:]
                if stream and line.lstrip().startswith(PROGRESS_LINES + UV_PROGRESS_LINES):  # indented by pip
                    stream("    " + line.lstrip())
                if watch is not None:
                    watch.line(line)
        finally:
            if watch is not None:
                watch.stop()
        if process.wait() != 0:
            said = _redacted(" / ".join(tail[-5:])) or "no output"
            if HASH_MISMATCH.search("\n".join(tail)):
                advice = (
                    "A downloaded file's sha256 is not one its version file lists: the package index served "
                    "another file than the one published. Point pip (PIP_INDEX_URL) or uv (UV_INDEX_URL) at an "
                    "index that serves the published files"
                )
            else:
                advice = "Check network access to the package index"
            raise ProvisionError(
                f"could not {what}: {said}. {advice}, then run `planlineage {self.command} install VERSION`."
            )


@dataclass(frozen=True)
class _Requirements:
    """What a venv installs: ``packages``, and ``build`` (what builds those that are source
    distributions), each a list of pip requirement lines."""

    packages: list[str]
    build: list[str]

    def names(self) -> str:
        """The requirements as progress says them: without their hashes."""
        return " ".join(line.split(" ", 1)[0] for line in self.packages)

    def verified(self) -> str:
        every = self.packages + self.build
        return ", every file verified by its sha256" if every and all(HASH_OPTION in line for line in every) else ""


def installer() -> list[str]:
    """How packages are installed: ``uv pip`` where uv is found (on PATH, else beside this Python,
    where ``pip install uv`` puts it: several times faster, and its cache is shared), else the
    venv's own pip. The first word names the tool in progress lines."""
    found = shutil.which("uv") or shutil.which("uv", path=str(Path(sys.executable).parent))
    return ["uv", found] if found else ["pip"]


def install_command(
    tool: list[str], venv: Path, requirements: list[str], work: Path, *, build_isolation: bool
) -> list[str]:
    """The command that installs ``requirements`` (pip requirement lines) into ``venv``, without
    their dependencies. Hash-pinned lines are written to a requirements file in ``work`` (the only
    place pip and uv read ``--hash`` from) and installed with ``--require-hashes``: a file whose
    sha256 is not listed is refused. Without ``build_isolation`` a source distribution is built
    with what the venv already holds."""
    hashed = bool(requirements) and all(HASH_OPTION in line for line in requirements)
    if hashed:
        work.mkdir(parents=True, exist_ok=True)
        listed = work / f"requirements-{hashlib.sha256(chr(10).join(requirements).encode()).hexdigest()[:8]}.txt"
        listed.write_text("".join(line + "\n" for line in requirements))
        named = ["--require-hashes", "-r", str(listed)]
    else:
        named = list(requirements)
    isolation = [] if build_isolation else ["--no-build-isolation"]
    python = str(venv / "bin" / "python")
    if tool[0] == "uv":
        return [tool[1], "pip", "install", "--python", python, "--no-deps", *isolation, *named]
    pip = [python, "-m", "pip", "install", "--no-deps", "--disable-pip-version-check", "--progress-bar", "off"]
    return [*pip, *isolation, *named]


class _Recorded:
    """Says a provisioning's lines and records them in its progress file (truncated when the
    provisioning starts), so that a process waiting for it can show them too. Both are masked the
    same way (pip's output may name an index URL with its password). Once saying fails (stderr
    closed: its reader went away), the lines are only recorded: the provisioning goes on."""

    def __init__(self, say: Say, path: Path):
        self.say, self.path = say, path
        self._lock = threading.Lock()  # the download watch says from its own thread
        self._quiet = False
        self._write(path.write_text, "")

    def __call__(self, message: str) -> None:
        text = _redacted(message)
        if not self._quiet:
            try:
                self.say(text)
            except (OSError, ValueError):  # a closed (or gone) stderr: the progress file goes on
                self._quiet = True
        self._record(text)

    def record(self, message: str) -> None:
        """Records a line without saying it."""
        self._record(_redacted(message))

    def _record(self, text: str) -> None:
        line = " ".join(text.rstrip().splitlines()) + "\n"  # one line, its indent kept
        with self._lock:
            self._write(self._append, line)

    def _append(self, text: str) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(text)

    @staticmethod
    def _write(write, text: str) -> None:
        try:
            write(text)
        except OSError:  # the progress file is a courtesy: provisioning goes on without it
            pass


def _redacted(message: object) -> str:
    """A provisioning's line with every secret masked: said on screen and written to a file
    outside the settings."""
    from planlineage.registry.secrets import redact_text

    return redact_text(str(message))


class _DownloadWatch:
    """How much of the file pip is downloading has arrived: pip downloads into a ``pip-unpack-*``
    folder of its temporary directory (``downloads``) after saying ``Downloading NAME (SIZE)``;
    a thread sums the sizes found there and says them every :data:`DOWNLOAD_EVERY` seconds."""

    def __init__(self, downloads: Path, say: Say):
        self.downloads, self.say = downloads, say
        self.name: str | None = None
        self.total = ""
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="planlineage-download-progress", daemon=True)
        self._thread.start()

    def line(self, line: str) -> None:
        line = line.strip()
        if line.startswith("Downloading "):
            name, _, size = line.removeprefix("Downloading ").partition(" (")
            self.name, self.total = name.strip(), size.rstrip(")").strip()
        elif line:  # pip moved on (Building, Installing...)
            self.name = None

    def stop(self) -> None:
        self._done.set()
        self._thread.join(timeout=DOWNLOAD_EVERY + 1)

    def _run(self) -> None:
        last = -1
        while not self._done.wait(DOWNLOAD_EVERY):
            name = self.name
            if name is None:
                continue
            try:
                received = sum(
                    entry.stat().st_size
                    for folder in self.downloads.glob("pip-unpack-*")
                    for entry in folder.iterdir()
                    if entry.is_file()
                )
            except OSError:  # pip removed its folder meanwhile: the download is over
                continue
            if received != last and self.name == name:
                last = received
                of = f" of {self.total}" if self.total else ""
                total = _bytes(self.total)
                share = f" ({min(100, round(100 * received / total))}%)" if total else ""
                try:
                    self.say(f"    downloading {name}: {received / 1e6:.1f} MB{of}{share}")
                except (OSError, ValueError):  # nowhere to say it (stderr closed): no more reports
                    return


def _bytes(size: str) -> float | None:
    """pip's size of a download ("231.5 MB", "11 kB", "512 bytes") in bytes; None when not one."""
    number, _, unit = size.partition(" ")
    scale = {"bytes": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}.get(unit)
    try:
        return float(number) * scale if scale and float(number) > 0 else None
    except ValueError:
        return None


class ProgressFollower:
    """Shows the provisionings that another process runs (``watch`` hands its compiles to the
    compile service, which provisions a version on first use): every line added to a progress
    file of the ``roots`` (caches) since the follower started is said, from a thread polling
    every ``every`` seconds. ``stop()`` says what is left and ends the thread."""

    def __init__(self, roots: Iterable[Path], say: Say, every: float = 1.0):
        self.roots, self.say, self.every = list(roots), say, every
        self._started = time.time()
        self._read: dict[Path, int] = {}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="planlineage-provisioning", daemon=True)

    def __enter__(self) -> ProgressFollower:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        self._done.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self.every + 5)
        self.poll()

    def _run(self) -> None:
        while not self._done.wait(self.every):
            try:
                self.poll()
            except (OSError, ValueError):  # nowhere to say it (stderr closed): the caller goes on
                return

    def poll(self) -> None:
        for root in self.roots:
            try:
                files = [f for f in root.glob(f"*{PROGRESS_SUFFIX}") if f.stat().st_mtime >= self._started - 1]
            except OSError:
                continue
            for path in files:
                self._say_new(path)

    def _say_new(self, path: Path) -> None:
        try:
            with path.open("rb") as handle:
                size = handle.seek(0, os.SEEK_END)
                offset = self._read.get(path, 0)
                if size < offset:  # truncated: a new provisioning of that version
                    offset = 0
                handle.seek(offset)
                data = handle.read()
        except OSError:
            return
        complete, newline, _ = data.rpartition(b"\n")
        if not newline:
            return  # nothing new, or a line still being written
        self._read[path] = offset + len(complete) + 1
        for line in complete.decode("utf-8", "replace").splitlines():
            if line.strip():
                self.say(line)


def ready(home: Path, fingerprint: str) -> bool:
    try:
        recorded = json.loads((home / MARKER).read_text())
    except (OSError, ValueError):
        return False
    return recorded.get("fingerprint") == fingerprint and venv_python(home).exists()
