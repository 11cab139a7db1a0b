"""Dinky's job states (``dinky_job_instance.status``, ``org.dinky.data.enums.JobStatus`` strings)
and what the lifecycle's ``state`` function is told.

INITIALIZING and CREATED are the run's START (sent when its job-instance row appears); RUNNING,
FINISHED, FAILED and CANCELED are told as they are (RUNNING, COMPLETE, FAIL, ABORT).  UNKNOWN and
RECONNECTING are Dinky losing sight of the job, often while it runs on (a finished batch or
per-job job, a manual stop, a console restart): like StreamPark's LOST they wait out the grace
period, and then end the run with ABORT, never FAIL (the job's verdict is not known).  The other
states (FAILING, CANCELLING, RESTARTING, SUSPENDED, RECONCILING) change nothing.
"""

from __future__ import annotations

#: In the enum's order: a status is kept in the watcher's ledger as its index here.
STATUSES = (
    "INITIALIZING", "CREATED", "RUNNING", "FAILING", "FAILED", "CANCELLING", "CANCELED", "FINISHED",
    "RESTARTING", "SUSPENDED", "RECONCILING", "RECONNECTING", "UNKNOWN",
)  # fmt: skip
#: ``JobStatus.isDone``: a job found in one of these when the watcher first starts is not adopted.
DONE = frozenset({"FAILED", "CANCELED", "FINISHED", "UNKNOWN"})
#: States that wait out ``--lost-grace`` before they end the run.
ADRIFT = frozenset({"UNKNOWN", "RECONNECTING"})
#: What the lifecycle is told once an adrift state lasted the grace period (its ABORT).
ADRIFT_REPORT = "CANCELED"
#: The one dialect whose tasks are reported; FlinkSqlEnv tasks are the environments they include.
FLINK_SQL = "flinksql"
FLINK_SQL_ENV = "flinksqlenv"


def code(status: str | None) -> int | None:
    """The ledger's number for a status (None: a status this version does not know)."""
    name = (status or "").strip().upper()
    return STATUSES.index(name) if name in STATUSES else None


def name(value: int | None) -> str | None:
    return STATUSES[value] if value is not None and 0 <= value < len(STATUSES) else None
