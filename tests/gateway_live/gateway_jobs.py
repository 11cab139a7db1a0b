"""The jobs the gateway tests submit: bounded ones that finish, one that fails at run time, an
unbounded one to cancel, a slow one to outlive a proxy restart.  Only connectors of flink-dist
(``filesystem`` with ``csv``, ``datagen``), so no jar beyond PyPI's; every table on its own paths
under the test's tmp dir, so each test finds its own events by dataset name."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

FILE_NAMESPACE = "file"  # docs/naming.md: a bare filesystem path is in namespace `file`


@dataclass(frozen=True)
class Tables:
    """A source directory of CSV rows and sink directories, all under ``root``."""

    root: Path

    def path(self, name: str) -> str:
        return str(self.root / name)

    def dataset(self, name: str) -> tuple[str, str]:
        """The OpenLineage dataset (namespace, name) of the table at ``name``."""
        return FILE_NAMESPACE, self.path(name)

    def source(self, table: str, name: str, rows: list[tuple[int, str]]) -> str:
        """A bounded CSV source; its DDL."""
        folder = self.root / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "part-0.csv").write_text("".join(f"{number},{word}\n" for number, word in rows))
        return (
            f"CREATE TABLE {table} (id INT, word STRING) WITH ('connector' = 'filesystem', "
            f"'path' = '{folder}', 'format' = 'csv')"
        )

    def sink(self, table: str, name: str, columns: str = "id INT, word STRING") -> str:
        return (
            f"CREATE TABLE {table} ({columns}) WITH ('connector' = 'filesystem', "
            f"'path' = '{self.path(name)}', 'format' = 'csv')"
        )


ROWS = [(1, "one"), (2, "two"), (3, "three")]
# CAST of a column to INT fails while the job runs (a NumberFormatException in the task), never
# while compiling: the planner cannot fold a column's value.
NOT_A_NUMBER = [(1, "1"), (2, "not-a-number")]


def unbounded_source(table: str) -> str:
    """A source that never ends (two rows a second), for a job to cancel or to outlive a restart."""
    return (
        f"CREATE TABLE {table} (id INT, word STRING) WITH ('connector' = 'datagen', "
        "'rows-per-second' = '2', 'fields.word.length' = '4')"
    )


def slow_source(table: str, seconds: int) -> str:
    """A bounded source that takes about ``seconds`` to read (four rows a second)."""
    return (
        f"CREATE TABLE {table} (id INT, word STRING) WITH ('connector' = 'datagen', "
        f"'rows-per-second' = '4', 'number-of-rows' = '{4 * seconds}', 'fields.word.length' = '4')"
    )
