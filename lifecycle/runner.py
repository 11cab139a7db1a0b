"""Submitted jobs waiting for their compile: job files, and what one compile does with its result.

Library entry points (``submit`` and the StreamPark watcher drive the lifecycle through them):

* :func:`submit_job` — record a new run and queue its compile; the run id (None: not configured).
* :func:`planlineage.lifecycle.runs.record_state` — a platform state report.
* :func:`planlineage.lifecycle.delivery.flush` — deliver what is pending within a deadline.

With a shared (PostgreSQL) store a queued compile is a row of ``compile_jobs`` instead, leased
by the node whose service compiles it (:mod:`planlineage.lifecycle.compile_jobs`).  Otherwise
a queued compile is a job file ``$PLANLINEAGE_HOME/jobs/<runId>.json`` (0600 in a 0700 folder:
it holds the raw SQL the compile needs, so it is written atomically, never left half-written,
and deleted once the compile is done).  The compile service
(:mod:`planlineage.lifecycle.compile_service`) takes job files oldest first; :func:`compile_job`
is what it runs for each: compile with the planner it was given, attach the lineage to the run
(or abandon the run: nothing is sent for it), all through :mod:`planlineage.lifecycle.runs`,
the one owner of the ``runs`` table.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, cast

from planlineage import lazylog
from planlineage.lifecycle.compile_queue import QueueFailed, new_compile_job, start
from planlineage.lifecycle.job_files import CompileJob
from planlineage.store.sqlite import Store

if TYPE_CHECKING:
    from planlineage.config import Config
    from planlineage.listener_conf.coexist import SharedRun

#: A job whose compile was started this many times (the service died under it) is abandoned.
MAX_ATTEMPTS = 2
LOG_NAME = "compile-service.log"
LOG_MAX_BYTES = 1_000_000

log = lazylog.getLogger(__name__)  # logging loads only when something is logged


def _env_float(name: str, default: float) -> float:
    from planlineage import deprecated  # old variable names are still read, said once

    try:
        return float(deprecated.environ(name) or default)
    except ValueError:
        return default


def job_timeout() -> float:
    """Seconds one compile may take (``PLANLINEAGE_COMPILE_TIMEOUT``, default 600)."""
    return _env_float("PLANLINEAGE_COMPILE_TIMEOUT", 600.0)


def flush_budget() -> float:
    """Seconds the service spends delivering after a compile (``PLANLINEAGE_COMPILE_FLUSH_SECONDS``)."""
    return _env_float("PLANLINEAGE_COMPILE_FLUSH_SECONDS", 20.0)


def submit_job(
    store: Store,
    settings,
    *,
    app_id: str,
    job_name: str,
    sql: str | None,
    flink_version: str | None = None,
    jars: list[str] | None = None,
    error: str | None = None,
    engine: str = "flink",
    spark_version: str | None = None,
    store_away: Exception | None = None,
    flink_job_id: str | None = None,
    start_time_millis: int | None = None,
) -> str | None:
    """Record a new run of ``app_id`` (ending an open previous run with ABORT) and queue its
    compile; the new run id, or None when lineage is not configured or nothing could be recorded.

    Costs one SQLite transaction, one small file and, when no compile service runs, one ``fork``:
    the compile and the delivery happen in the service.  Never raises for a lineage problem.

    With a shared store that cannot be reached (a restart, a failover) the submission is kept in
    this node's spool (:mod:`.spool`) with its run id and time, and recorded by the next command
    (or the compile service) that reaches the store; ``store_away``: the caller found it
    unreachable already (its error).  A Flink job that coexists with openlineage-flink's listener
    is recorded under the listener's job and, given its JobID and start time (``flink_job_id``,
    ``start_time_millis``: a platform hook that runs once the JobManager took the job) where the
    listener derives its run id from them, under that run id.  A compile that cannot be queued
    (its job file cannot be written) ends the run at once: it is dropped and :class:`QueueFailed`
    says why and what to do, so that the application's run is never left compiling for ever.
    """
    from planlineage import engines
    from planlineage.emitter.run_ids import new_run_id
    from planlineage.errors import StoreError
    from planlineage.lifecycle import runs, spool

    job = new_compile_job(
        app_id=app_id,
        run_id=new_run_id(),  # chosen here: a submission kept in the spool keeps it
        job_name=job_name,
        sql=sql,
        error=error,
        engine=engine,
        flink_version=flink_version,
        jars=jars or [],
        spark_version=spark_version,
    )
    if sql and not error and engines.get(engine).coexists_with_listener:
        coexisting = coexisting_run(settings, sql, flink_version, job_name, flink_job_id, start_time_millis)
        if coexisting is not None:  # the job (and run) openlineage-flink's listener reports it under
            job["job_namespace"], job["job_name"] = coexisting.job_namespace, coexisting.job_name
            job["run_id"] = coexisting.run_id or job["run_id"]
    shared = getattr(store, "shared", False)
    when = runs.utc_now()
    try:
        if store_away is not None:
            raise store_away
        if spool.waiting(store):
            runs.replay_spooled(store)  # what the store missed goes first (order per application)
        namespace = job.get("job_namespace")
        if runs.submit_pending(store, app_id, job["job_name"], settings, job["run_id"], when, namespace) is None:
            return None
        start(store, job)
    except StoreError as away:
        if not shared:
            raise
        spool_submission(store, job, when)
        log.warning(
            "planlineage: lineage submission of %s kept on this node until the store is back (%s)", app_id, away
        )
        return job["run_id"]
    except QueueFailed as problem:
        # Never left COMPILING for ever: the run ends now, without lineage, and the caller says so.
        runs.abandon_lineage(store, app_id, job["run_id"])
        raise QueueFailed(
            f"the compile of {app_id} could not be queued ({problem}): the run is dropped, nothing is sent "
            "for it; make that folder writable (disk space, permissions): the next submission of the "
            "application is reported"
        ) from None
    return job["run_id"]


def coexisting_run(
    settings, sql: str, flink_version: str | None, job_name: str, job_id: str | None = None, started: int | None = None
) -> SharedRun | None:
    """The listener's job (and run, when derivable) when planlineage coexists with it (fail-open:
    None).  Nothing more is loaded for a job that cannot name the listener (the script does not,
    and ``flink-conf`` does not add it), so a usual submission costs what it did."""
    try:
        config = settings.config()
        chosen, injects = config.flink_runs, config.flink_listener
        if chosen == "own" or (chosen == "auto" and not injects and "OpenLineageJobStatusChangedListener" not in sql):
            return None
        from planlineage.listener_conf import coexist

        conf = coexist.job_conf(sql, config, flink_version)
        return coexist.coexisting_run(conf, config, job_name, job_id, started)
    except Exception as problem:  # a lineage gap never fails a submission: planlineage's own job
        log.warning("planlineage: the OpenLineage listener's job of %s is not known (%s)", job_name, problem)
        return None


def spool_submission(store: Store, job: CompileJob, when: str) -> None:
    """Keep a submission the shared store could not take, for the next command that reaches it."""
    from planlineage.lifecycle import service_start, spool

    spool.put_submission(store, job, when)
    service_start.ensure_running(store)  # it records the spool as soon as the store is back


# -- one compile --------------------------------------------------------------------------------


def setup_logging(store: Store) -> None:
    """Problems of background work go to ``compile-service.log`` (0600, rotated at 1 MB), redacted."""
    import logging

    from planlineage.registry.secrets import RedactingFilter

    path = store.path.parent / LOG_NAME
    try:
        if path.exists() and path.stat().st_size > LOG_MAX_BYTES:
            path.replace(path.with_name(LOG_NAME + ".1"))
        fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o600)
        handler: logging.Handler = logging.StreamHandler(os.fdopen(fd, "a", encoding="utf-8"))
    except OSError:
        handler = logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s [%(process)d] %(message)s"))
    handler.addFilter(RedactingFilter())  # nothing secret reaches the log, whoever logs
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    if isinstance(handler, logging.StreamHandler):
        # The service runs detached, its standard error is nowhere: what is written there (the
        # `console` transport's events, a thread's traceback) goes to the log instead, redacted.
        sys.stderr = _RedactedLog(handler.stream)


class _RedactedLog:
    """A text stream that writes every line redacted to the service's log (``sys.stderr``)."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self._partial = ""

    def write(self, text: str) -> int:
        from planlineage.registry.secrets import redact_text

        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        if lines:
            self.stream.write("".join(redact_text(line) + "\n" for line in lines))
            self.stream.flush()
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return False


