"""Queue the compile of a recorded run: the node's job file, or with a shared store a row any
node's compile service may claim, and a compile service running to take it.

Used by :mod:`.runner` at submission and by :mod:`.runs` when it replays a submission the store
missed; it needs neither of them.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping

from planlineage.lifecycle.job_files import CompileJob, jobs_dir, write_job
from planlineage.store.sqlite import Store


def new_compile_job(
    *,
    app_id: str,
    run_id: str,
    job_name: str,
    sql: str | None,
    error: str | None = None,
    engine: str = "flink",
    flink_version: str | None = None,
    jars: Iterable[str] = (),
    spark_version: str | None = None,
    spark_conf: Mapping[str, str] | None = None,
    job_namespace: str | None = None,
) -> CompileJob:
    """The one way a compile job is made (``submit`` and the watchers queue the same record);
    ``job_namespace``: the job's when not ``lineage.namespace`` (coexisting with openlineage-flink)."""
    job = CompileJob(
        app_id=app_id,
        run_id=run_id,
        job_name=job_name,
        sql=sql,
        error=error,
        engine=engine,
        flink_version=flink_version,
        jars=list(jars),
        spark_version=spark_version,
    )
    if spark_conf:
        job["spark_conf"] = dict(spark_conf)
    if job_namespace:
        job["job_namespace"] = job_namespace
    return job


class QueueFailed(OSError):
    """The compile of a recorded run could not be queued (its job file cannot be written)."""


def start(store: Store, job: CompileJob) -> None:
    """Queue the compile of a recorded run: write its job file, make sure the service runs.

    ``job``: made by :func:`new_compile_job`, its run id from :func:`runs.record_pending_submission`.
    """
    from planlineage.home import make_private_dir
    from planlineage.lifecycle import service_start

    if getattr(store, "shared", False):
        # Nodes sharing a store share its compile jobs: a row any node's service may claim.
        from planlineage.lifecycle import compile_jobs

        compile_jobs.put(store, job)
        service_start.ensure_running(store)
        return
    path = jobs_dir(store) / f"{job['run_id']}.json"
    try:
        make_private_dir(path.parent)
        queued: CompileJob = {**job, "attempts": 0, "created": time.time()}
        write_job(path, queued)
    except OSError as problem:  # a full disk, a read-only home, a file where the folder should be
        raise QueueFailed(f"{problem.strerror or type(problem).__name__}: {path.parent}") from None
    service_start.ensure_running(store)
