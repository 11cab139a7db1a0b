"""What the compile of a watched app's run is given, per engine, besides its SQL.

Flink SQL: the minor version of ``t_flink_env.version``, the app's jars (:mod:`.jars`) then the
jars of the console's Flink home; a Flink older than 1.15 (no CompiledPlan) is said once and its
run's lineage is read from the SQL text, never compiled by another version.  Spark SQL: the
supported Spark line of ``t_spark_env.version`` and the conf keys that name tables
(:mod:`.spark`); an unsupported Spark version is said once and the run is not started: another
version's parser is never used in its place.

``once(key, message)`` is the watcher's say-once; each function returns ``(job fields, label)``
where the label names the engine and version in the watcher's "compiling" line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from planlineage.errors import FlinkHomeError
from planlineage.planner.cluster_jars import cluster_jars
from planlineage.streampark import jars as job_jars
from planlineage.streampark import reads, spark
from planlineage.streampark import sql as stored_text
from planlineage.streampark.reads import App
from planlineage.streampark.schema import Schema
from planlineage.streampark.states import FLINK, SPARK
from planlineage.watch.connection import Source, truthy
from planlineage.watch.versions import minor_version

Once = Callable[[str, str], None]


def flink_job(
    source: Source,
    schema: Schema,
    app: App,
    row: dict,
    options: Any,
    once: Once,
    env: tuple[str | None, str | None] | None = None,
) -> tuple[dict, str]:
    """The env's Flink version, the app's jars then the cluster's (``options``: the watcher's;
    ``env``: the app's ``(version, flink_home)`` when read already)."""
    version, flink_home = env if env is not None else reads.flink_env(source, app.version_id)
    found = job_jars.resolve(source, schema, app, row, options.workspace)
    for warning in found.warnings:
        once(f"jar:{app.key}:{warning}", f"{app.key} {app.job_name}: {warning} (compiled without it)")
    jars = [*found.paths, *_cluster_jars(flink_home, options.verbose, once)]
    from planlineage.planner.provision import without_compiled_plan

    fields = {"engine": FLINK, "flink_version": minor_version(version), "jars": jars}
    if without_compiled_plan(version):
        once(
            f"flink-version:{app.key}:{version}",
            f"WARN {app.key} {app.job_name}: Flink {version} has no CompiledPlan (it arrived in Flink 1.15): "
            'its lineage is the tables its SQL names, read from the text ("method": "static", no column lineage)',
        )
        return fields, f"Flink {version} (read from the SQL text)"
    return fields, f"Flink {version or 'default'}"


def _cluster_jars(flink_home: str | None, verbose: bool, once: Once) -> list[str]:
    """The jars of the console's Flink (``t_flink_env.flink_home``: lib/ and opt/ connectors,
    minus Flink's own), after the app's own ones: connectors dropped into the cluster's lib/
    are recorded nowhere else. The folder is the console host's; where this watcher cannot
    read it, jobs compile without them (said once with --verbose)."""
    if not flink_home:
        return []
    try:
        return cluster_jars(flink_home)
    except FlinkHomeError:
        if verbose:
            once(
                f"flink_home:{flink_home}",
                f"t_flink_env.flink_home {flink_home} is not readable here: "
                "jobs of that environment compile without the cluster's own jars",
            )
        return []


def spark_job(app: App, env: spark.Env, once: Once) -> tuple[dict, str] | None:
    """The supported Spark line of the app's env and the conf keys that name tables; None (one
    WARN) when its Spark version is not one planlineage parses."""
    if env.minor is None:
        once(
            f"spark-version:{app.key}:{env.version}",
            f"WARN {app.key} {app.job_name}: not reported: Spark {env.version or '(no t_spark_env row)'} "
            f"is not a Spark version planlineage parses ({spark.supported_lines()})",
        )
        return None
    fields = {
        "engine": SPARK,
        "spark_version": env.minor,
        "spark_conf": spark.naming_conf(env.conf, app.app_properties),
        "jars": [],
    }
    return fields, f"Spark {env.version}"


def spark_envs(source: Source, schema: Schema, charset: str, once: Once) -> dict[int | None, spark.Env]:
    """``t_spark_env`` by id, and the default env under None (``getByIdOrDefault``)."""
    envs: dict[int | None, spark.Env] = {}
    for row in reads.spark_envs(source, schema) if schema.spark else []:
        try:
            conf = spark.defaults(stored_text.decode(row["spark_conf"], charset))
        except stored_text.DecodeError as error:
            once(f"spark_conf:{row['id']}", f"t_spark_env {row['id']}: spark_conf not read: {error}")
            conf = {}
        env = spark.Env(str(row["version"] or "").strip() or None, conf)
        envs[int(row["id"])] = env
        if truthy(row["is_default"]) and None not in envs:
            envs[None] = env
    return envs
