"""Runs shared with openlineage-flink's listener: the job and run a Flink 2.x job's listener
reports, so that planlineage's events for that job land on the same job and the same run.

When a job's configuration names openlineage-flink's job-status-changed listener
(``execution.job-status-changed-listeners`` holds its factory), both producers report the job.
In ``coexist`` mode planlineage uses the listener's job identity, ported from
``OpenLineageJobStatusChangedListener.loadJobId`` (openlineage-flink 1.53.0):

* namespace: ``openlineage.job.namespace``, else ``flink-jobs``;
* name: ``openlineage.job.name``, else the Flink job's name (``pipeline.name``, which StreamPark
  sets to the application's job name; the platform's job name when the configuration has none);

and, where the listener derives its run id from the job
(``openlineage.flink.enableDetachedJobTracking``: the detached listener, whose client-side and
JobManager-side instances must agree on it), the same run id:
:func:`planlineage.emitter.run_ids.listener_run_id` of the Flink JobID and the job's start time.
The default listener draws a random run id; planlineage cannot know it, so only the job is shared.

``own`` mode keeps planlineage's own job (``lineage.namespace``, the platform's job name) and run
id.  The setting ``lineage.flink-runs`` chooses: ``auto`` (the default) is ``coexist`` when the
job's configuration names the listener, ``own`` otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from planlineage.config import FLINK_RUNS_MODES
from planlineage.emitter.run_ids import listener_run_id
from planlineage.listener_conf import FLINK_LISTENER_FACTORY, FLINK_LISTENER_OPTION

if TYPE_CHECKING:
    from planlineage.config import Config

MODES = FLINK_RUNS_MODES
#: ``OpenLineageJobStatusChangedListener.DEFAULT_NAMESPACE``
LISTENER_DEFAULT_NAMESPACE = "flink-jobs"
#: The keys FlinkConfigParser reads as ``enableDetachedJobTracking`` (the first is an alias).
DETACHED_KEYS = ("openlineage.flink.enableDetachedJobTracking", "openlineage.enableDetachedJobTracking")


def listener_configured(conf: Mapping[str, str]) -> bool:
    """True when the job's Flink configuration starts openlineage-flink's listener (Flink reads the
    option as a list: ``;`` separates its entries; a YAML list arrives as ``[a, b]``)."""
    listed = str(conf.get(FLINK_LISTENER_OPTION) or "").strip().strip("[]")
    return FLINK_LISTENER_FACTORY in {entry.strip().strip("'\"") for entry in listed.replace(",", ";").split(";")}


def mode(setting: str | None, conf: Mapping[str, str]) -> str:
    """``coexist`` or ``own`` for a job with this configuration; ``setting`` is ``lineage.flink-runs``."""
    chosen = (setting or "auto").strip().lower()
    if chosen not in MODES:
        raise ValueError(f"lineage.flink-runs must be one of {', '.join(MODES)}, not {setting!r}")
    if chosen == "auto":
        return "coexist" if listener_configured(conf) else "own"
    return chosen


def derives_run_id(conf: Mapping[str, str]) -> bool:
    """True when the listener derives its run id from the job (the detached listener); Jackson
    reads the string ``true`` in any of its spellings as true, the alias key first."""
    for key in DETACHED_KEYS:
        value = str(conf.get(key) or "").strip()
        if value:
            return value.lower() == "true"
    return False


@dataclass(frozen=True)
class SharedRun:
    """The job and run both producers report: ``run_id`` None when the listener's is random."""

    job_namespace: str
    job_name: str
    run_id: str | None


def shared_run(
    conf: Mapping[str, str],
    platform_job_name: str,
    flink_job_id: str | None = None,
    start_time_millis: int | None = None,
) -> SharedRun:
    """The listener's job (namespace, name) for a job with this configuration and, when it derives
    its run id and the Flink JobID and start time are known, its run id."""

    def set_(key: str) -> str | None:  # FlinkConfigParser skips a blank value; others are kept as set
        value = conf.get(key)
        return str(value) if value is not None and str(value).strip() else None

    namespace = set_("openlineage.job.namespace") or LISTENER_DEFAULT_NAMESPACE
    name = set_("openlineage.job.name") or set_("pipeline.name") or platform_job_name
    run_id = None
    if derives_run_id(conf) and flink_job_id and start_time_millis:
        run_id = listener_run_id(flink_job_id, start_time_millis)
    return SharedRun(namespace, name, run_id)


def job_conf(
    script_text: str | None,
    config: Config,
    flink_version: str | None,
    platform_conf: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The job's configuration as planlineage sees it, the later source winning: the listener
    entries ``flink-conf`` adds to the cluster's configuration (``lineage.flink-listener`` on,
    Flink 2.0 or later), what the platform passes the job (``platform_conf``: StreamPark's
    options and dynamic properties), then the script's ``SET`` statements."""
    from planlineage import script
    from planlineage.listener_conf import flink_entries

    conf: dict[str, str] = {}
    for statement in script.split(script_text or ""):
        if statement.kind is script.Kind.SET and statement.set_pair:
            conf[statement.set_pair[0]] = statement.set_pair[1]
    given = {**(platform_conf or {}), **conf}
    injected = dict(flink_entries(config, flink_version, given, lambda _: None))
    return {**injected, **given}  # a key the job sets itself is never changed by flink-conf


def coexisting_run(
    conf: Mapping[str, str],
    config: Config,
    job_name: str,
    flink_job_id: str | None = None,
    start_time_millis: int | None = None,
) -> SharedRun | None:
    """The listener's job and run for a job with this configuration (:func:`job_conf`) when
    planlineage coexists with the listener (``lineage.flink-runs``), or None (``own``)."""
    if mode(config.flink_runs, conf) != "coexist":
        return None
    return shared_run(conf, job_name, flink_job_id, start_time_millis)
