"""Which StreamPark schema generation a database holds, detected from ``information_schema``.

Never assumed from a version number (../shared/streampark.md section 1): the deploy-mode column
(``execution_mode`` on 2.1.x, ``deploy_mode`` later), the operation log (``t_flink_log`` on 2.1.x,
``t_app_log`` later), team resources, Spark tables and the ``lineage_enable`` column of PR #4498
are each looked up by name.  A table the account cannot read is not listed by
``information_schema`` (both dialects filter it by privilege), so "absent" and "not granted" look
the same here; :mod:`planlineage.streampark.check` tells the user which grants to add.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from planlineage.streampark.connection import Source, SourceError

#: Tables the watcher reads, by purpose; ``{log}`` is the generation's operation log.
REQUIRED = ("t_flink_app", "t_flink_sql", "t_flink_effective", "t_flink_env", "{log}", "t_variable")
OPTIONAL = ("t_setting", "t_resource", "t_spark_app", "t_spark_sql", "t_spark_effective", "t_spark_env")


class SchemaError(SourceError):
    """The database does not look like StreamPark's (or the account sees too little of it)."""


@dataclass(frozen=True)
class Schema:
    generation: str  # "2.1.x" or "2.2+ (dev/3.0)"
    columns: dict[str, frozenset[str]] = field(repr=False)

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
        return self.has("t_spark_app", "state")

    def required_tables(self) -> list[str]:
        return [t.replace("{log}", self.log_table) for t in REQUIRED]

    def missing(self) -> list[str]:
        """Required tables the account does not see (absent, or no SELECT grant)."""
        return [t for t in self.required_tables() if not self.has(t)]

    def describe(self) -> str:
        extras = []
        if self.lineage_enable:
            extras.append("lineage_enable (PR #4498)")
        if self.spark:
            extras.append("Spark tables")
        text = f"StreamPark {self.generation} schema (deploy column {self.deploy_column}, log {self.log_table})"
        return text + (f", with {', '.join(extras)}" if extras else "")


def _current_schema_sql(source: Source) -> str:
    return "current_schema()" if source.dialect == "postgresql" else "DATABASE()"


def detect(source: Source) -> Schema:
    """The generation of the database behind ``source`` (raises :class:`SchemaError`)."""
    rows = source.rows(
        "SELECT table_name AS t, column_name AS c FROM information_schema.columns "
        f"WHERE table_schema = {_current_schema_sql(source)} AND table_name LIKE %s",
        ("t\\_%",),
    )
    columns: dict[str, set[str]] = {}
    for row in rows:
        columns.setdefault(str(row["t"]).lower(), set()).add(str(row["c"]).lower())
    frozen = {t: frozenset(c) for t, c in columns.items()}
    app = frozen.get("t_flink_app")
    if app is None:
        raise SchemaError(
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
        raise SchemaError(
            "t_flink_app has neither deploy_mode nor execution_mode: not a StreamPark schema this version knows"
        )
    return Schema(generation=generation, columns=frozen)
