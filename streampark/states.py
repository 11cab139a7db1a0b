"""StreamPark's state codes, per engine, and what the lifecycle's ``state`` function is told.

``FlinkAppStateEnum`` and ``SparkAppStateEnum`` give the same names different numbers (Flink
RUNNING 5, Spark RUNNING 6), so a code is always read with its engine.  The lifecycle is given the
enum *name*; it maps FINISHED/SUCCEEDED → COMPLETE, FAILED/LOST/KILLED/TERMINATED → FAIL,
CANCELED → ABORT, RUNNING → RUNNING and ignores the rest (lifecycle/runs.py), exactly as for a
platform calling ``planlineage state``.
"""

from __future__ import annotations

FLINK = "flink"
SPARK = "spark"

FLINK_STATES: dict[int, str] = {
    0: "ADDED",
    1: "INITIALIZING",
    2: "CREATED",
    3: "STARTING",
    4: "RESTARTING",
    5: "RUNNING",
    6: "FAILING",
    7: "FAILED",
    8: "CANCELLING",
    9: "CANCELED",
    10: "FINISHED",
    11: "SUSPENDED",
    12: "RECONCILING",
    13: "LOST",
    14: "MAPPING",
    15: "OTHER",
    16: "REVOKED",
    17: "SILENT",
    18: "TERMINATED",
    19: "POS_TERMINATED",
    20: "SUCCEEDED",
    -9: "KILLED",
}

SPARK_STATES: dict[int, str] = {
    0: "ADDED",
    1: "NEW",
    2: "NEW_SAVING",
    3: "STARTING",
    4: "SUBMITTED",
    5: "ACCEPTED",
    6: "RUNNING",
    7: "FINISHED",
    8: "FAILED",
    9: "LOST",
    10: "MAPPING",
    11: "OTHER",
    12: "REVOKED",
    13: "STOPPING",
    14: "SUCCEEDED",
    -9: "KILLED",
}

#: States of a job that is alive on its cluster: an app found in one of them when the watcher
#: first starts is adopted (START, and RUNNING once it runs).  STARTING is not here: its START
#: row in the operation log is still to come and starts the run.
ALIVE = {
    FLINK: {"INITIALIZING", "CREATED", "RESTARTING", "RUNNING", "FAILING", "SUSPENDED", "RECONCILING", "MAPPING"},
    SPARK: {"NEW", "NEW_SAVING", "SUBMITTED", "ACCEPTED", "RUNNING"},
}

#: Operation-log codes (Flink ``OperationEnum`` / 2.1.x ``Operation``; Spark ``SparkOperationEnum``).
OPERATION_START = 1
#: ``SparkOperationEnum.CANCEL``: the row the console writes once a stop of a Spark app succeeded.
SPARK_OPERATION_STOP = 2

#: ``t_app_log.job_type`` (``EngineTypeEnum``); ``t_flink_log`` has no such column (Flink only).
LOG_ENGINES = {1: FLINK, 2: SPARK}

#: ``job_type`` of a SQL application: ``FlinkJobType.FLINK_SQL`` (2.1.x ``DevelopmentMode``) and
#: ``SparkJobType.SPARK_SQL`` are both 2.
SQL_JOB_TYPE = 2

#: Flink deploy modes (``FlinkDeployMode`` / 2.1.x ``ExecutionMode``).
YARN_APPLICATION = 4
KUBERNETES_MODES = {5, 6}


def state_name(engine: str, code: int | None) -> str:
    """The enum name of a stored code; unknown codes are OTHER, as the console reads them."""
    table = FLINK_STATES if engine == FLINK else SPARK_STATES
    if code is None:
        return "OTHER"
    return table.get(int(code), "OTHER")


def lost(engine: str, code: int | None) -> bool:
    return state_name(engine, code) == "LOST"
