"""The rows the watcher reads from Dinky's database: only SELECTs (the session is read only).

Booleans come back as ``bool`` from PostgreSQL and ``0``/``1`` from MySQL (``truthy``); times as
naive ``datetime`` in the database's zone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from planlineage.dinky.schema import Schema
from planlineage.watch.connection import Source, truthy


@dataclass(frozen=True)
class Task:
    id: int
    name: str
    dialect: str
    env_id: int | None
    fragment: bool
    cluster_id: int | None
    deleted: bool

    @property
    def key(self) -> str:
        """The planlineage app id of the task (its runs are its job instances)."""
        return f"dinky:{self.id}"


@dataclass(frozen=True)
class Instance:
    id: int
    task_id: int | None
    cluster_id: int | None
    jid: str
    status: str
    history_id: int | None
    created: datetime | None
    finished: datetime | None
    error: str | None
    deleted: bool

    @property
    def run_key(self) -> str:
        """The run's platform ids (:class:`planlineage.history.records.PastRun`'s ``run_key``)."""
        return f"dinky:instance={self.id}"


def tasks(source: Source, schema: Schema) -> dict[int, Task]:
    rows = source.rows(
        f"SELECT id, name, dialect, env_id, fragment, cluster_id, {schema.deleted('dinky_task')} AS gone "
        "FROM dinky_task ORDER BY id"
    )
    return {
        int(r["id"]): Task(
            id=int(r["id"]),
            name=str(r["name"] or f"task-{r['id']}"),
            dialect=str(r["dialect"] or ""),
            env_id=None if r["env_id"] is None else int(r["env_id"]),
            fragment=truthy(r["fragment"]),
            cluster_id=None if r["cluster_id"] is None else int(r["cluster_id"]),
            deleted=truthy(r["gone"]),
        )
        for r in rows
    }


def _instances(source: Source, schema: Schema, where: str, params: tuple | list = ()) -> list[Instance]:
    finish = "finish_time" if schema.has("dinky_job_instance", "finish_time") else "NULL"
    error = "error" if schema.has("dinky_job_instance", "error") else "NULL"
    rows = source.rows(
        f"SELECT id, task_id, cluster_id, jid, status, history_id, create_time, {finish} AS finish_time, "
        f"{error} AS error, {schema.deleted('dinky_job_instance')} AS gone FROM dinky_job_instance "
        f"WHERE {where} ORDER BY id",
        params,
    )
    return [
        Instance(
            id=int(r["id"]),
            task_id=None if r["task_id"] is None else int(r["task_id"]),
            cluster_id=None if r["cluster_id"] is None else int(r["cluster_id"]),
            jid=str(r["jid"] or "").strip(),
            status=str(r["status"] or "").strip().upper(),
            history_id=None if r["history_id"] is None else int(r["history_id"]),
            created=r["create_time"],
            finished=r["finish_time"],
            error=r["error"],
            deleted=truthy(r["gone"]),
        )
        for r in rows
    ]


def max_instance_id(source: Source) -> int:
    rows = source.rows("SELECT MAX(id) AS m FROM dinky_job_instance")
    return int(rows[0]["m"] or 0) if rows else 0


def instances_after(source: Source, schema: Schema, after: int) -> list[Instance]:
    """Job instances newer than ``after`` (submissions since the last poll), oldest first."""
    return _instances(source, schema, "id > %s", (after,))


def instances(source: Source, schema: Schema, ids: list[int]) -> dict[int, Instance]:
    if not ids:
        return {}
    marks = ", ".join(["%s"] * len(ids))
    return {i.id: i for i in _instances(source, schema, f"id IN ({marks})", [int(i) for i in ids])}


def newest_instances(source: Source, schema: Schema) -> list[Instance]:
    """Each task's newest job instance (the first poll adopts those still alive)."""
    return _instances(
        source, schema, "id IN (SELECT MAX(id) FROM dinky_job_instance WHERE task_id IS NOT NULL GROUP BY task_id)"
    )


def history_statement(source: Source, schema: Schema, history_id: int | None) -> str | None:
    """``dinky_history.statement``: the script Dinky executed (its environment prepended); None
    without that row or without a grant on the table."""
    if history_id is None or not schema.has("dinky_history", "statement"):
        return None
    rows = source.rows("SELECT statement FROM dinky_history WHERE id = %s", (history_id,))
    return rows[0]["statement"] if rows else None


def task_statement(source: Source, task_id: int | None) -> str | None:
    if task_id is None:
        return None
    rows = source.rows("SELECT statement FROM dinky_task WHERE id = %s", (task_id,))
    return rows[0]["statement"] if rows else None


def fragments(source: Source, schema: Schema) -> dict[str, str]:
    """The enabled global variables (``dinky_fragment``), not soft-deleted."""
    if not schema.has("dinky_fragment"):
        return {}
    rows = source.rows(
        f"SELECT name, fragment_value, enabled, {schema.deleted('dinky_fragment')} AS gone FROM dinky_fragment"
    )
    return {
        str(r["name"]): str(r["fragment_value"] or "") for r in rows if truthy(r["enabled"]) and not truthy(r["gone"])
    }


def cluster_version(source: Source, schema: Schema, cluster_id: int | None) -> str | None:
    """``dinky_cluster.version`` (a registered or auto-registered cluster's Flink version)."""
    if cluster_id is None or not schema.has("dinky_cluster"):
        return None
    rows = source.rows("SELECT version FROM dinky_cluster WHERE id = %s", (cluster_id,))
    return (str(rows[0]["version"] or "").strip() or None) if rows else None
