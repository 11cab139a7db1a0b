"""``planlineage watch --check``: what a new user runs first.

Connects with the given account, prints the detected schema generation, the SQL apps and which of
them would be reported (and why not the others), whether StreamPark reports lineage itself, the
grants the account lacks (with the statements to run), whether planlineage's own lineage address
is set and the workspace readable.  Nothing is written anywhere.  Exit 0 when ``watch`` can run,
2 with the problems listed otherwise.
"""

from __future__ import annotations

from pathlib import Path

from planlineage.errors import SourceError
from planlineage.settings import Settings
from planlineage.streampark import reads
from planlineage.streampark.schema import Schema, column_problem, detect
from planlineage.streampark.states import FLINK, SQL_JOB_TYPE
from planlineage.streampark.watcher import Options, Watcher
from planlineage.watch.check import Report, grant_statements, opened, say_grants, say_lineage
from planlineage.watch.connection import Source
from planlineage.watch.url import Target


def _recommended(schema: Schema) -> list[str]:
    tables = ["t_setting"]
    if schema.generation != "2.1.x":
        tables.append("t_resource")
    return [t for t in tables if not schema.has(t)]


def check(target: Target, settings: Settings, options: Options) -> Report:
    report = Report()
    say = report.lines.append
    found = opened(target, detect, report)
    if found is None:
        return report
    source, schema = found
    try:
        columns = column_problem(schema)
        if columns is not None:
            report.problems.append(f"{columns}; until then {', '.join(schema.broken)} read as absent")
        missing, recommended = schema.missing(), _recommended(schema)
        say_grants(report, target, missing, recommended, "StreamPark's own lineage setting, team resources")
        spark_hidden = schema.unreadable_spark_tables(target.dialect)
        if spark_hidden:
            exist = "exist" if target.dialect == "postgresql" else "are in StreamPark 2.2+'s MySQL schema"
            say(
                f"Spark grants missing: {', '.join(spark_hidden)} {exist} but the account cannot read them, "
                "so no Spark SQL app is seen; to report Spark SQL apps run:"
            )
            report.lines.extend(f"  {s}" for s in grant_statements(target, spark_hidden))
        if schema.log_readable:
            denied = source.probe(f"SELECT id FROM {schema.log_table} WHERE 1 = 0")
            if denied:
                report.problems.append(f"the operation log {schema.log_table} cannot be read: {denied}")
        if "t_flink_app" in missing:
            return report
        watcher = Watcher(target, settings.store, settings, options, say=lambda _line: None)
        watcher.schema = schema
        watcher.source = source  # this connection: the watcher's own is never opened here
        watcher.load_spark_envs(schema)  # the envs' spark-defaults say which Spark apps the listener covers
        watcher.streampark_reports = bool(
            (reads.settings(source, schema).get("lineage.gravitino.address") or "").strip()
        )
        apps = reads.apps(source, schema)
        sql_apps = [a for a in apps if a.job_type == SQL_JOB_TYPE]
        flink = sum(1 for a in sql_apps if a.engine == FLINK)
        say(f"SQL apps: {len(sql_apps)} ({flink} Flink SQL, {len(sql_apps) - flink} Spark SQL) of {len(apps)} apps")
        if schema.lineage_enable:
            say("opt-in: StreamPark's lineage_enable column decides (--apps can only narrow it)")
        else:
            say(f"opt-in: --apps {options.apps} (this StreamPark has no lineage_enable column)")
        if watcher.streampark_reports:
            say("StreamPark reports lineage itself (lineage.gravitino.address is set): the apps it covers are skipped")
        chosen = [a for a in apps if watcher.excluded(a) is None]
        say(f"reported: {len(chosen)}" + (": " + ", ".join(f"{a.key} {a.job_name}" for a in chosen) if chosen else ""))
        for app in apps:
            reason = watcher.excluded(app)
            if reason is not None and (app.job_type == SQL_JOB_TYPE or app.engine != FLINK):
                say(f"  not reported: {app.key} {app.job_name}: {reason}")
        reported_flink = [a for a in chosen if a.engine == FLINK]
        if "t_flink_env" in missing:  # the grant is listed above; the versions wait for it
            if reported_flink:
                say("Flink versions the reported apps compile with: unknown until t_flink_env is readable")
        else:
            report.lines.extend(flink_versions(source, reported_flink))
    except SourceError as error:
        # a table the grants check found readable can still refuse a query (a column grant, a row
        # policy, a lost connection): the check says so instead of ending in a traceback
        report.problems.append(f"{error}; check the account's grants on the tables named above")
    finally:
        source.close()
    say_lineage(settings, report)
    if options.workspace:
        if Path(options.workspace).is_dir():
            say(f"workspace: {options.workspace} (jobs' jars are resolved from it)")
        else:
            report.problems.append(f"the StreamPark workspace {options.workspace} is not a readable folder here")
    else:
        say("workspace: not given (jobs are compiled without their jars; --streampark-workspace DIR adds them)")
    return report


def flink_versions(source: Source, apps: list) -> list[str]:
    """The Flink versions the reported Flink apps compile with (their environments' minor
    versions, as the watcher gives them to the compile) and whether each is provisioned here: a
    version that is not is downloaded and built by the first compile that needs it."""
    from planlineage.errors import ProvisionError
    from planlineage.planner import provision
    from planlineage.watch.versions import minor_version

    if not apps:
        return []
    needed: dict[str | None, list[str]] = {}
    envs: dict[int | None, str | None] = {}
    for app in apps:
        if app.version_id not in envs:
            envs[app.version_id] = minor_version(reads.flink_env(source, app.version_id)[0])
        needed.setdefault(envs[app.version_id], []).append(app.key)
    lines = [f"Flink versions the reported apps compile with (cache {provision.cache_root()}):"]
    for minor, keys in sorted(needed.items(), key=lambda item: item[0] or ""):
        apps_text = f"{len(keys)} app{'s' if len(keys) > 1 else ''}"
        if provision.without_compiled_plan(minor):
            lines.append(
                f"  {minor}: {apps_text}: read from the SQL text, not compiled: Flink {minor} has no "
                "CompiledPlan (it arrived in Flink 1.15)"
            )
            continue
        try:
            flink = provision.resolve_version(minor)
        except ProvisionError as error:
            lines.append(f"  {minor}: {apps_text}: not compiled: {error}")
            continue
        named = f"{flink.minor} ({flink.version})" + ("" if minor else ", the default: the app's env has none")
        state = provision.state(flink)
        if state == "ready":
            lines.append(f"  {named}: {apps_text}: ready")
        else:
            lines.append(
                f"  {named}: {apps_text}: {state}: the first compile downloads and builds it "
                f"({provision.DOWNLOAD}, {provision.FIRST_USE}); `planlineage flink install {flink.minor}` does it now"
            )
    return lines
