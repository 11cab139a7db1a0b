"""One past run as a platform recorded it: what the replay needs, and nothing of the platform's rows.

Standard library only: a platform's reader builds these while it reads its database.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

#: The namespace of the run ids made from a platform's own ids (a fixed, random UUID: changing it
#: would make every past run new again).
RUN_ID_NAMESPACE = uuid.UUID("4f0b7c1e-2d6a-5b8e-9c3f-7a1d2e5b6c80")


def run_id_of(run_key: str) -> str:
    """The OpenLineage run id of the run a platform recorded as ``run_key`` (a UUIDv5 of it):
    the live watcher and the history replay compute the same id, so neither sends a run twice."""
    return str(uuid.uuid5(RUN_ID_NAMESPACE, run_key))


@dataclass(frozen=True)
class PastRun:
    """A run that started (and maybe ended) before the watcher saw it.

    ``run_key`` is made of the platform's own ids (``streampark:app=12:log=345``,
    ``dinky:instance=77``): the run id derives from it deterministically, so a second replay, and
    a live watcher that meets the same run, send nothing twice.
    """

    platform: str  # "streampark" | "dinky"
    run_key: str
    app_id: str  # the lifecycle's application key (as the live watcher records it)
    job_name: str
    sql: str  # the script that ran, the platform's own syntax already resolved
    flink_version: str | None
    started_at: datetime  # timezone-aware
    ended_at: datetime | None  # None: still running (the replay sends START and RUNNING)
    end_event: str | None  # "COMPLETE" | "FAIL" | "ABORT" | None while running
    error: str | None = None  # a FAIL's message, as the platform stored it (never a secret)
    jars: tuple[str, ...] = ()  # readable jars the job loaded (UDFs, connectors)

    @property
    def run_id(self) -> str:
        return run_id_of(self.run_key)
