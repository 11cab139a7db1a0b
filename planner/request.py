"""What the compile server is asked for one script: the statements it runs, and how.

Kept apart from the compile itself so that the regression fixtures, the cold path and the warm
planners all send the very same request for the same script.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from planlineage import script as sql_script
from planlineage.planner.function_usage import function_hints
from planlineage.planner.insert_parts import inserts
from planlineage.planner.protocol import CompileRequest, StatementRequest
from planlineage.planner.provisioned import Provisioned

#: Planning these connectors touches external systems (the filesystem connector lists paths and
#: partitions), so they are always compiled through the stand-in; identity uses their options.
ALWAYS_STAND_IN = ["filesystem", "hudi", "hive", "iceberg", "paimon"]


#: Adaptive batch joins cannot be serialised into a plan (2.x: "Can not serialize ExecNode ...
#: Missing type"); they are decided at run time anyway and do not change which tables are read.
BATCH_PLAN_OPTIONS = {
    "table.optimizer.adaptive-broadcast-join.strategy": "none",
    "table.optimizer.skewed-join-optimization.strategy": "none",
}


def build_request(
    statements: list[sql_script.Statement],
    provisioned: Provisioned,
    jars: list[str],
    replan_batch: bool = False,
    table_schemas: Mapping[str, Mapping[str, str]] | None = None,
) -> tuple[CompileRequest, list[sql_script.Statement], Literal["streaming", "batch"]]:
    """The compile server request for a script, the statements it sends, and the runtime mode.

    A batch job on a version whose batch planner cannot compile plans (or whose batch plan failed
    to compile: `replan_batch`) is planned in streaming mode with every table through the
    stand-in, whose sinks accept any changelog: the tables read are the same, and nothing depends
    on what the real sinks could consume.
    """
    mode = sql_script.runtime_mode(statements)
    replan = mode == "batch" and (replan_batch or not provisioned.flink.batch_compiled_plan)
    sent = []
    for statement in statements:
        if statement.kind in sql_script.NOT_EXECUTED:
            continue
        if (
            replan
            and statement.kind is sql_script.Kind.SET
            and statement.set_pair
            and statement.set_pair[0].strip() == "execution.runtime-mode"
        ):
            continue
        sent.append(statement)
    # A catalog may be stood in (no jar for its type): its undeclared sinks take the schema of the
    # query feeding them, so the planner is told which query feeds which target.
    catalogs = any(s.words[:2] == ["CREATE", "CATALOG"] for s in sent)
    request: CompileRequest = {
        "statements": [_statement(s, catalogs) for s in sent],
        "jars": [str(Path(j).resolve()) for j in jars],
        "config": {
            "execution.runtime-mode": "streaming" if replan else mode,
            **(BATCH_PLAN_OPTIONS if mode == "batch" and not replan else {}),
        },
        "batch": mode == "batch" and not replan,
        "forced_stand_ins": ["*"] if replan else ALWAYS_STAND_IN,
        # What a function the analyser cannot load must look like (see function_usage).
        "function_hints": function_hints([s.for_planner() for s in sent]),
        # Schemas of stood-in catalogs' tables given in the rules file (identity config `[tables.*]`).
        "table_schemas": dict(table_schemas or {}) if catalogs else {},
    }
    return request, sent, mode


def _statement(statement: sql_script.Statement, catalogs: bool) -> StatementRequest:
    sent: StatementRequest = {"sql": statement.for_planner(), "line": statement.line, "kind": _kind(statement)}
    if catalogs and statement.kind in sql_script.SINKS:
        sent["inserts"] = inserts(statement.for_planner())
    return sent


def _kind(statement: sql_script.Statement) -> str:
    """What a statement is, for the planner: "create-table" for CREATE [TEMPORARY] TABLE without AS
    (the JVM converts a job's leading run of them on two threads: see ParallelDeclarations)."""
    words = statement.words
    table = words[:2] == ["CREATE", "TABLE"] or words[:3] == ["CREATE", "TEMPORARY", "TABLE"]
    if statement.kind is sql_script.Kind.DDL and table:
        return "create-table"
    return statement.kind.value
