"""Compile jobs kept in a shared store, claimed by leases, so any node can finish any compile.

With the SQLite file a compile's liveness is a local ``flock`` (:mod:`planlineage.lifecycle.runner`);
nodes sharing a PostgreSQL store cannot see each other's locks, so there the job itself lives in
the table ``compile_jobs`` and the compile service that claimed it holds a lease on it:

* ``submit`` puts the job unclaimed and makes sure its node's compile service runs; any node's
  service claims it (:func:`claim_next`: ``FOR UPDATE SKIP LOCKED``, so two services never take
  the same job), renews its leases every third of their length (:func:`renew_all`) and deletes
  the job once the run has its lineage (or is dropped).
* A node whose service dies (killed, machine gone) stops renewing; once the lease has run out any
  node's next ``state``/``flush`` sees it (:func:`expired`), starts its own service if none runs,
  and that service claims the job.
* After :data:`MAX_ATTEMPTS` claims the run is dropped, as a local job whose compile service died twice.

The job row holds the raw SQL the compile needs (like the local job file, which is 0600): it is
protected like the settings in the same database (the token is there too) and deleted when done.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from planlineage.clock import utc_now
from planlineage.lifecycle.job_files import CompileJob

MAX_ATTEMPTS = 2


def lease_seconds() -> float:
    try:
        return max(1.0, float(os.environ.get("PLANLINEAGE_COMPILE_LEASE", "") or 30.0))
    except ValueError:
        return 30.0


def put(store, job: Mapping[str, Any]) -> None:
    """Queue ``job`` for any node's compile service to claim."""

    def insert(conn) -> None:
        conn.execute(
            "INSERT INTO compile_jobs (run_id, app_id, job, attempts, claimed_by, claim_until, created) "
            "VALUES (?, ?, ?, 0, NULL, NULL, ?) ON CONFLICT (run_id) DO NOTHING",
            (job["run_id"], job["app_id"], json.dumps(job), utc_now()),
        )

    store.write(insert, exclusive=False)


def claim_next(store, holder: str, lease: float) -> tuple[CompileJob, int] | None:
    """Take one job whose lease ran out: ``(job, attempt number)``, or None."""

    def claim(conn) -> tuple[CompileJob, int] | None:
        now = conn.clock()
        row = conn.execute(
            "SELECT run_id, job, attempts FROM compile_jobs WHERE claim_until IS NULL OR claim_until < ? "
            f"ORDER BY created LIMIT 1{conn.skip_locked}",
            (now,),
        ).fetchone()
        if row is None:
            return None
        conn.execute(
            "UPDATE compile_jobs SET claimed_by = ?, claim_until = ?, attempts = attempts + 1 WHERE run_id = ?",
            (holder, now + lease, row["run_id"]),
        )
        return json.loads(row["job"]), int(row["attempts"]) + 1

    return store.write(claim, exclusive=False)


def renew_all(store, holder: str, lease: float) -> int:
    """Extend every lease ``holder`` has (the jobs its service compiles or will compile next)."""

    def extend(conn) -> int:
        return conn.execute(
            "UPDATE compile_jobs SET claim_until = ? WHERE claimed_by = ?", (conn.clock() + lease, holder)
        ).rowcount

    return store.write(extend, exclusive=False)


def finish(store, run_id: str) -> None:
    store.write(lambda c: c.execute("DELETE FROM compile_jobs WHERE run_id = ?", (run_id,)), exclusive=False)


def expired(store) -> int:
    """How many jobs wait for a node to take them over."""

    def count(conn) -> int:
        return conn.execute(
            "SELECT COUNT(*) FROM compile_jobs WHERE claim_until IS NULL OR claim_until < ?", (conn.clock(),)
        ).fetchone()[0]

    return store.read(count, default=0)
