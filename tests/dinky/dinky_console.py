"""The tests' stand-in for Dinky's console: it writes Dinky's rows the way its services do, one
statement at a time, through an administrator connection to the test database.

``submit()`` follows ``TaskServiceImpl.submitTask`` and ``Job2MysqlHandler``: the execution's
``dinky_history`` row (INITIALIZE, the script with the environment's statement prepended,
``buildEnvSql``), then on success the history row's job id and SUCCESS, the
``dinky_job_instance`` row (INITIALIZING, the Flink ``jid``) and the task's ``job_instance_id``.
The status then moves as Dinky's job refresh writes it (``set_status``).
"""

from __future__ import annotations

import uuid
from datetime import datetime

from dinky_schemas import ddl, quote

HISTORY_INITIALIZE, HISTORY_SUCCESS = 0, 2
DONE = ("FAILED", "CANCELED", "FINISHED", "UNKNOWN")


class Console:
    def __init__(self, server, database: str, generation: str):
        self.server, self.database, self.generation = server, database, generation
        self.dialect = server.dialect
        self.conn = server.admin(database)

    def execute(self, sql: str, params: tuple = ()):
        if self.dialect == "mysql":
            with self.conn.cursor() as cursor:
                cursor.execute(sql, params)
                return cursor.fetchall() if cursor.description else None
        cursor = self.conn.execute(sql, params)
        return cursor.fetchall() if cursor.description else None

    def insert(self, table: str, values: dict) -> int:
        cols = ", ".join(quote(self.dialect, c) for c in values)
        marks = ", ".join(["%s"] * len(values))
        self.execute(f"INSERT INTO {table} ({cols}) VALUES ({marks})", tuple(values.values()))
        return int(self.execute(f"SELECT MAX(id) FROM {table}")[0][0])

    def update(self, table: str, key: int, values: dict) -> None:
        sets = ", ".join(f"{quote(self.dialect, c)} = %s" for c in values)
        self.execute(f"UPDATE {table} SET {sets} WHERE id = %s", (*values.values(), key))

    def close(self) -> None:
        self.conn.close()

    def load_schema(self) -> None:
        for statement in ddl(self.generation, self.dialect):
            self.execute(statement)

    # -- registry ---------------------------------------------------------------------------

    def cluster(self, version: str) -> int:
        """A registered Flink cluster (``ClusterInstanceServiceImpl.registersCluster``: the
        version read from its JobManager)."""
        name = f"flink-{version}-{uuid.uuid4().hex[:6]}"
        return self.insert(
            "dinky_cluster",
            {"tenant_id": 1, "name": name, "type": "standalone", "hosts": "jm:8081", "version": version, "status": 1},
        )

    def fragment(self, name: str, value: str, enabled: bool = True) -> int:
        """A global variable (``FragmentVariableServiceImpl``)."""
        return self.insert(
            "dinky_fragment", {"name": name, "tenant_id": 1, "fragment_value": value, "enabled": int(enabled)}
        )

    def create_task(
        self, name: str, statement: str, *, dialect: str = "FlinkSql", env: int | None = None,
        fragment: bool = False, cluster: int | None = None,
    ) -> int:  # fmt: skip
        """``TaskServiceImpl.saveOrUpdateTask``: the task row with its plain-text statement."""
        return self.insert(
            "dinky_task",
            {"name": name, "tenant_id": 1, "dialect": dialect, "type": "standalone", "fragment": fragment,
             "statement_set": True, "cluster_id": cluster, "env_id": env, "step": 1, "statement": statement},
        )  # fmt: skip

    def edit(self, task: int, statement: str) -> None:
        self.update("dinky_task", task, {"statement": statement})

    # -- runs -------------------------------------------------------------------------------

    def _script(self, task: int) -> tuple[str, str, int | None]:
        name, statement, env, cluster = self.execute(
            "SELECT name, statement, env_id, cluster_id FROM dinky_task WHERE id = %s", (task,)
        )[0]
        if env is not None:  # buildEnvSql: the FlinkSqlEnv task's statement, before the task's
            statement = self.execute("SELECT statement FROM dinky_task WHERE id = %s", (env,))[0][0] + "\n" + statement
        return name, statement, cluster

    def submit(self, task: int, at: datetime | None = None) -> int:
        """A submission that reached the cluster (``at``: its time, now by default): its job
        instance's id."""
        name, statement, cluster = self._script(task)
        at = at or datetime.now()
        history = self.insert(
            "dinky_history",
            {"tenant_id": 1, "cluster_id": cluster or 0, "job_name": name, "status": HISTORY_INITIALIZE,
             "type": "standalone", "statement": statement, "start_time": at, "task_id": task},
        )  # fmt: skip
        jid = uuid.uuid4().hex
        self.update("dinky_history", history, {"job_id": jid, "status": HISTORY_SUCCESS, "end_time": at})
        instance = self.insert(
            "dinky_job_instance",
            {"name": name, "tenant_id": 1, "task_id": task, "step": 1, "cluster_id": cluster, "jid": jid,
             "status": "INITIALIZING", "history_id": history, "create_time": at, "update_time": at},
        )  # fmt: skip
        self.update("dinky_task", task, {"job_instance_id": instance})
        return instance

    def set_status(self, instance: int, status: str, at: datetime | None = None) -> None:
        """What Dinky's job refresh persists: the status, a finish time (``at``) once done."""
        values: dict = {"status": status}
        if status in DONE:
            values["finish_time"] = at or datetime.now()
        if status == "FAILED":
            values["error"] = "org.apache.flink.runtime.JobException: Recovery is suppressed"
        self.update("dinky_job_instance", instance, values)

    def delete_task(self, task: int) -> None:
        """1.3.0's soft delete (``is_delete``); before it, the row goes."""
        if self.generation == "1.3":
            self.update("dinky_task", task, {"is_delete": True})
        else:
            self.execute("DELETE FROM dinky_task WHERE id = %s", (task,))
