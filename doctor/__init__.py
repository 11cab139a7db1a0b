"""The lineage doctor: finds datasets that name one physical table differently ("splits").

    from planlineage.doctor import diagnose, UnreadableInput
    report = diagnose(["gravitino_lineage.log"], state=True, rules=None)
    report.splits       # list[Split]: datasets (namespace, name, producers, jobs), reason, fix
    report.event_count  # the events read (streamed: they are not kept; see diagnose's on_event)
    report.to_json()    # {"splits": [{"datasets": [...], "reason": "...", "fix": "..."}]}

Modules: sources (event files and the lifecycle store, read-only), splits (grouping, on the
registry's canonicalisation), explain (reasons and fixes), diagnose (the three together).

``doctor --jobmanager URL``, the blind spots: jobmanager (the jobs a JobManager's REST API
lists), reported (what producers reported, as runs: event files and the store), blind_spots
(the jobs matched against them, by job id, run id, then name and start time; the rest listed).
"""

from planlineage.errors import UnreadableInput

from .diagnose import Report, diagnose

__all__ = ["diagnose", "Report", "UnreadableInput"]
