"""The rows the watcher reads from StreamPark's database, written once per schema generation.

Only SELECTs (the session is read only anyway).  Booleans come back as ``bool`` from PostgreSQL
and as ``0``/``1`` from MySQL; callers test them with ``truthy``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any

from planlineage.streampark.schema import Schema
from planlineage.streampark.states import FLINK, LOG_ENGINES, SPARK
from planlineage.watch.connection import Source, truthy


@dataclass(frozen=True)
class App:
    engine: str
    id: int
    team_id: int | None
    job_type: int | None
    deploy_mode: int | None
    job_name: str
    version_id: int | None
    state: int | None
    job_id: str  # Flink JobID (Spark: the cluster's application id); "" when not known yet
    lineage_enable: bool | None  # None when the column does not exist
    app_properties: str | None = None  # Spark only

    @cached_property  # asked several times per app per poll: made once (10,000 apps, every poll)
    def key(self) -> str:
        """The planlineage app id: the two engines' id sequences overlap, so it is prefixed."""
        return f"{self.engine}:{self.id}"


@dataclass(frozen=True)
class LogRow:
    id: int
    app_id: int
    engine: str
    option: int | None
    success: bool
    at: datetime | None = None  # when the console wrote it (naive, the console's time zone); None: no column

    @cached_property
    def key(self) -> str:
        return f"{self.engine}:{self.app_id}"


def log_time_column(schema: Schema) -> str | None:
    """The operation log's time column: ``create_time`` (2.2+), ``option_time`` (2.1.x), or None."""
    for column in ("create_time", "option_time"):
        if schema.has(schema.log_table, column):
            return column
    return None


def apps(source: Source, schema: Schema) -> list[App]:
    # Both tables read into the same names (aliases), so one function turns a row into an App.
    flink_enable = schema.lineage_enable
    enable = ", lineage_enable" if flink_enable else ""
    found = [
        _app(FLINK, row, flink_enable)
        for row in source.rows(
            f"SELECT id, team_id, job_type, {schema.deploy_column} AS deploy_mode, job_name, version_id, state, "
            f"job_id{enable} FROM t_flink_app ORDER BY id"
        )
    ]
    if schema.spark:
        spark_enable = schema.has("t_spark_app", "lineage_enable")
        enable = ", lineage_enable" if spark_enable else ""
        found += [
            _app(SPARK, row, spark_enable, app_properties=row["app_properties"])
            for row in source.rows(
                "SELECT id, team_id, job_type, deploy_mode, app_name AS job_name, version_id, state, "
                f"cluster_id AS job_id, app_properties{enable} FROM t_spark_app ORDER BY id"
            )
        ]
    return found


def max_log_id(source: Source, schema: Schema) -> int:
    rows = source.rows(f"SELECT MAX(id) AS m FROM {schema.log_table}")
    return int(rows[0]["m"] or 0) if rows else 0


def log_rows(source: Source, schema: Schema, after: int) -> list[LogRow]:
    """Operation-log rows newer than ``after``, oldest first."""
    return _log_rows(source, schema, "id > %s", (after,))


def last_start(source: Source, schema: Schema, app: App) -> LogRow | None:
    """The newest successful START row of ``app`` (what started the run it has now), or None."""
    return last_starts(source, schema, [app]).get(app.key)


def last_starts(source: Source, schema: Schema, apps: list[App]) -> dict[str, LogRow]:
    """:func:`last_start` of every app in ``apps``, by app key, in one query per chunk of ids."""
    found: dict[str, LogRow] = {}
    for ids in _chunks(sorted({app.id for app in apps})):
        marks = ", ".join(["%s"] * len(ids))
        for row in _log_rows(source, schema, f"app_id IN ({marks}) AND option_name = 1", tuple(ids)):
            if row.success:
                found[row.key] = row  # oldest first: the newest one stays
    wanted = {app.key for app in apps}
    return {key: row for key, row in found.items() if key in wanted}


