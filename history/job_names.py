"""The OpenLineage job a platform's job is reported as: one rule for the live watchers and the
history replay, so that a replayed run and a live one of the same job meet on one job.

A StreamPark app and a Dinky task may carry the same name; under one namespace they would be one
OpenLineage job, mixing their runs and datasets.  They are kept apart by the job's *name*
(``streampark.<app name>``, ``dinky.<task name>``), never by its namespace: with Gravitino's
authorization on, ``job.namespace`` is read as the metalake, so the namespace stays
``lineage.namespace`` (or the metalake) for every platform.  ``lineage.platform-job-names=false``
keeps the bare platform names (an install that watches one platform and wants its job nodes as
they were).  A job that coexists with openlineage-flink's listener is not named here: it keeps
the listener's namespace and name.

Standard library only: the watchers import it on every poll.
"""

from __future__ import annotations

PLATFORMS = ("streampark", "dinky")


def platform_job_name(platform: str, name: str, settings) -> str:
    """``<platform>.<name>`` (``platform``: ``streampark`` or ``dinky``), or ``name`` alone when
    ``lineage.platform-job-names`` is off."""
    if platform not in PLATFORMS:
        raise ValueError(f"unknown platform {platform!r}: one of {', '.join(PLATFORMS)}")
    return f"{platform}.{name}" if settings.config().platform_job_names else name
