"""One past run as a platform recorded it: what the replay needs, and nothing of the platform's rows.

Standard library only: a platform's reader builds these while it reads its database.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


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
    # Flink options the platform gives the job besides its script (StreamPark's options and
    # dynamic properties), as ``(key, value)``: what may name openlineage-flink's listener.
    job_conf: tuple[tuple[str, str], ...] = ()
