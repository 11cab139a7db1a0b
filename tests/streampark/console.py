"""The tests' stand-in for StreamPark's console: it writes StreamPark's rows the way the console's
services do, one statement at a time, through an
administrator connection to the test database.

``start()`` follows ``FlinkApplicationActionServiceImpl.start``: ``starting()`` (state 3,
option_time), ``toEffective`` (the candidate SQL becomes effective, candidate cleared), then on
success ``processForSuccess`` (job_id, start_time, end_time NULL, tracking) and the START row of
the operation log.  The state then moves as ``FlinkAppHttpWatcher`` writes it (``set_state``).
"""

from __future__ import annotations

import itertools
import uuid
from datetime import datetime

from schemas import add_lineage_enable, ddl, quote

from planlineage.streampark.sql import encode

FLINK_SQL, FLINK_JAR = 2, 1
STARTING, RUNNING, FAILED, CANCELLING, CANCELED, FINISHED, LOST = 3, 5, 7, 8, 9, 10, 13
START, CANCEL = 1, 3
# SparkAppStateEnum, SparkJobType and SparkOperationEnum: the same names, other numbers.
SPARK_STARTING, SPARK_ACCEPTED, SPARK_RUNNING, SPARK_FINISHED, SPARK_FAILED = 3, 5, 6, 7, 8
SPARK_LOST, SPARK_STOPPING, SPARK_KILLED = 9, 13, -9
SPARK_JAR, SPARK_SQL = 1, 2
SPARK_CANCEL = 2
_ids = itertools.count(100000)


