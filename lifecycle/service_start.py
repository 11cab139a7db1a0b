"""The callers' side of the compile service: is it running for this home, and starting it.

Every ``submit`` (and ``state``/``flush`` when work waits) asks; a platform runs them for each job,
often many at once, so this module loads nothing but the standard library (the service's own
code, :mod:`.compile_service`, is not imported by the callers).

Liveness is an ``flock`` on ``$PLANLINEAGE_HOME/compile-service.lock`` held for the service's
life.  The caller that finds the lock free keeps holding it while it starts the service and hands
its locked descriptor over to it (``--lock-fd``): from the moment one caller decides to start a
service, every other caller sees one running, so concurrent submissions start exactly one (not
one interpreter each that would find the lock taken and exit, at the callers' expense).
"""

from __future__ import annotations

import fcntl
import os
import sys
from pathlib import Path

from planlineage import lazylog

log = lazylog.getLogger(__name__)  # logging loads only when something is logged

LOCK_NAME = "compile-service.lock"
COMMAND = "_compile-service"


def lock_path(store) -> Path:
    return store.path.parent / LOCK_NAME


def try_lock(path: Path) -> int | None:
    """A descriptor holding the lock of ``path``, or None if another process holds it (or the
    file cannot be opened)."""
    try:
        fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def is_running(store) -> bool:
    fd = try_lock(lock_path(store))
    if fd is None:
        return lock_path(store).exists()
    os.close(fd)
    return False


def ensure_running(store) -> bool:
    """Start the service of this home unless one runs (or is being started); True when this call
    started it."""
    if getattr(store, "shared", False):
        from planlineage.home import make_private_dir

        make_private_dir(store.path.parent)  # the node's home holds the lock: no state file made it
    try:
        fd = os.open(lock_path(store), os.O_CREAT | os.O_RDWR, 0o600)
    except OSError:  # the lock cannot be held here: the service takes it itself (or exits)
        _start(store.path.parent, None)
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False  # held: a service runs, or another caller is starting one with it
    try:
        _start(store.path.parent, fd)
    finally:
        os.close(fd)  # the service holds the lock through its own copy of the descriptor
    return True


def _start(home: Path, lock_fd: int | None) -> None:
    import subprocess  # only the caller that starts the service pays for it

    # -P: never let a `planlineage/` folder in the platform's working directory (a source
    # checkout, say) shadow the installed package.
    command = [sys.executable, "-P", "-m", "planlineage", COMMAND, "--home", str(home)]
    subprocess.Popen(
        command if lock_fd is None else [*command, "--lock-fd", str(lock_fd)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
        pass_fds=() if lock_fd is None else (lock_fd,),
    )


def nice_level() -> int:
    """How far below the platform the service runs (``PLANLINEAGE_COMPILE_NICE``, default 10)."""
    try:
        return int(os.environ.get("PLANLINEAGE_COMPILE_NICE", "10") or 10)
    except ValueError:
        return 10


def lower_priority() -> None:
    """Called first thing in the service's process, before it loads anything: all of it (its
    start-up, its polling, its event building and delivery, its compile threads and the planner
    JVMs they start, which inherit it) yields the CPU to the platform and to the callers."""
    try:
        current = os.getpriority(os.PRIO_PROCESS, 0)
        if current < nice_level():
            os.setpriority(os.PRIO_PROCESS, 0, nice_level())
    except (OSError, AttributeError):
        pass
    if os.getsid(0) == os.getpid():  # its own session: its group too (never a library caller's)
        from planlineage.line_child import nice_session_group

        nice_session_group("self", nice_level())


def recover(store, undelivered: bool = False) -> bool:
    """Called by every later command: restart the service when jobs wait (or, ``undelivered``,
    events the command could not deliver within its bound) and none runs."""
    try:
        if undelivered or _jobs_waiting(store):
            return ensure_running(store)
    except Exception as error:  # fail-open
        log.warning("planlineage: compile service not restarted: %s", type(error).__name__)
    return False


def _jobs_waiting(store) -> bool:
    from planlineage.lifecycle import job_files, spool

    if job_files.queued_jobs(store) or spool.waiting(store):
        return True
    if not getattr(store, "shared", False):
        return False
    from planlineage.lifecycle import compile_jobs  # a shared store's jobs no live service holds

    return compile_jobs.expired(store) > 0
