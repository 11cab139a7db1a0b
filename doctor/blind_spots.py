"""The blind spots: the jobs a Flink JobManager runs that no producer reported lineage for
(``planlineage doctor --jobmanager URL``).

Each job the JobManager lists (running, or ended within ``finished_within``) is matched against
the reported runs (:mod:`planlineage.doctor.reported`), strongest evidence first:

1. **by job id**: a run that names the job's Flink JobID (openlineage-flink's ``flink_job`` run
   facet, a platform watcher's snapshot, the SQL Gateway proxy's record);
2. **by run id**: a run whose id is the one openlineage-flink's detached listener (and planlineage
   coexisting with it) derives from the JobID and start time;
3. **by name and start time**: a run of a job of the same name (``pipeline.name``; planlineage's
   platform prefix ``streampark.``/``dinky.`` and a STATEMENT SET child's parent count) that
   started within ``window`` of the job. Each run is given to one job, the nearest first, so a
   job submitted twice under one name with lineage once is listed once.

The window (10 minutes by default) is what lies between a run's first event and the JobManager's
``start-time`` for the same job: seconds for openlineage-flink's listener (it reports from the
JobManager), the client's compile for the SQL Gateway and ``planlineage submit`` (it records the
run before the job is handed over), and up to a few minutes for application mode on YARN or
Kubernetes (a cluster is deployed first) and for a watcher polling its platform. A run matched
whose lineage planlineage does not have (dropped, or still compiling) is listed with that reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from .jobmanager import FlinkJob
from .reported import Reported, ReportedRun

DEFAULT_WINDOW_SECONDS = 600
#: Flink's own name for a SQL job without pipeline.name: nothing ties it to a producer's job name.
_DEFAULT_NAME_PREFIXES = ("insert-into_", "collect", "Flink Streaming Job", "Flink Batch Job")


@dataclass
class Match:
    job: FlinkJob
    by: str  # "job id", "run id", "name and start time"
    run: ReportedRun


@dataclass
class BlindSpot:
    job: FlinkJob
    why: str


@dataclass
class Findings:
    jobmanager: str  # as it may be shown
    jobs_listed: int
    checked: list[FlinkJob] = field(default_factory=list)
    matched: list[Match] = field(default_factory=list)
    blind_spots: list[BlindSpot] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    window_seconds: int = DEFAULT_WINDOW_SECONDS
    finished_within: int | None = None

    def to_json(self) -> dict:
        return {
            "jobmanager": self.jobmanager,
            "jobs_checked": len(self.checked),
            "window_seconds": self.window_seconds,
            "finished_within_seconds": self.finished_within,
            "blind_spots": [{**_job_json(b.job), "why": b.why} for b in self.blind_spots],
            "matched": [
                {**_job_json(m.job), "by": m.by, "run_id": m.run.run_id, "reported_in": m.run.source}
                for m in self.matched
            ],
            "sources": self.sources,
        }


def _job_json(job: FlinkJob) -> dict:
    return {
        "job_id": job.job_id,
        "name": job.name,
        "state": job.state,
        "started": format_millis(job.start_ms),
        "ended": format_millis(job.end_ms) if job.ended else None,
    }


def format_millis(ms: int | None) -> str | None:
    if ms is None or ms <= 0:
        return None
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def to_check(jobs: Sequence[FlinkJob], finished_within: int | None, now_ms: int) -> list[FlinkJob]:
    """The jobs not ended, and the ones that ended within ``finished_within`` seconds."""
    return [
        job
        for job in jobs
        if not job.ended or (finished_within is not None and job.end_ms >= now_ms - finished_within * 1000)
    ]


def flink_names(reported: str) -> set[str]:
    """The Flink job names a reported job name stands for: itself and, for planlineage's
    platform-prefixed name (``streampark.<name>``), the name without its prefix."""
    from planlineage.history.job_names import PLATFORMS

    platform, dot, rest = reported.partition(".")
    return {reported, rest} if dot and rest and platform in PLATFORMS else {reported}


def _by_name(runs: Sequence[ReportedRun]) -> dict[str, list[ReportedRun]]:
    """The runs that have a start time, by each Flink job name they may stand for (looked up once per job)."""
    index: dict[str, list[ReportedRun]] = {}
    for run in runs:
        if run.started_ms is None:
            continue
        for name in {flink for reported in run.job_names for flink in flink_names(reported)}:
            index.setdefault(name, []).append(run)
    return index


def _by_id(job: FlinkJob, runs: Sequence[ReportedRun]) -> Match | None:
    for run in runs:
        if job.job_id in run.job_ids:
            return Match(job, "job id", run)
    derived = _derived_run_id(job)
    if derived:
        for run in runs:
            if derived in run.run_ids:
                return Match(job, "run id", run)
    return None


def _derived_run_id(job: FlinkJob) -> str | None:
    from planlineage.emitter.run_ids import listener_run_id

    if job.start_ms <= 0:
        return None
    try:
        return listener_run_id(job.job_id, job.start_ms)
    except ValueError:  # not a JobID Flink writes: nothing derives from it
        return None


def find(
    jobs: Sequence[FlinkJob],
    reported: Reported,
    *,
    jobmanager: str,
    window_seconds: int = DEFAULT_WINDOW_SECONDS,
    finished_within: int | None = None,
    now_ms: int | None = None,
) -> Findings:
    now_ms = now_ms if now_ms is not None else int(datetime.now(UTC).timestamp() * 1000)
    checked = to_check(jobs, finished_within, now_ms)
    findings = Findings(jobmanager, len(jobs), checked, sources=list(reported.sources), window_seconds=window_seconds)
    findings.finished_within = finished_within
    matches: dict[str, Match] = {}
    claimed: set[int] = set()
    for job in checked:
        found = _by_id(job, reported.runs)
        if found:
            matches[job.job_id] = found
            claimed.add(id(found.run))
    window_ms = window_seconds * 1000
    named = _by_name(reported.runs)
    pairs = []
    for index, job in enumerate(checked):
        if job.job_id in matches or job.start_ms <= 0 or not job.name:
            continue
        for run in named.get(job.name, ()):
            delta = abs((run.started_ms or 0) - job.start_ms)
            if id(run) not in claimed and delta <= window_ms:
                pairs.append((delta, index, run))
    for _, index, run in sorted(pairs, key=lambda p: (p[0], p[1])):
        job = checked[index]
        if job.job_id in matches or id(run) in claimed:
            continue
        matches[job.job_id] = Match(job, "name and start time", run)
        claimed.add(id(run))
    for job in checked:
        match = matches.get(job.job_id)
        if match is not None and match.run.lineage:
            findings.matched.append(match)
        elif match is not None:
            findings.blind_spots.append(BlindSpot(job, match.run.no_lineage_why))
        elif job.job_id in reported.gateway_jobs:
            findings.blind_spots.append(
                BlindSpot(job, f"{reported.gateway_jobs[job.job_id]}, but no run of it is recorded")
            )
        else:
            why = _why_unmatched(job, named.get(job.name, []), claimed, window_ms)
            findings.blind_spots.append(BlindSpot(job, why))
    return findings


def _why_unmatched(job: FlinkJob, same_name: Sequence[ReportedRun], claimed: set[int], window_ms: int) -> str:
    """Why nothing matched: ``same_name``, the reported runs of the job's name (none within the window)."""
    minutes = f"{window_ms / 60000:g} min"
    why = "nothing reported names its job id"
    if job.start_ms <= 0:
        return why + " (and the JobManager gives no start time to match a name on)"
    if not same_name:
        why += f", and no run of a job named {job.name!r} was reported"
    else:
        free = [r for r in same_name if id(r) not in claimed]
        if not free:
            why += f"; every reported run named {job.name!r} near it belongs to another job"
        else:
            nearest = min(free, key=lambda r: abs((r.started_ms or 0) - job.start_ms))
            offset = ((nearest.started_ms or 0) - job.start_ms) / 60000
            side = "before" if offset < 0 else "after"
            why += (
                f"; the nearest run named {job.name!r} started {abs(offset):.0f} min {side} it "
                f"(beyond the {minutes} window)"
            )
    if job.name.startswith(_DEFAULT_NAME_PREFIXES):
        why += "; its name is Flink's default: set pipeline.name so that it can be told apart"
    return why