def _log_rows(source: Source, schema: Schema, where: str, params: tuple) -> list[LogRow]:
    engine = ", job_type" if schema.has(schema.log_table, "job_type") else ""
    at = log_time_column(schema)
    when = f", {at} AS at" if at else ""
    rows = source.rows(
        f"SELECT id, app_id, option_name, success{engine}{when} FROM {schema.log_table} WHERE {where} ORDER BY id",
        params,
    )
    return [
        LogRow(
            id=int(r["id"]),
            app_id=int(r["app_id"] or 0),
            engine=LOG_ENGINES.get(int(r.get("job_type") or 1), FLINK),
            option=None if r["option_name"] is None else int(r["option_name"]),
            success=truthy(r["success"]),
            at=r.get("at") if isinstance(r.get("at"), datetime) else None,
        )
        for r in rows
    ]


def all_log_rows(source: Source, schema: Schema) -> list[LogRow]:
    """Every operation-log row, oldest first (the history replay reads them once)."""
    return _log_rows(source, schema, "id > %s", (0,))


def effective_sql(source: Source, schema: Schema, app: App) -> dict[str, Any] | None:
    """The effective SQL row of ``app`` (FlinkSqlMapper.xml ``getEffective``), or None."""
    return effective_sqls(source, schema, [app]).get(app.key)


def effective_sqls(source: Source, schema: Schema, apps: list[App]) -> dict[str, dict[str, Any]]:
    """:func:`effective_sql` of every app in ``apps``, by app key: one query per engine (and per
    chunk of ids), where a poll that starts hundreds of runs read one row per app."""
    found: dict[str, dict[str, Any]] = {}
    for engine, prefix, target in ((FLINK, "t_flink", 2), (SPARK, "t_spark", 4)):
        resource = ", s.team_resource" if schema.has(f"{prefix}_sql", "team_resource") else ""
        for ids in _chunks(sorted({app.id for app in apps if app.engine == engine})):
            marks = ", ".join(["%s"] * len(ids))
            rows = source.rows(
                f"SELECT e.app_id AS effective_app, s.id, s.{source.quote('sql')} AS text, s.dependency{resource} "
                f"FROM {prefix}_sql s JOIN {prefix}_effective e ON s.id = e.target_id "
                f"WHERE e.target_type = %s AND e.app_id IN ({marks}) ORDER BY e.id",
                (target, *ids),
            )
            for row in rows:
                found.setdefault(f"{engine}:{int(row.pop('effective_app'))}", row)
    return found


def flink_starts(source: Source, schema: Schema, apps: list[App]) -> dict[str, dict[str, Any]]:
    """``start_time``, ``options`` and ``dynamic_properties`` of the Flink apps in ``apps`` (what a
    run shared with openlineage-flink's listener is derived from), by app key, one query per chunk;
    a column the schema lacks reads as None."""
    kept = ("start_time", "options", "dynamic_properties")
    wanted = [c for c in kept if schema.has("t_flink_app", c)]
    found: dict[str, dict[str, Any]] = {}
    for ids in _chunks(sorted({app.id for app in apps if app.engine == FLINK})):
        marks = ", ".join(["%s"] * len(ids))
        columns = "".join(f", {c}" for c in wanted)
        for row in source.rows(f"SELECT id{columns} FROM t_flink_app WHERE id IN ({marks})", tuple(ids)):
            found[f"{FLINK}:{int(row['id'])}"] = {c: row.get(c) for c in kept}
    return found


def variables(source: Source, schema: Schema, team_id: int | None) -> dict[str, str]:
    return team_variables(source, schema, [team_id]).get(team_id, {})


