"""``planlineage watch --dinky-db URL --check``: connects with the given account and prints the
schema found, the tasks and which are reported (and why not the others), the Flink version each
reported task compiles with, the grants the account lacks (with the statements to run) and
whether planlineage's lineage address is set.  Nothing is written.  ``ok`` is False (exit 2)
with the problems listed otherwise.
"""

from __future__ import annotations

from planlineage.dinky import reads
from planlineage.dinky.schema import REQUIRED, detect
from planlineage.dinky.watcher import Options, Watcher
from planlineage.settings import Settings
from planlineage.watch.check import Report, opened, say_grants, say_lineage
from planlineage.watch.url import Target


def check(target: Target, settings: Settings, options: Options) -> Report:
    report = Report()
    say = report.lines.append
    found = opened(target, detect, report)
    if found is None:
        return report
    source, schema = found
    try:
        missing = schema.missing()
        say_grants(report, target, missing, schema.recommended(), "clusters' Flink versions, global variables")
        if any(t in missing for t in REQUIRED[:2]):
            return report
        watcher = Watcher(target, settings.store, settings, options, say=lambda _line: None)
        watcher.schema, watcher.source = schema, source  # this connection: nothing else opened
        tasks = list(reads.tasks(source, schema).values())
        chosen = [t for t in tasks if watcher.excluded(t) is None]
        say(f"tasks: {len(tasks)} ({sum(1 for t in tasks if t.dialect.lower() == 'flinksql')} FlinkSql)")
        say(f"reported: {len(chosen)}" + (": " + ", ".join(f"{t.key} {t.name}" for t in chosen) if chosen else ""))
        for task in chosen:
            version = reads.cluster_version(source, schema, task.cluster_id) or options.flink_version
            said = f"Flink {version}" if version else "no Flink version recorded: planlineage's default"
            say(f"  {task.key} {task.name}: {said}")
        for task in tasks:
            reason = watcher.excluded(task)
            if reason is not None:
                say(f"  not reported: {task.key} {task.name}: {reason}")
    finally:
        source.close()
    say_lineage(settings, report)
    return report