class Console:
    def __init__(self, server, database: str, generation: str):
        self.server, self.database, self.generation = server, database, generation
        self.dialect = server.dialect
        self.conn = server.admin(database)

    # -- plumbing ---------------------------------------------------------------------------

    def q(self, name: str) -> str:
        return quote(self.dialect, name)

    def execute(self, sql: str, params: tuple = ()):
        if self.dialect == "mysql":
            with self.conn.cursor() as cursor:
                cursor.execute(sql, params)
                return cursor.fetchall() if cursor.description else None
        cursor = self.conn.execute(sql, params)
        return cursor.fetchall() if cursor.description else None

    def insert(self, table: str, values: dict) -> None:
        cols = ", ".join(self.q(c) for c in values)
        marks = ", ".join(["%s"] * len(values))
        self.execute(f"INSERT INTO {self.q(table)} ({cols}) VALUES ({marks})", tuple(values.values()))

    def update(self, table: str, key: int, values: dict, column: str = "id") -> None:
        sets = ", ".join(f"{self.q(c)} = %s" for c in values)
        self.execute(f"UPDATE {self.q(table)} SET {sets} WHERE {self.q(column)} = %s", (*values.values(), key))

    def new_id(self, table: str) -> int:
        return int(self.execute(f"SELECT MAX(id) AS m FROM {self.q(table)}")[0][0] or 0)

    def close(self) -> None:
        self.conn.close()

    # -- install ----------------------------------------------------------------------------

    def load_schema(self, lineage_enable: bool = False, spark: bool = False) -> None:
        for statement in ddl(self.generation, self.dialect, spark):
            self.execute(statement)
        if lineage_enable:
            for statement in add_lineage_enable(self.dialect):
                self.execute(statement)

    @property
    def log_table(self) -> str:
        return "t_flink_log" if self.generation == "2.1.x" else "t_app_log"

    @property
    def deploy_column(self) -> str:
        return "execution_mode" if self.generation == "2.1.x" else "deploy_mode"

    def env(self, version: str = "1.20.0", default: bool = True) -> int:
        self.insert(
            "t_flink_env",
            {"flink_name": f"flink-{version}-{uuid.uuid4().hex[:6]}", "flink_home": f"/opt/flink-{version}",
             "version": version, "scala_version": "2.12", "flink_conf": encode("jobmanager.memory.process.size: 1g"),
             "is_default": default, "create_time": datetime.now()},
        )  # fmt: skip
        return self.new_id("t_flink_env")

    def variable(self, team: int, code: str, value: str, secret: bool = False) -> None:
        self.insert(
            "t_variable",
            {"variable_code": code, "variable_value": value, "creator_id": 100000, "team_id": team,
             "desensitization": secret, "create_time": datetime.now(), "modify_time": datetime.now()},
        )  # fmt: skip

    def setting(self, key: str, value: str | None) -> None:
        self.update("t_setting", key, {"setting_value": value}, column="setting_key")

    # -- applications -----------------------------------------------------------------------

    def create_app(
        self,
        name: str,
        sql: str,
        *,
        team: int = 100000,
        env: int | None = None,
        job_type: int = FLINK_SQL,
        deploy_mode: int = 2,
        lineage_enable: bool | None = None,
        dependency: str | None = None,
        at: datetime | None = None,
    ) -> int:
        """``FlinkApplicationManageServiceImpl.create``: state ADDED, and the SQL as a candidate
        (``at``: created then, for a history replay)."""
        app = next(_ids)
        values = {
            "id": app, "team_id": team, "job_type": job_type, self.deploy_column: deploy_mode, "app_type": 1,
            "job_name": name, "version_id": env, "state": 0, "option_state": 0, "release": 1, "build": True,
            "tracking": 0, "create_time": datetime.now(), "modify_time": datetime.now(),
        }  # fmt: skip
        if lineage_enable is not None:
            values["lineage_enable"] = lineage_enable
        self.insert("t_flink_app", values)
        self.edit_sql(app, sql, dependency=dependency, at=at)
        return app

    def edit_sql(self, app: int, sql: str, dependency: str | None = None, at: datetime | None = None) -> int:
        """``FlinkSqlServiceImpl.create``: a new candidate version; the other rows' candidate cleared."""
        self.execute("UPDATE t_flink_sql SET candidate = 0 WHERE app_id = %s", (app,))
        version = int(self.execute("SELECT COUNT(*) FROM t_flink_sql WHERE app_id = %s", (app,))[0][0]) + 1
        self.insert(
            "t_flink_sql",
            {"app_id": app, "sql": encode(sql), "dependency": dependency, "version": version, "candidate": 1,
             "create_time": at or datetime.now()},
        )  # fmt: skip
        return self.new_id("t_flink_sql")

    def set_flag(self, app: int, enabled: bool) -> None:
        self.update("t_flink_app", app, {"lineage_enable": enabled})

    def _log(
        self, app: int, option: int, success: bool, cluster: str | None = None, at: datetime | None = None
    ) -> None:
        at = at or datetime.now()
        if self.generation == "2.1.x":
            values = {"app_id": app, "yarn_app_id": cluster, "job_manager_url": "http://jm:8081",
                      "success": success, "option_time": at, "option_name": option}  # fmt: skip
        else:
            values = {"app_id": app, "job_type": 1, "cluster_id": cluster, "tracking_url": "http://jm:8081",
                      "success": success, "create_time": at, "option_name": option, "user_id": 100000}  # fmt: skip
        if not success:
            values["exception"] = "org.apache.flink.client.program.ProgramInvocationException: could not submit"
        self.insert(self.log_table, values)

    def starting(self, app: int) -> None:
        """``starting()`` then ``toEffective``: state STARTING, the candidate SQL becomes effective."""
        self.update("t_flink_app", app, {"state": STARTING, "option_state": 3, "option_time": datetime.now()})
        rows = self.execute("SELECT id FROM t_flink_sql WHERE app_id = %s AND candidate > 0 ORDER BY id DESC", (app,))
        if rows:
            sql_id = rows[0][0]
            self.execute("DELETE FROM t_flink_effective WHERE app_id = %s AND target_type = 2", (app,))
            self.insert(
                "t_flink_effective",
                {"app_id": app, "target_type": 2, "target_id": sql_id, "create_time": datetime.now()},
            )
            self.execute("UPDATE t_flink_sql SET candidate = 0 WHERE app_id = %s", (app,))

    def submitted(self, app: int, job_id: str | None = None, at: datetime | None = None) -> str:
        """``processForSuccess``: the job id and times, then the START row (success); ``at``:
        when (a past start the history replay reads), else now."""
        job_id = job_id if job_id is not None else uuid.uuid4().hex
        self.update(
            "t_flink_app", app,
            {"job_id": job_id, "cluster_id": "application_1700000000000_0001", "job_manager_url": "http://jm:8081",
             "start_time": at or datetime.now(), "end_time": None, "tracking": 1, "option_state": 0},
        )  # fmt: skip
        self._log(app, START, True, "application_1700000000000_0001", at)
        return job_id

    def start(self, app: int, job_id: str | None = None, at: datetime | None = None) -> str:
        self.starting(app)
        return self.submitted(app, job_id, at)

    def submit_failed(self, app: int) -> None:
        """``processForException``: FAILED and a START row with success 0."""
        self.update("t_flink_app", app, {"state": FAILED, "option_state": 0})
        self._log(app, START, False)

    def set_state(self, app: int, state: int, at: datetime | None = None) -> None:
        """What ``FlinkAppHttpWatcher`` persists (``persistMetrics``): the state, an end time on an end."""
        values = {"state": state}
        if state in (FAILED, CANCELED, FINISHED):
            values["end_time"] = at or datetime.now()
        self.update("t_flink_app", app, values)

    def cancel(self, app: int, at: datetime | None = None) -> None:
        self.update("t_flink_app", app, {"state": CANCELLING, "option_state": 2, "option_time": at or datetime.now()})
        self._log(app, CANCEL, True, at=at)
        self.set_state(app, CANCELED, at)

    def add_column_lineage_enable(self) -> None:
        for statement in add_lineage_enable(self.dialect):
            self.execute(statement)

    # -- Spark (dev; MySQL DDL, or PostgreSQL with spark=True) -----------------------------------
    # SparkApplicationManageServiceImpl / SparkApplicationBuildPipelineServiceImpl /
    # SparkApplicationActionServiceImpl / SparkAppHttpWatcher on dev.

    def spark_env(self, version: str, defaults: str = "spark.master yarn", default: bool = True) -> int:
        """``SparkEnvServiceImpl.create``: the version ``spark-submit --version`` printed and the
        home's ``conf/spark-defaults.conf``, deflated (``SparkEnv.doSetSparkConf``)."""
        self.insert(
            "t_spark_env",
            {"spark_name": f"spark-{version}-{uuid.uuid4().hex[:6]}", "spark_home": f"/opt/spark-{version}",
             "version": version, "scala_version": "2.12", "spark_conf": encode(defaults), "is_default": default,
             "create_time": datetime.now()},
        )  # fmt: skip
        return self.new_id("t_spark_env")

    def create_spark_app(
        self,
        name: str,
        sql: str = "INSERT INTO t SELECT 1",
        *,
        properties: str | None = None,
        env: int | None = None,
        job_type: int = SPARK_SQL,
        lineage_enable: bool | None = None,
        team: int = 100000,
    ) -> int:
        """``create``: state ADDED, release NEED_RELEASE, the SQL as a NEW candidate."""
        app = next(_ids)
        values = {
            "id": app, "team_id": team, "job_type": job_type, "app_type": 3, "app_name": name, "deploy_mode": 2,
            "version_id": env, "app_properties": properties, "state": 0, "option_state": 0, "release": 1,
            "create_time": datetime.now(), "modify_time": datetime.now(),
        }  # fmt: skip
        if lineage_enable is not None:
            values["lineage_enable"] = lineage_enable
        self.insert("t_spark_app", values)
        self.execute("UPDATE t_spark_sql SET candidate = 0 WHERE app_id = %s", (app,))
        self.insert(
            "t_spark_sql",
            {"app_id": app, "sql": encode(sql), "version": 1, "candidate": 1, "create_time": datetime.now()},
        )
        return app

    def spark_release(self, app: int) -> None:
        """A passed build of an app that is not running: release DONE and ``toEffective`` (the
        candidate SQL becomes effective; a Spark start does not promote it, unlike Flink's)."""
        self.update("t_spark_app", app, {"release": 0, "option_state": 0})
        rows = self.execute("SELECT id FROM t_spark_sql WHERE app_id = %s AND candidate > 0 ORDER BY id DESC", (app,))
        if rows:
            self.execute("DELETE FROM t_spark_effective WHERE app_id = %s AND target_type = 4", (app,))
            self.insert(
                "t_spark_effective",
                {"app_id": app, "target_type": 4, "target_id": rows[0][0], "create_time": datetime.now()},
            )
            self.execute("UPDATE t_spark_sql SET candidate = 0 WHERE app_id = %s", (app,))

    def _spark_log(self, app: int, option: int, success: bool) -> None:
        cluster = f"application_1700000000000_{app}"
        values = {"app_id": app, "job_type": 2, "cluster_id": cluster, "tracking_url": "http://rm:8088",
                  "success": success, "create_time": datetime.now(), "option_name": option, "user_id": 100000}  # fmt: skip
        if not success:
            values["exception"] = "org.apache.spark.SparkException: could not submit"
        self.insert("t_app_log", values)

    def spark_start(self, app: int) -> None:
        """``start``: ``starting()`` (STARTING, option_time), then on the submit's success the
        cluster id and times, then the START row of the operation log."""
        self.update("t_spark_app", app, {"state": SPARK_STARTING, "option_time": datetime.now()})
        self.update(
            "t_spark_app", app,
            {"cluster_id": f"application_1700000000000_{app}", "start_time": datetime.now(), "end_time": None},
        )  # fmt: skip
        self._spark_log(app, START, True)

    def spark_submit_failed(self, app: int) -> None:
        """The submit threw: START row with success 0, FAILED, option state NONE."""
        self.update("t_spark_app", app, {"state": SPARK_STARTING, "option_time": datetime.now()})
        self._spark_log(app, START, False)
        self.update("t_spark_app", app, {"state": SPARK_FAILED, "option_state": 0})

    def spark_state(self, app: int, state: int) -> None:
        """What ``SparkAppHttpWatcher`` persists from YARN (``persistMetrics``)."""
        values = {"state": state}
        if state in (SPARK_FINISHED, SPARK_FAILED, SPARK_KILLED):
            values["end_time"] = datetime.now()
        self.update("t_spark_app", app, values)

    def spark_stop(self, app: int) -> None:
        """``cancel``: STOPPING, the CANCEL row once the stop succeeded, then YARN's KILLED."""
        self.update("t_spark_app", app, {"state": SPARK_STOPPING, "option_time": datetime.now()})
        self._spark_log(app, SPARK_CANCEL, True)
        self.spark_state(app, SPARK_KILLED)
