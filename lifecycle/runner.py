"""The detached background worker of ``planlineage submit``: compile, attach lineage, deliver.

Design
------
``submit`` records the pending run (so that ``state`` reports arriving meanwhile are kept in
order), writes a job file ``$PLANLINEAGE_HOME/jobs/<runId>.json`` (0600: it holds the raw SQL the
compile needs, deleted once the job is done) and starts ``python -m planlineage _worker`` in its
own session with no stdio.  Liveness is an ``flock`` on ``jobs/<runId>.lock``: the spawner takes it
*before* the job file exists and hands the locked descriptor to the worker, so the lock is held
exactly as long as a worker for that job lives (the kernel drops it when the process dies, even
on SIGKILL).

Every later command (``state``, ``flush``) calls :func:`recover`: a job file whose lock can be
taken has no worker; if its run is still the application's current, lineage-less run, the compile
is started again (at most :data:`MAX_ATTEMPTS` times in all), else the run is abandoned
(``lifecycle.abandon_lineage``: later states of it send nothing) and the job file removed.

The worker is bounded in time (``PLANLINEAGE_WORKER_TIMEOUT``, default 600 s, enforced with
SIGALRM), fail-open, and logs one line per problem to ``$PLANLINEAGE_HOME/worker.log``.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from planlineage.emitter.store import Store

MAX_ATTEMPTS = 2
LOG_NAME = "worker.log"
LOG_MAX_BYTES = 1_000_000

log = logging.getLogger("planlineage.worker")


def _env_float(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, "") or default)
    except ValueError:
        return default


def worker_timeout() -> float:
    return _env_float("PLANLINEAGE_WORKER_TIMEOUT", 600.0)


def flush_budget() -> float:
    return _env_float("PLANLINEAGE_WORKER_FLUSH_SECONDS", 20.0)


def jobs_dir(store: Store) -> Path:
    return store.path.parent / "jobs"


def _write_json(path: Path, data: dict[str, Any]) -> None:
    from planlineage.home import write_private

    write_private(path, json.dumps(data).encode("utf-8"))  # its temporary file never stays behind


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        with path.open(encoding="utf-8") as handle:
            data = json.load(handle)
        return data if isinstance(data, dict) else None
    except (OSError, ValueError):
        return None


def _try_lock(path: Path) -> int | None:
    """An open descriptor holding the exclusive lock of ``path``, or None if someone holds it."""
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _remove(*paths: Path) -> None:
    for path in paths:
        try:
            path.unlink()
        except OSError:
            pass


def _spawn(job_path: Path, lock_fd: int) -> int:
    """Start a detached worker that inherits the locked descriptor; its pid."""
    process = subprocess.Popen(
        # -P: never let a `planlineage/` folder in the platform's working directory (a source
        # checkout, say) shadow the installed package.
        [sys.executable, "-P", "-m", "planlineage", "_worker", "--job", str(job_path), "--lock-fd", str(lock_fd)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        pass_fds=(lock_fd,),
        close_fds=True,
    )
    return process.pid


def start(store: Store, job: dict[str, Any]) -> None:
    """Write the job file and start its worker (called by ``submit`` after the pending run)."""
    folder = jobs_dir(store)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    lock_path = folder / f"{job['run_id']}.lock"
    job_path = folder / f"{job['run_id']}.json"
    fd = _try_lock(lock_path)  # lock first: recover() never sees a job file without its worker
    if fd is None:
        return
    try:
        job = dict(job, attempts=1, created=time.time())
        _write_json(job_path, job)
        job["pid"] = _spawn(job_path, fd)
        _write_json(job_path, job)
    except BaseException:
        _remove(job_path, lock_path)  # the raw SQL never stays behind without a worker
        raise
    finally:
        os.close(fd)


def recover(store: Store) -> int:
    """Restart or abandon the jobs whose worker died; how many were restarted. Fail-open."""
    folder = jobs_dir(store)
    try:
        candidates = sorted(folder.glob("*.json"))
    except OSError:
        return 0
    restarted = 0
    for job_path in candidates:
        try:
            restarted += _recover_one(store, job_path)
        except Exception as error:  # one broken job file never blocks the others
            log.warning("planlineage: lineage job %s not recovered: %s", job_path.stem, type(error).__name__)
    return restarted


def _recover_one(store: Store, job_path: Path) -> int:
    from planlineage.lifecycle import runs

    lock_path = job_path.with_suffix(".lock")
    fd = _try_lock(lock_path)
    if fd is None:
        return 0  # a worker is on it
    try:
        job = _read_json(job_path)
        if job is None:
            _remove(job_path, lock_path)
            return 0
        run = runs.current_run(store, job.get("app_id", ""))
        if run is None or run.run_id != job.get("run_id") or run.lineage is not None:
            _remove(job_path, lock_path)  # superseded, abandoned or done
            return 0
        if int(job.get("attempts", 1)) >= MAX_ATTEMPTS:
            runs.abandon_lineage(
                store, job["app_id"], job["run_id"], "the lineage worker died twice; this run is not reported"
            )
            _remove(job_path, lock_path)
            return 0
        job["attempts"] = int(job.get("attempts", 1)) + 1
        _write_json(job_path, job)
        job["pid"] = _spawn(job_path, fd)
        _write_json(job_path, job)
        return 1
    finally:
        os.close(fd)


# -- the worker process -----------------------------------------------------------------------


class WorkerTimeout(Exception):
    pass


def _on_alarm(signum, frame):  # pragma: no cover - exercised in a child process
    raise WorkerTimeout("the lineage worker ran out of time")


def _setup_logging(store: Store) -> None:
    path = store.path.parent / LOG_NAME
    try:
        if path.exists() and path.stat().st_size > LOG_MAX_BYTES:
            path.replace(path.with_name(LOG_NAME + ".1"))
        fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o600)
        handler = logging.StreamHandler(os.fdopen(fd, "a", encoding="utf-8"))
    except OSError:
        handler = logging.NullHandler()
    from planlineage.registry.secrets import RedactingFilter

    handler.setFormatter(logging.Formatter("%(asctime)s [%(process)d] %(message)s"))
    handler.addFilter(RedactingFilter())  # nothing secret reaches the log, whoever logs
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)


def _redacted_sql(sql: str) -> str:
    from planlineage.pipeline import script_options
    from planlineage.registry.secrets import redact_text

    return redact_text(sql, script_options(sql))


def _identity(settings):
    from planlineage.registry import load_config

    return load_config(
        settings.get("lineage.rules"),
        profile=settings.get("lineage.profile") or "openlineage",
        metalake=settings.get("lineage.metalake"),
    )


def _sql_limit(settings) -> int:
    from planlineage.lifecycle.runs import SQL_FACET_MAX_BYTES

    try:
        return int(float(settings.get("lineage.sql-max-bytes") or SQL_FACET_MAX_BYTES))
    except ValueError:
        return SQL_FACET_MAX_BYTES


def compile_job(store: Store, job: dict[str, Any], timeout: float) -> None:
    """Compile one job and attach its lineage, or abandon the run. Never raises."""
    from planlineage import pipeline as extraction
    from planlineage.lifecycle import runs
    from planlineage.settings import Settings

    app_id, run_id = job["app_id"], job["run_id"]
    settings = Settings(store)
    runs.close_replaced(store)  # the ABORT of a run this submission replaced goes before its START
    run = runs.current_run(store, app_id)
    if run is None or run.run_id != run_id or run.lineage is not None:
        return
    reason = job.get("error")
    if reason is None:
        sql = job.get("sql") or ""
        try:
            runs.set_redacted_sql(store, app_id, run_id, _redacted_sql(sql), _sql_limit(settings))
            lineage = extraction.extract(
                sql,
                flink_version=job.get("flink_version"),
                jars=job.get("jars") or [],
                identity=_identity(settings),
                timeout=timeout,
                columns=True,
            )  # events carry the columnLineage facet
        except WorkerTimeout as error:
            reason = str(error)
        except Exception as error:
            # ExtractError / ProvisionError / PlannerError / ConfigError messages are redacted
            reason = f"{type(error).__name__}: {error}"
        else:
            if not runs.attach_lineage(store, app_id, run_id, lineage):
                log.warning("planlineage: lineage of %s not attached (run superseded or failed)", app_id)
            return
    runs.abandon_lineage(store, app_id, run_id, reason)


def deliver(store: Store, budget: float) -> None:
    """Deliver until nothing is pending or ``budget`` seconds have passed (the outbox's backoff);
    one log line if something stays behind (the next command, or ``flush``, retries it)."""
    from planlineage.lifecycle import runs
    from planlineage.settings import Settings

    runs.deliver_for(store, Settings(store), budget)


def main(args) -> int:
    job_path = Path(args.job)
    store = Store(job_path.parent.parent / "state.db")
    _setup_logging(store)
    total = worker_timeout()
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(max(1, int(total)))
    try:
        job = _read_json(job_path)
        if job is not None:
            compile_job(store, job, timeout=max(5.0, total - flush_budget() - 10.0))
            _remove(job_path, job_path.with_suffix(".lock"))
        deliver(store, flush_budget())
    except WorkerTimeout as error:
        log.warning("planlineage: %s", error)
    except Exception as error:  # fail-open: the worker has no one to report to but its log
        log.warning("planlineage: lineage worker failed: %s", type(error).__name__)
    finally:
        signal.alarm(0)
        if args.lock_fd is not None:
            try:
                os.close(args.lock_fd)
            except OSError:
                pass
    return 0
