"""The compile service: the one place where the lifecycle's compiles run, on a bounded pool of
warm planners.

Why
---
A compile costs a JVM (~6 s of CPU cold, ~1.2 s warm).  One JVM per submission makes 20
submissions at once start 20 JVMs on the platform's machine and slows the platform itself.  So
``submit`` (and the StreamPark watcher) only record the run and queue a job file
(:mod:`.runner`); this service, one per ``$PLANLINEAGE_HOME``, compiles them:

* **Bounded**: at most ``lineage.compile-planners`` planner JVMs in all (default
  ``max(1, cores - 1)``), shared by the Flink versions the jobs ask for: a version's planner is
  kept warm (:class:`~planlineage.planner.warm.SelfHealingPlanner`: replaced when it dies, hangs
  or grows), an idle one of another version is stopped to make room.
* **Large jobs apart**: a job whose SQL is over :data:`LARGE_JOB_BYTES` compiles in a lane of
  its own (one at a time, on a planner of its own, one beyond the bound above, stopped after each
  such job), so the usual jobs never wait behind it.  Scripts over ``lineage.script-max-bytes``
  are never compiled (see docs/troubleshooting.md).
* **A running warm planner first**: one started with ``planlineage planner start`` answers
  before the pool's own planner of that version is started (as for ``extract``).
* **Niced** (``PLANLINEAGE_COMPILE_NICE``, default 10): the whole process from its start
  (its start-up, polling, event building and delivery, its compile threads and the
  JVMs they start), so the platform and the commands it runs go first.  Its database writes are
  short transactions whose events were built before the write lock is taken, so a niced writer
  holds the lock for no longer than a few statements.
* **On demand**: started by the first ``ensure_running`` that finds none (``submit``, and
  ``state``/``flush`` when jobs wait or events are left that they could not deliver within their
  bound, so a killed service is restarted by the next command); stops after
  ``PLANLINEAGE_COMPILE_IDLE_SECONDS`` (default 120) without work.  Its planner JVMs stop after
  that long without a compile, whatever is left to deliver, and the service itself after
  :data:`DELIVERY_LINGER_FACTOR` times that: events it could not deliver wait in the outbox for the
  next command.  The callers' side (is it
  running, start it) is :mod:`.service_start`, which they load instead of this module.
* **Its JVMs never outlive it**: each planner's process group is recorded in
  ``compile-service.pids``; a planner whose service died reads end-of-file on its stdin and
  exits, and the next service kills any group still listed before it starts.
* Liveness is an ``flock`` on ``compile-service.lock`` held for the service's life: the kernel
  drops it when the process dies, however it dies.  Two services never run for one home.

A job the service was compiling when it died is compiled once more by the next one, then, if
that one dies too, abandoned (:data:`runner.MAX_ATTEMPTS`).  With a shared (PostgreSQL) store the
jobs are rows every node's service claims with leases (:mod:`.compile_jobs`): a node that dies
mid-compile leaves its lease to run out and another node's service finishes the job.  After each compile the service
delivers what is pending with the outbox's backoff (``PLANLINEAGE_COMPILE_FLUSH_SECONDS``).
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import signal
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, cast

from planlineage import engines
from planlineage.clock import utc_now
from planlineage.lifecycle import job_files, planner_pool, runner, service_start, spool
from planlineage.lifecycle.job_files import CompileJob

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor
from planlineage.lifecycle.planner_pool import PlannerPool
from planlineage.store.sqlite import Store

log = logging.getLogger(__name__)

LOCK_NAME = service_start.LOCK_NAME
PIDS_NAME = "compile-service.pids"
COMMAND = service_start.COMMAND
POLL_SECONDS = 0.2
#: A job whose SQL is larger than this compiles in a lane of its own (one job at a time, its own
#: planner), so that it never holds the pool's planners while the usual jobs of a few kilobytes
#: wait behind it (a 50 MB literal held the one planner of a 2-core machine for 10 minutes).
LARGE_JOB_BYTES = 512 * 1024
#: How many large jobs a node holds at once (one compiling, one next): the rest stay queued.
LARGE_JOBS_HELD = 2
#: After the server was found unavailable, due events wait this long for the next try (or for
#: the next command, which hands them over again).
OUTAGE_PAUSE_SECONDS = 30.0
#: Without a compile for this many idle times, the service ends even with events left that it
#: could not deliver (a backend gone for good must not keep it alive): the next `submit`,
#: `state` or `flush` delivers them, and hands what it cannot to a new service.
DELIVERY_LINGER_FACTOR = 2.0


def default_planners() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, cores - 1)


def max_planners(settings) -> int:
    from planlineage.errors import StoreError

    try:
        value = settings.config().limits.compile_planners
    except StoreError:  # the shared store is away: the service still replays the spool
        value = 0
    return value if value > 0 else default_planners()


def is_large(job: CompileJob) -> bool:
    """Whether a job compiles in the large jobs' lane (its SQL over :data:`LARGE_JOB_BYTES`)."""
    sql = job.get("sql")
    return isinstance(sql, str) and len(sql) > LARGE_JOB_BYTES


