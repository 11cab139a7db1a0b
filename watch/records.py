"""What a platform adapter hands to the watcher core: typed records, nothing of the platform's rows.

Standard library only, as :mod:`planlineage.history.records` is for a replay: a platform's poll
(StreamPark's apps, Dinky's job instances, the SQL Gateway's JobManager jobs) builds these while
it reads, and :mod:`planlineage.watch.transitions` turns them into the lifecycle's calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class JobSeen:
    """A job a poll saw in a state, to be told to the job's current run.

    ``state`` is named as the lifecycle understands it (:data:`planlineage.lifecycle.runs.STATE_EVENTS`:
    ``RUNNING``, ``FINISHED``, ``FAILED``, ``CANCELED``, ``LOST`` …): the adapter maps its platform's
    own states (a Spark KILLED after a stop is ``CANCELED``, Dinky's UNKNOWN past its grace is
    ``CANCELED``) before handing the record over; a state not listed there queues no event.
    """

    key: str  # the job's application key in the lifecycle's runs (flink:7, spark:3, dinky:12)
    name: str  # the job's name as the platform shows it (said in the watcher's lines)
    state: str
    job_id: str = ""  # the Flink JobID (or Spark application id) the platform records, "" if none
    started: datetime | None = None  # when the job started, timezone-aware, if the platform says
    error: str | None = None  # a failure's message as the platform stored it (FAILED only)
    # When the job entered ``state``, as the event's time (ISO 8601 UTC), where the platform keeps
    # it (the JobManager's state timestamps); None: the time it was seen.
    at: str | None = None
