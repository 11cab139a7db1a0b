"""The caller's side of a warm planner: where its socket lives, a compile on it, its status, stopping it.

Kept apart from the daemon (planner.warm) so that a caller loads no planner, provisioning or
compile-server code: the command line's `extract` asks a running warm planner for a finished
document through here (see planner.warm_extract) and imports nothing else of the planner.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from pathlib import Path

from planlineage import lazylog
from planlineage.errors import WarmPlannerError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # annotations only: the command line's warm `extract` loads this module without typing's cost
    from planlineage.planner.protocol import CompileAnswer, CompileRequest, ExtractAnswer, ExtractRequest

log = lazylog.getLogger(__name__)  # the warm `extract` logs nothing when all goes well

PLANNER_DIR_ENV = "PLANLINEAGE_PLANNER_DIR"
CONNECT_TIMEOUT = 0.5


# --- where warm planners live ----------------------------------------------------------------


def planner_dir(create: bool = False) -> Path:
    """The folder of the sockets, private to this user (checked, not assumed, when it exists)."""
    from planlineage import deprecated  # the directory's old variable name is still read

    configured = deprecated.environ(PLANNER_DIR_ENV)
    # Socket paths are limited to ~100 bytes, so the default is short rather than in a cache dir.
    folder = Path(configured) if configured else Path("/tmp") / f"planlineage-{os.getuid()}"
    if create:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if folder.exists():
        info = folder.stat()
        if info.st_uid != os.getuid() or info.st_mode & 0o077:
            raise WarmPlannerError(
                f"{folder} is not private to this user (owner and mode 0700 required); "
                f"remove it or set {PLANNER_DIR_ENV}."
            )
    return folder


#: The Flink cache's variable (planner.provision.CACHE_ENV, not imported: provisioning is heavy).
_FLINK_CACHE_ENV = "PLANLINEAGE_FLINK_CACHE"
_installation: dict[str, str] = {}


def installation() -> str:
    """Which installation a warm planner belongs to: this module's own file (one per install or
    virtualenv) and the Flink cache it compiles from. The sockets' folder is shared by every
    installation of the user, and a planner started by another one (another version of
    planlineage, another cache, a machine's other Java) must never answer this one's jobs."""
    cache = os.environ.get(_FLINK_CACHE_ENV, "")
    key = _installation.get(cache)
    if key is None:
        import hashlib

        seed = f"{Path(__file__).resolve()}\0{cache}".encode("utf-8", "surrogateescape")
        key = _installation[cache] = hashlib.sha256(seed).hexdigest()[:10]
    return key


def socket_name(minor: str) -> str:
    """The file name of this installation's warm planner's socket of a version."""
    return f"flink-{minor}-{installation()}.sock"


def socket_path(minor: str) -> Path:
    """The socket of this installation's warm planner of a version (short: a socket path is ~100 bytes at most)."""
    return planner_dir() / socket_name(minor)


def _own_sockets(folder: Path) -> list[Path]:
    return sorted(folder.glob(f"flink-*-{installation()}.sock")) if folder.exists() else []


# --- the client side ----------------------------------------------------------------------


def call(path: Path, message: dict, timeout: float) -> dict:
    """One message on a connection of its own (status, stop, start-up checks)."""
    conn = _Connection(path)
    try:
        return json.loads(conn.ask(json.dumps(message).encode() + b"\n", timeout))
    finally:
        conn.close()


class _Connection:
    """A connection to a warm planner that this process keeps for its next compile: a new one
    per job cost a connect, an accept and a thread of the warm planner's (~0.2 ms of a ~15 ms job)."""

    def __init__(self, path: Path):
        self.pid = os.getpid()  # a forked child must not write on its parent's connection
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.sock.settimeout(CONNECT_TIMEOUT)
            self.sock.connect(str(path))
        except OSError:
            self.sock.close()
            raise
        self.reader = self.sock.makefile("rb")

    def ask(self, line: bytes, timeout: float) -> bytes:
        self.sock.settimeout(timeout)
        self.sock.sendall(line)
        answer = self.reader.readline()
        if not answer.endswith(b"\n"):
            raise WarmPlannerError("the warm planner closed the connection")
        return answer

    def close(self) -> None:
        self.reader.close()
        self.sock.close()


_kept: dict[str, _Connection] = {}
_kept_lock = threading.Lock()


def _compile_call(path: Path, request: CompileRequest, timeout: float) -> CompileAnswer:
    """A compile on the connection this process keeps to the warm planner (one caller at a time
    uses it; a caller that finds it in use opens its own). A kept connection the warm planner has
    closed since (it stopped, idled out or was restarted) is replaced once; one that timed out is
    closed, never reused: its late answer would be read as the next job's."""
    line = json.dumps({"op": "compile", "request": request}).encode() + b"\n"
    key = str(path)
    with _kept_lock:
        conn = _kept.pop(key, None)
    if conn is not None and conn.pid != os.getpid():
        conn = None  # the parent's: left to it
    fresh = conn is None
    if conn is None:
        conn = _Connection(path)
    try:
        answer = conn.ask(line, timeout)
    except TimeoutError:
        conn.close()
        raise
    except (OSError, WarmPlannerError):
        conn.close()
        if fresh:
            raise
        conn = _Connection(path)
        try:
            answer = conn.ask(line, timeout)
        except (OSError, WarmPlannerError):
            conn.close()
            raise
    with _kept_lock:
        spare = _kept.setdefault(key, conn)
    if spare is not conn:
        conn.close()  # another caller's connection was kept meanwhile
    return json.loads(answer)


def compile_warm(minor: str, request: CompileRequest, timeout: float) -> CompileAnswer | None:
    """The answer of the running warm planner of that version, or None when there is none to ask."""
    try:
        path = socket_path(minor)
    except WarmPlannerError as error:
        log.warning("planlineage: %s", error)
        return None
    if not path.exists():
        _notice_idle_stop(path, minor)
        return None
    try:
        answer = _compile_call(path, request, timeout)
    except (OSError, ValueError, WarmPlannerError):
        return None  # a stale socket or a dying warm planner: the cold path answers instead
    return answer if "ok" in answer else None


def extract_warm(minor: str, request: ExtractRequest, timeout: float) -> ExtractAnswer | None:
    """The running warm planner's finished `extract` of a script (planner.warm_extract): its output
    or the user's error; None when there is no warm planner to ask or it says the caller must
    answer itself (the caller then does what it does without one)."""
    try:
        path = socket_path(minor)
    except WarmPlannerError:
        return None  # said by the caller's own path, which meets the same folder
    if not path.exists():
        return None
    try:
        answer = call(path, {"op": "extract", "request": request}, timeout)
    except (OSError, ValueError, WarmPlannerError):
        return None
    if answer.get("ok") is True and isinstance(answer.get("output"), str):
        return answer  # type: ignore[return-value]  # checked here: its output is text
    if answer.get("ok") is False and isinstance(answer.get("error"), dict):
        return answer  # type: ignore[return-value]  # checked here: an error to report
    return None  # a fallback, or an older warm planner that knows no `extract`


def idle_marker(path: Path) -> Path:
    return path.with_name(path.name + ".idle-stopped")


def _notice_idle_stop(path: Path, minor: str) -> None:
    """Says once (the marker is consumed) that the warm planner stopped after idling, so a slower cold
    compile is not a mystery."""
    marker = idle_marker(path)
    try:
        marker.unlink()
    except OSError:
        return
    log.warning(
        "planlineage: the warm Flink %s planner stopped after idling; compiling cold (slower). "
        "`planlineage planner start %s` starts it again.",
        minor,
        minor,
    )


def status() -> list[dict]:
    """What every reachable warm planner of this installation says about itself; stale sockets are
    reported as such."""
    try:
        folder = planner_dir()
    except WarmPlannerError as error:
        return [{"error": str(error)}]
    found = []
    for path in _own_sockets(folder):
        try:
            found.append(call(path, {"op": "status"}, 5.0))
        except (OSError, ValueError, WarmPlannerError):
            found.append({"socket": str(path), "state": "not answering (stale socket)"})
    return found


def stop(minor: str | None = None) -> int:
    """Stops this installation's warm planner of a version (or every one); how many were stopped."""
    folder = planner_dir()
    stopped = 0
    for path in _own_sockets(folder):
        if minor and path.name != socket_name(minor):
            continue
        try:
            call(path, {"op": "stop"}, 10.0)
            stopped += 1
        except (OSError, ValueError, WarmPlannerError):
            path.unlink(missing_ok=True)  # nobody listens: a leftover
        deadline = time.monotonic() + 10
        while path.exists() and time.monotonic() < deadline:  # stopped means no longer reachable
            time.sleep(0.05)
    return stopped