# -- the callers' side (lifecycle/service_start.py; the names stay here for the service) ---------

is_running = service_start.is_running
ensure_running = service_start.ensure_running
recover = service_start.recover


# -- the service ---------------------------------------------------------------------------------


def _pids_path(store: Store) -> Path:
    return store.path.parent / PIDS_NAME


def _kill_leftovers(store: Store) -> None:
    """Planner process groups a dead service left behind are ended before anything starts."""
    path = _pids_path(store)
    try:
        groups = json.loads(path.read_text())
    except (OSError, ValueError):
        return
    for group in groups if isinstance(groups, list) else []:
        try:
            cmdline = Path(f"/proc/{int(group)}/cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        if b"compile_server" in cmdline:  # still the planner we started, not a reused pid
            try:
                os.killpg(int(group), signal.SIGKILL)
            except OSError:
                pass
    try:
        path.unlink()
    except OSError:
        pass


class Service:
    def __init__(self, store: Store, planners: int, idle_seconds: float):
        self.store = store
        self.pool = PlannerPool(planners, self._remember, threads=planner_pool.COMPILE_THREADS)
        self.large_pool = PlannerPool(1, self._remember)  # the lane of large jobs
        self.idle_seconds = idle_seconds
        self.taken: set[str] = set()
        self.taken_large: set[str] = set()  # of these, those of the large jobs' lane
        self.large_lane: ThreadPoolExecutor | None = None  # the large jobs' thread, while serving
        self.lock = threading.Lock()
        self.last_work = time.monotonic()
        self.last_compile = time.monotonic()  # the idle rule counts compiles, not deliveries
        self.planners_kept = False  # a planner may run: the pools were used since last closed
        self.winding_down = False  # ending with events kept: no new delivery pass
        self.groups: set[int] = set()
        self.deliver_wanted = threading.Event()
        self.stopping = threading.Event()
        self.busy_delivering = False
        self.last_pass = utc_now()  # when the last delivery pass began (stored time): what came later was not seen
        self.unavailable_at = -OUTAGE_PAUSE_SECONDS
        self.spool_retry_at = 0.0
        self.claims_retry_at = 0.0
        self.shared = bool(getattr(store, "shared", False))  # compile jobs are rows of the shared store
        if self.shared:
            from planlineage.lifecycle import compile_jobs
            from planlineage.store.node import new_holder

            self.holder = new_holder()
            self.lease = compile_jobs.lease_seconds()
            self.renewed = time.monotonic()

    def _remember(self, pid: int | None) -> None:
        if pid is None or pid in self.groups:
            return
        from planlineage.home import write_private

        with self.lock:  # one writer at a time: the temporary file is named after the process
            self.groups.add(pid)
            alive = [g for g in self.groups if Path(f"/proc/{g}").exists()]
            self.groups = set(alive)
            try:
                write_private(_pids_path(self.store), json.dumps(sorted(alive)).encode())
            except OSError:
                pass

    def _take(self, path: Path) -> CompileJob | None:
        job = job_files.read_job(path)
        if job is None:
            job_files.remove_job(path)
            return None
        attempts = int(job.get("attempts", 0)) + 1
        if attempts > runner.MAX_ATTEMPTS:
            from planlineage.lifecycle import runs

            runs.abandon_lineage(
                self.store, job.get("app_id", ""), job.get("run_id", ""), "the compile died twice; not reported"
            )
            job_files.remove_job(path)
            return None
        job["attempts"] = attempts
        job_files.write_job(path, job)  # counted before the compile: a death under it is seen
        return job

    def _pool_for(self, job: CompileJob) -> PlannerPool:
        return self.large_pool if is_large(job) else self.pool

    def _slot_for(self, job: CompileJob):
        """The pool place a job compiles in (None: nothing to compile, the run is abandoned)."""
        if job.get("error") is not None:
            return None
        # A compile starting its own JVM (Spark's) takes a place too, never asked to compile.
        engine = engines.get(job.get("engine"))
        version = cast("str | None", job.get(engine.version_field))  # flink_version, spark_version, ...
        if engine.pooled_compiler:
            return self._pool_for(job).acquire(version)
        return self._pool_for(job).acquire(f"{engine.name}-{version}", own_jvm=True)

    def _compile(self, job: CompileJob) -> None:
        """Compiles a job in a pool place (waiting for one), which it gives back after."""
        slot = None
        try:
            slot = self._slot_for(job)
            self.planners_kept = True
            runner.compile_job(self.store, job, planner=slot)
        finally:
            if slot is not None:
                pool = self._pool_for(job)
                if pool is self.large_pool:
                    slot.close()  # its JVM, grown by a large job, is not kept for the next
                pool.release(slot)

    def _submit(self, compiles, large, run, job: CompileJob, *args) -> None:
        """Hands a job to the compile threads, or a large one to the large jobs' lane."""
        (large if is_large(job) else compiles).submit(run, *args)

    def _done(self, taken: str) -> None:
        with self.lock:
            self.taken.discard(taken)
            self.taken_large.discard(taken)
            self.last_work = self.last_compile = time.monotonic()
        self.deliver_wanted.set()

    def _run_one(self, path: Path, job: CompileJob) -> None:
        try:
            self._compile(job)
        finally:
            job_files.remove_job(path)
            self._done(path.name)

    def _work_waiting(self) -> bool:
        """Transitions to turn into events, replaced runs to close, or events due (not while the
        server was just found unavailable: then the next command's hand-over asks again)."""
        if time.monotonic() - self.unavailable_at < OUTAGE_PAUSE_SECONDS:
            due = ""
        else:
            due = " OR EXISTS (SELECT 1 FROM outbox WHERE status = 'pending' AND COALESCE(next_attempt, 0) <= :now)"
        query = (
            "SELECT EXISTS (SELECT 1 FROM runs WHERE lineage IS NOT NULL AND pending != '[]') "
            f"OR EXISTS (SELECT 1 FROM closing){due}"
        )
        try:
            return bool(self.store.read(lambda c: c.execute(query, {"now": time.time()}).fetchone()[0], False))
        except Exception:
            return False

    # -- a shared store's jobs (rows claimed with leases, see compile_jobs) -------------------------

    def _room_for(self, path: Path) -> bool:
        """(Under the lock.) Whether a queued job file may be taken now: a few ahead of the
        planners in each lane, so that large jobs waiting never keep the usual ones from being
        taken (a job file's size stands for its SQL's)."""
        try:
            large = path.stat().st_size > LARGE_JOB_BYTES
        except OSError:
            return False
        if large:
            if len(self.taken_large) >= LARGE_JOBS_HELD:
                return False
            self.taken_large.add(path.name)
            return True
        return len(self.taken) - len(self.taken_large) < 4 * self.pool.capacity

    def _claim_shared(self, compiles) -> None:
        """Claim jobs while this node has a free planner; renew the leases it holds."""
        from planlineage.lifecycle import compile_jobs, runs

        now = time.monotonic()
        if now - self.renewed >= self.lease / 3:
            self.renewed = now
            try:
                compile_jobs.renew_all(self.store, self.holder, self.lease)
            except Exception as error:  # the store is away: the lease outlives a few misses
                log.warning("planlineage: compile leases not renewed: %s", type(error).__name__)
        while True:
            with self.lock:  # leave the rest to the other nodes (a large job waits for the lane)
                usual = len(self.taken) - len(self.taken_large)
                if usual >= self.pool.capacity or len(self.taken_large) >= LARGE_JOBS_HELD:
                    return
            claimed = compile_jobs.claim_next(self.store, self.holder, self.lease)
            if claimed is None:
                return
            job, attempt = claimed
            if attempt > runner.MAX_ATTEMPTS:
                runs.abandon_lineage(
                    self.store, job.get("app_id", ""), job.get("run_id", ""), "the compile died twice; not reported"
                )
                compile_jobs.finish(self.store, job["run_id"])
                continue
            with self.lock:
                self.taken.add(f"shared:{job['run_id']}")
                if is_large(job):
                    self.taken_large.add(f"shared:{job['run_id']}")
            self._submit(compiles, self.large_lane, self._run_shared, job, job)

    def _run_shared(self, job: CompileJob) -> None:
        from planlineage.lifecycle import compile_jobs

        try:
            self._compile(job)
        finally:
            try:
                compile_jobs.finish(self.store, job["run_id"])
            except Exception as error:  # the lease runs out; another service sees the run done
                log.warning("planlineage: compile job not removed: %s", type(error).__name__)
            self._done(f"shared:{job['run_id']}")

    def _deliver_loop(self) -> None:
        from planlineage.lifecycle import delivery
        from planlineage.settings import Settings

        while not self.stopping.is_set():
            if not self.deliver_wanted.wait(0.5) and not self._work_waiting():
                continue
            with self.lock:  # the main loop decides under the lock whether a pass is under way
                winding_down = self.winding_down
                self.busy_delivering = not winding_down
            if winding_down:  # until the service ends, or a new compile makes it serve on
                time.sleep(POLL_SECONDS)
                continue
            self.deliver_wanted.clear()
            self.last_pass = utc_now()
            try:
                report = delivery.deliver_for(self.store, Settings(self.store), runner.flush_budget())
                if report is not None and report.stopped:
                    self.unavailable_at = time.monotonic()
            finally:
                self.busy_delivering = False
                self.last_work = time.monotonic()

    def _replay_spool(self) -> None:
        from planlineage.errors import StoreError
        from planlineage.lifecycle import runs

        if time.monotonic() < self.spool_retry_at:
            return
        try:
            if spool.waiting(self.store) and runs.replay_spooled(self.store):
                self.deliver_wanted.set()
                self.last_work = time.monotonic()
        except (OSError, StoreError):
            self.spool_retry_at = time.monotonic() + 1.0  # still busy or away: again in a second

    def serve(self, nice: int) -> None:
        from concurrent.futures import ThreadPoolExecutor  # here: submit imports this module too

        self.deliver_wanted.set()  # started for undelivered events too: deliver them first
        self.last_compile = time.monotonic()  # the idle times count from serving, not from start-up
        threading.Thread(target=self._deliver_loop, daemon=True).start()

        def lower_priority() -> None:
            # Per thread too (the process is niced already when started as a command): a library
            # caller's compile threads and the planners they start still yield to the platform.
            try:
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), nice)
            except (OSError, AttributeError):
                pass

        with (
            ThreadPoolExecutor(self.pool.capacity, "compile", initializer=lower_priority) as compiles,
            ThreadPoolExecutor(1, "compile-large", initializer=lower_priority) as large,
        ):
            self.large_lane = large
            while not self.stopping.is_set():
                self._replay_spool()
                if self.shared and time.monotonic() >= self.claims_retry_at:
                    try:
                        self._claim_shared(compiles)
                    except Exception as error:  # fail-open: again in a second (a store away: one line a second)
                        self.claims_retry_at = time.monotonic() + 1.0
                        log.warning("planlineage: shared compile jobs not claimed: %s", type(error).__name__)
                for path in job_files.queued_jobs(self.store):
                    with self.lock:
                        if path.name in self.taken or not self._room_for(path):
                            continue
                        self.taken.add(path.name)
                    job = self._take(path)
                    if job is None:
                        with self.lock:
                            self.taken.discard(path.name)
                            self.taken_large.discard(path.name)
                        continue
                    self._submit(compiles, self.large_lane, self._run_one, job, path, job)
                with self.lock:
                    compiling = bool(self.taken)
                    self.winding_down = self.winding_down and not compiling
                    idle = not compiling and not self.busy_delivering and not self.deliver_wanted.is_set()
                    quiet = time.monotonic() - self.last_work
                    no_compile = time.monotonic() - self.last_compile
                if idle and quiet > self.idle_seconds:
                    break
                if not compiling and no_compile > self.idle_seconds:
                    if self.planners_kept:  # kept events never hold a planner JVM
                        self.planners_kept = False
                        self.pool.close()
                        self.large_pool.close()
                    if no_compile > DELIVERY_LINGER_FACTOR * self.idle_seconds:
                        with self.lock:
                            # No new delivery pass, but one asked for (the start's, a compile's)
                            # runs first; the one under way ends.
                            self.winding_down = not self.deliver_wanted.is_set()
                            delivering = self.busy_delivering or not self.winding_down
                        if not delivering:
                            break  # what it could not deliver waits for the next command (docs/lifecycle.md)
                time.sleep(POLL_SECONDS)
        self.stopping.set()
        self.pool.close()
        self.large_pool.close()


