"""Queue the compile of a recorded run: the node's job file, or with a shared store a row any
node's compile service may claim, and a compile service running to take it.

Used by :mod:`.runner` at submission and by :mod:`.runs` when it replays a submission the store
missed; it needs neither of them.
"""

from __future__ import annotations

import time
from typing import Any

from planlineage.lifecycle.job_files import jobs_dir, write_job
from planlineage.store.sqlite import Store


class QueueFailed(OSError):
    """The compile of a recorded run could not be queued (its job file cannot be written)."""


def start(store: Store, job: dict[str, Any]) -> None:
    """Queue the compile of a recorded run: write its job file, make sure the service runs.

    ``job``: ``app_id``, ``run_id`` (from :func:`runs.record_pending_submission`), ``job_name``,
    ``flink_version`` (None: the default), ``jars`` (absolute paths), ``sql`` (raw), ``error``
    (a reason not to compile: the run is then abandoned with it), ``engine`` (``flink`` or
    ``spark``, with ``spark_version`` and ``spark_conf``: the conf keys that name tables).
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
        write_job(path, dict(job, attempts=0, created=time.time()))
    except OSError as problem:  # a full disk, a read-only home, a file where the folder should be
        raise QueueFailed(f"{problem.strerror or type(problem).__name__}: {path.parent}") from None
    service_start.ensure_running(store)
