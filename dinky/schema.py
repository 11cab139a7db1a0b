"""Which Dinky schema a database holds, detected from ``information_schema`` (never from a
version number): the tables and columns the watcher reads, and whether rows are soft-deleted
(``is_delete``, Dinky 1.3.0's migration ``V20250109.1.3.0``; absent up to 1.2).

As for StreamPark (:mod:`planlineage.streampark.schema`), a table the account may not read is
not listed, so "absent" and "not granted" look the same; ``watch --check`` lists the grants.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from planlineage.errors import PlatformSchemaError
from planlineage.watch.connection import Source, visible_columns

#: Every column the watcher reads, per table (``is_delete`` is read where it exists).
READS = {
    "dinky_task": ("id", "name", "dialect", "statement", "env_id", "fragment", "cluster_id"),
    "dinky_job_instance": ("id", "task_id", "cluster_id", "jid", "status", "history_id", "create_time"),
    "dinky_history": ("id", "statement"),
    "dinky_cluster": ("id", "version"),
    "dinky_fragment": ("name", "fragment_value", "enabled"),
}
#: Without these nothing can be reported; the others are recommended (versions, global variables).
REQUIRED = ("dinky_task", "dinky_job_instance", "dinky_history")
RECOMMENDED = ("dinky_cluster", "dinky_fragment")


@dataclass(frozen=True)
class Schema:
    columns: dict[str, frozenset[str]] = field(repr=False)

    def has(self, table: str, column: str | None = None) -> bool:
        cols = self.columns.get(table)
        return cols is not None and (column is None or column in cols)

    @property
    def soft_delete(self) -> bool:
        return self.has("dinky_task", "is_delete")

    @property
    def generation(self) -> str:
        return "1.3.0+ (is_delete)" if self.soft_delete else "1.0-1.2"

    def deleted(self, table: str) -> str:
        """The select-list item that says whether a row is soft-deleted (FALSE before 1.3.0)."""
        return "is_delete" if self.has(table, "is_delete") else "0"

    def missing(self) -> list[str]:
        return [t for t in REQUIRED if not self.has(t)]

    def recommended(self) -> list[str]:
        return [t for t in RECOMMENDED if not self.has(t)]

    def describe(self) -> str:
        return f"Dinky {self.generation} schema"


def detect(source: Source) -> Schema:
    """The tables and columns behind ``source`` (raises :class:`PlatformSchemaError`)."""
    columns = visible_columns(source, "dinky_")
    if "dinky_task" not in columns:
        raise PlatformSchemaError(
            f"no dinky_task table visible in {source.target.masked()}: is this Dinky's database (1.0 or later; "
            "0.7's dlink_* tables are not read), and does the account have SELECT on it? "
            "(planlineage watch --check lists the grants)"
        )
    lacking = [
        f"{table}.{column}"
        for table, needed in READS.items()
        if table in columns
        for column in needed
        if column not in columns[table]
    ]
    if lacking:
        raise PlatformSchemaError(
            f"Dinky's {', '.join(lacking)}, which the watcher reads, is not in this database: a Dinky version "
            "this watcher does not know, or an account without SELECT on the column (grant SELECT on the table)"
        )
    return Schema(columns)
