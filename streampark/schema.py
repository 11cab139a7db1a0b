"""Which StreamPark schema generation a database holds, detected from ``information_schema``.

Never assumed from a version number: the deploy-mode column
(``execution_mode`` on 2.1.x, ``deploy_mode`` later), the operation log (``t_flink_log`` on 2.1.x,
``t_app_log`` later), team resources, Spark tables and the ``lineage_enable`` column of PR #4498
are each looked up by name.  A table the account cannot read is not listed by
``information_schema`` (both dialects filter it by privilege), so "absent" and "not granted" look
the same here; :mod:`planlineage.streampark.check` tells the user which grants to add.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from planlineage.errors import PlatformSchemaError
from planlineage.watch.connection import Source, visible_columns

#: Tables the watcher reads, by purpose; ``{log}`` is the generation's operation log.
REQUIRED = ("t_flink_app", "t_flink_sql", "t_flink_effective", "t_flink_env", "{log}", "t_variable")
OPTIONAL = ("t_setting", "t_resource", "t_spark_app", "t_spark_sql", "t_spark_effective", "t_spark_env")
#: The Spark tables, in the order ``watch --check`` lists their grants.
SPARK_TABLES = ("t_spark_app", "t_spark_sql", "t_spark_effective", "t_spark_env")

#: Every column the watcher reads (:mod:`.reads`), per table; ``{deploy}`` is the generation's
#: deploy-mode column.  Columns read only when present (``lineage_enable``, ``team_resource``,
#: ``t_app_log.job_type``, ``t_spark_env.spark_conf``) are not listed.
READS = {
    "t_flink_app": ("id", "team_id", "job_type", "{deploy}", "job_name", "version_id", "state", "job_id"),
    "t_flink_sql": ("id", "sql", "dependency"),
    "t_flink_effective": ("app_id", "target_type", "target_id"),
    "t_flink_env": ("id", "version", "flink_home", "is_default"),
    "t_variable": ("team_id", "variable_code", "variable_value"),
    "{log}": ("id", "app_id", "option_name", "success"),
    "t_setting": ("setting_key", "setting_value"),
    "t_resource": ("id", "resource_type", "resource", "team_id"),
    "t_spark_app": (
        "id", "team_id", "job_type", "deploy_mode", "app_name", "version_id", "state", "cluster_id", "app_properties",
    ),
    "t_spark_sql": ("id", "sql", "dependency"),
    "t_spark_effective": ("app_id", "target_type", "target_id"),
    "t_spark_env": ("id", "version", "is_default"),
}  # fmt: skip
#: Tables without which nothing can be reported: a column missing there stops the watcher.
CORE = ("t_flink_app", "t_flink_sql", "t_flink_effective", "t_flink_env", "t_variable")


@dataclass(frozen=True)
class Schema:
    generation: str  # "2.1.x" or "2.2+ (dev/3.0)"
    columns: dict[str, frozenset[str]] = field(repr=False)
    #: Tables set aside because a column the watcher reads is missing (table -> those columns);
    #: they are not in ``columns``, so they read as absent.
    broken: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    #: Tables known to exist whether or not the account may read them (PostgreSQL's catalog
    #: lists them all; MySQL shows a table only to an account with a grant on it).
    present: frozenset[str] = field(default_factory=frozenset, repr=False)

    def has(self, table: str, column: str | None = None) -> bool:
        cols = self.columns.get(table)
        return cols is not None and (column is None or column in cols)

    @property
    def deploy_column(self) -> str | None:
        for name in ("deploy_mode", "execution_mode"):
            if self.has("t_flink_app", name):
                return name
        return None

    @property
    def log_table(self) -> str:
        """The operation log this generation writes (it may still be unreadable)."""
        if self.has("t_app_log"):
            return "t_app_log"
        if self.has("t_flink_log"):
            return "t_flink_log"
        return "t_flink_log" if self.deploy_column == "execution_mode" else "t_app_log"

    @property
    def log_readable(self) -> bool:
        return self.has(self.log_table, "option_name") and self.has(self.log_table, "success")

    @property
    def lineage_enable(self) -> bool:
        return self.has("t_flink_app", "lineage_enable")

    @property
    def spark(self) -> bool:
        """Whether Spark apps and their SQL can be read (the env table is optional)."""
        return self.has("t_spark_app", "state") and self.has("t_spark_sql") and self.has("t_spark_effective")

    def required_tables(self) -> list[str]:
        return [t.replace("{log}", self.log_table) for t in REQUIRED]

    def missing(self) -> list[str]:
        """Required tables the account does not see (absent, or no SELECT grant)."""
        return [t for t in self.required_tables() if not self.has(t) and t not in self.broken]

    def unreadable_spark_tables(self, dialect: str) -> list[str]:
        """Spark tables that exist (or, on MySQL, that the 2.2+ DDL has) but the account cannot
        read: without them its Spark SQL apps are never seen."""
        hidden = [t for t in SPARK_TABLES if not self.has(t) and t not in self.broken]
        if dialect == "postgresql":
            return [t for t in hidden if t in self.present]
        # MySQL hides a table from an account without a grant on it: the 2.2+ DDL always has them.
        return hidden if self.generation != "2.1.x" else []

    def describe(self) -> str:
        extras = []
        if self.lineage_enable:
            extras.append("lineage_enable (PR #4498)")
        if self.spark:
            extras.append("Spark tables")
        text = f"StreamPark {self.generation} schema (deploy column {self.deploy_column}, log {self.log_table})"
        return text + (f", with {', '.join(extras)}" if extras else "")


def detect(source: Source) -> Schema:
    """The generation of the database behind ``source`` (raises :class:`PlatformSchemaError`)."""
    frozen = visible_columns(source, "t_")
    present = frozenset(frozen)
    if source.dialect == "postgresql":  # the catalog lists the tables the account may not read too
        rows = source.rows("SELECT tablename AS t FROM pg_catalog.pg_tables WHERE schemaname = current_schema()")
        present |= {str(row["t"]).lower() for row in rows}
    app = frozen.get("t_flink_app")
    if app is None:
        raise PlatformSchemaError(
            f"no t_flink_app table visible in {source.target.masked()}: is this StreamPark's database, "
            "and does the account have SELECT on it? (planlineage watch --check lists the grants)"
        )
    if "execution_mode" in app:
        generation = "2.1.x"
    elif "deploy_mode" in app:
        # dev (2.2.0-SNAPSHOT) and 3.0 read the same for the watcher: what differs (role tables,
        # managed-cloud tables) is nothing it reads, and an account need not see those tables.
        generation = "2.2+ (dev/3.0)"
    else:
        raise PlatformSchemaError(
            "t_flink_app has neither deploy_mode (StreamPark 2.2+) nor execution_mode (2.1.x): "
            "not a StreamPark schema generation this version knows (or the account may not read that column)"
        )
    deploy = "execution_mode" if generation == "2.1.x" else "deploy_mode"
    log = Schema(generation, frozen).log_table
    broken: dict[str, tuple[str, ...]] = {}
    for pattern, needed in READS.items():
        table = pattern.replace("{log}", log)
        have = frozen.get(table)
        wanted = [column.replace("{deploy}", deploy) for column in needed]
        lacking = tuple(column for column in wanted if column not in have) if have is not None else ()
        if lacking:
            broken[table] = lacking
    core = {t: c for t, c in broken.items() if t in CORE}
    if core:
        raise PlatformSchemaError(_column_message(core, generation, deploy))
    for table in broken:
        del frozen[table]
    return Schema(generation=generation, columns=frozen, broken=broken, present=present)


def _column_message(broken: dict[str, tuple[str, ...]], generation: str, deploy: str) -> str:
    columns = ", ".join(f"{t}.{c}" for t, cs in broken.items() for c in cs)
    return (
        f"the StreamPark {generation} schema (detected by t_flink_app.{deploy}) has {columns}, which the watcher "
        "reads, but this database does not show "
        + ("it" if "," not in columns else "them")
        + ": a StreamPark version between releases or an altered table? (an account without SELECT on a "
        "column does not see it either: grant SELECT on the whole table)"
    )


def column_problem(schema: Schema) -> str | None:
    """The message for the tables ``schema`` set aside (None when every column is there)."""
    if not schema.broken:
        return None
    deploy = schema.deploy_column or "deploy_mode"
    return _column_message(schema.broken, schema.generation, deploy)