def _identity(config: Config):
    from planlineage.registry import load_config

    return load_config(config.rules, profile=config.profile, metalake=config.metalake)


def compile_job(store: Store, job: CompileJob, planner=None, timeout: float | None = None) -> None:
    """Compile one job (with ``planner``, else however the pipeline finds one) and attach its
    lineage, or abandon the run. Never raises."""
    from planlineage import engines, script_size
    from planlineage import pipeline as extraction
    from planlineage.lifecycle import runs, sql_facet
    from planlineage.settings import Settings

    try:
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
                # Over the cap (a job the watcher queued, or a cap lowered since): not redacted,
                # not compiled, whatever its size: abandoned at once with the reason.
                config = settings.config()
                limit = config.limits.script_max_bytes
                script_size.check_size(sql, limit)
                sql_facet.set_redacted_sql(
                    store, app_id, run_id, sql_facet.redacted(sql, job.get("engine")), config.limits.sql_max_bytes
                )
                engine = engines.get(job.get("engine"))
                lineage = extraction.extract(
                    sql,
                    engine=engine,
                    version=cast("str | None", job.get(engine.version_field)),  # flink_version / spark_version
                    jars=(job.get("jars") or []) if engine.takes_jars else [],
                    conf=job.get("spark_conf") or {},
                    identity=_identity(config),
                    # the pool's place is the compiler of an engine it pools (Flink's planners)
                    planner=planner if engine.pooled_compiler else None,
                    timeout=timeout or job_timeout(),
                    columns=True,  # events carry the columnLineage facet (docs/spark-sql.md: Spark's too)
                    max_bytes=limit,
                )
            except Exception as error:
                # ExtractError / ProvisionError / PlannerError / ConfigError messages are redacted
                reason = f"{type(error).__name__}: {error}"
            else:
                sql_facet.cap_statements(lineage, config.limits.sql_max_bytes)
                if not runs.attach_lineage(store, app_id, run_id, lineage):
                    log.warning("planlineage: lineage of %s not attached (run superseded or no datasets)", app_id)
                return
        runs.abandon_lineage(store, app_id, run_id, reason)
    except Exception as error:  # fail-open: background work has no one to report to but its log
        log.warning("planlineage: lineage job failed: %s", type(error).__name__)