def _take_lock(store: Store, lock_fd: int | None) -> int | None:
    """The service's lock: the descriptor its starter locked and handed over, else its own."""
    if lock_fd is not None:
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # ours already: confirms it is the lock
            if os.fstat(lock_fd).st_ino == os.stat(service_start.lock_path(store)).st_ino:
                os.set_inheritable(lock_fd, False)  # no planner it starts may keep the lock alive
                return lock_fd
        except OSError:
            pass
        try:
            os.close(lock_fd)
        except OSError:
            pass
    return service_start.try_lock(service_start.lock_path(store))


def main(home: str, lock_fd: int | None = None) -> int:
    """The ``_compile-service`` process: hold the lock, sweep leftovers, serve until idle."""
    from planlineage.store import open_store

    service_start.lower_priority()  # (the command did already; a library caller too)
    store = open_store(home=Path(home))
    fd = _take_lock(store, lock_fd)
    if fd is None:
        return 0  # another service already runs for this home
    runner.setup_logging(store)
    nice = service_start.nice_level()
    service = None
    failed = False
    try:
        from planlineage.settings import Settings

        _kill_leftovers(store)
        idle = runner._env_float("PLANLINEAGE_COMPILE_IDLE_SECONDS", 120.0)
        service = Service(store, max_planners(Settings(store)), idle)

        def stop(signum, frame):  # pragma: no cover - exercised in a child process
            service.stopping.set()

        signal.signal(signal.SIGTERM, stop)
        service.serve(nice)
    except Exception as error:  # fail-open: the next command restarts it
        failed = True
        log.warning("planlineage: compile service stopped: %s", type(error).__name__)
    finally:
        if service is not None:
            service.pool.close()
            service.large_pool.close()
        try:
            _pids_path(store).unlink()
        except OSError:
            pass
        os.close(fd)
    from planlineage.lifecycle import delivery

    seen = service.last_pass if service is not None else ""
    # a job queued, or a state reported, while this one was stopping (it found the lock held)
    if not failed and (job_files.queued_jobs(store) or delivery.arrived_since(store, seen)):
        ensure_running(store)
    return 0