def team_variables(source: Source, schema: Schema, team_ids: list[int | None]) -> dict[int | None, dict[str, str]]:
    """The variables of every team in ``team_ids`` (by team id), in one query per chunk of ids."""
    found: dict[int | None, dict[str, str]] = {}
    teams = sorted({int(t) for t in team_ids if t is not None})
    if not teams or not schema.has("t_variable"):
        return found
    for ids in _chunks(teams):
        marks = ", ".join(["%s"] * len(ids))
        rows = source.rows(
            f"SELECT team_id, variable_code, variable_value FROM t_variable WHERE team_id IN ({marks}) ORDER BY id",
            tuple(ids),
        )
        for r in rows:
            found.setdefault(int(r["team_id"]), {})[str(r["variable_code"])] = str(r["variable_value"] or "")
    return found


def flink_env(source: Source, version_id: int | None) -> tuple[str | None, str | None]:
    """``t_flink_env.version`` and ``flink_home`` of the app's environment (NULL: the default one)."""
    if version_id is None:
        rows = source.rows("SELECT version, flink_home FROM t_flink_env WHERE is_default = TRUE ORDER BY id")
    else:
        rows = source.rows("SELECT version, flink_home FROM t_flink_env WHERE id = %s", (version_id,))
    return _env(rows[0] if rows else None)


def flink_envs(source: Source) -> dict[int | None, tuple[str | None, str | None]]:
    """:func:`flink_env` of every environment, by id, and the default one under None, in one query
    (the table holds one row per Flink install)."""
    envs: dict[int | None, tuple[str | None, str | None]] = {}
    for row in source.rows("SELECT id, version, flink_home, is_default FROM t_flink_env ORDER BY id"):
        envs[int(row["id"])] = _env(row)
        if truthy(row["is_default"]) and None not in envs:
            envs[None] = envs[int(row["id"])]
    return envs


def _env(row: dict[str, Any] | None) -> tuple[str | None, str | None]:
    if row is None:
        return None, None
    version, home = (str(row[column] or "").strip() or None for column in ("version", "flink_home"))
    return version, home


def spark_envs(source: Source, schema: Schema) -> list[dict[str, Any]]:
    """Every ``t_spark_env`` row (``id``, ``version``, ``spark_conf`` deflated, ``is_default``)."""
    if not schema.has("t_spark_env", "version"):
        return []
    conf = "spark_conf" if schema.has("t_spark_env", "spark_conf") else "NULL"
    return source.rows(f"SELECT id, version, {conf} AS spark_conf, is_default FROM t_spark_env ORDER BY id")


def flink_version(source: Source, version_id: int | None) -> str | None:
    """``t_flink_env.version`` of the app's environment (NULL: the default environment)."""
    return flink_env(source, version_id)[0]


def resources(source: Source, schema: Schema, ids: list[int]) -> dict[int, dict[str, Any]]:
    if not ids or not schema.has("t_resource"):
        return {}
    marks = ", ".join(["%s"] * len(ids))
    rows = source.rows(
        f"SELECT id, resource_type, resource, team_id FROM t_resource WHERE id IN ({marks})", [int(i) for i in ids]
    )
    return {int(r["id"]): r for r in rows}


def settings(source: Source, schema: Schema) -> dict[str, str]:
    if not schema.has("t_setting"):
        return {}
    rows = source.rows("SELECT setting_key, setting_value FROM t_setting")
    return {str(r["setting_key"]): (r["setting_value"] or "") for r in rows}


def _chunks(ids: list[int], size: int = 500) -> list[list[int]]:
    return [ids[i : i + size] for i in range(0, len(ids), size)]


def json_or_none(text: Any) -> Any:
    if not text or not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _app(engine: str, row, lineage_enable_column: bool, **more) -> App:
    return App(
        engine=engine,
        id=int(row["id"]),
        team_id=row["team_id"],
        job_type=row["job_type"],
        deploy_mode=row["deploy_mode"],
        job_name=row["job_name"] or f"{engine}-{row['id']}",
        version_id=row["version_id"],
        state=row["state"],
        job_id=(row["job_id"] or "").strip(),
        lineage_enable=truthy(row["lineage_enable"]) if lineage_enable_column else None,
        **more,
    )
