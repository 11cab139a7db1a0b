"""The compile protocol's records, as Python sees them on both of its sides: what a caller asks a
compile server (`CompileRequest`, built by planner.request) and what it answers (`CompileAnswer`,
read by the pipeline and handed on unread by a warm planner), and the warm planner's own `extract`
(`ExtractRequest` / `ExtractAnswer`: planner.warm_client asks, planner.warm_extract answers).

The compile server's JVM reads and writes the same records as JSON, one object a line
(planner/child/compile_server.py says how). Typing only: the command line's thin path imports this
module, so it must stay as light as `typing`. Its annotations are evaluated (no `from __future__
import annotations`): a TypedDict learns which keys are NotRequired from them at run time.
"""

from collections.abc import Mapping
from typing import Any, Literal, NotRequired, TypedDict


class InsertPart(TypedDict):
    """One INSERT of a statement, read from its text (planner.insert_parts)."""

    target: str
    columns: list[str] | None
    query: str


class StatementRequest(TypedDict):
    sql: str  # as the planner runs it (planlineage.script.Statement.for_planner)
    line: int  # where it starts in the script, for the errors the user reads
    kind: NotRequired[str]  # planlineage.script.Kind's value, or "create-table"
    inserts: NotRequired[list[InsertPart]]  # with stood-in catalogs only


class FunctionHint(TypedDict):
    """What a function the planner cannot load must look like (planner.function_usage)."""

    kind: str
    type: str | None
    fields: list[str]


class CompileRequest(TypedDict):
    statements: list[StatementRequest]
    config: dict[str, str]
    batch: bool  # compiled by the batch planner
    forced_stand_ins: list[str]  # connectors always compiled through the stand-in; ["*"]: every one
    jars: NotRequired[list[str]]  # absolute paths, added in this order
    function_hints: NotRequired[dict[str, FunctionHint]]
    table_schemas: NotRequired[Mapping[str, Mapping[str, str]]]  # stood-in catalogs' tables from the rules file


class CompileError(TypedDict):
    statement: int | None  # the index into the request's statements, None for the job as a whole
    message: str
    guessed_tables: NotRequired[bool]  # the statement used a table of a stood-in catalog
    jar: NotRequired[str]  # the jar that could not be added


class Timings(TypedDict):
    compile_ms: float
    sink_sql_ms: float
    server_ms: float


class CompileAnswer(TypedDict):
    id: NotRequired[int]  # the child's own numbering of requests (planlineage.line_child)
    ok: bool
    tables: NotRequired[dict[str, dict[str, Any]]]  # catalog description per unquoted identifier
    kinds: NotRequired[list[str]]
    stand_ins: NotRequired[list[dict[str, Any]]]
    plan: NotRequired[dict[str, Any] | None]  # the CompiledPlan JSON
    error: NotRequired[CompileError]
    timings: NotRequired[Timings]
    converted_alongside: NotRequired[int]
    reused_environment: NotRequired[bool]


Format = Literal["json", "table", "dot"]


class ExtractRequest(TypedDict):
    """What the command line sends a warm planner: the script's text and its `extract` options,
    paths made absolute (the warm planner runs elsewhere)."""

    script: str
    name: str  # the script as the user named it (the DOT graph's title)
    flink_version: str | None
    jars: list[str]
    rules: str | None
    profile: str
    metalake: str | None
    columns: bool
    format: Format
    max_bytes: int  # the command's size cap (its setting or environment)


class UserError(TypedDict):
    kind: str  # the error's class name in planlineage.errors
    message: str
    line: int | None


class ExtractAnswer(TypedDict):
    ok: bool
    output: NotRequired[str]  # ok: what the command prints
    error: NotRequired[UserError]  # not ok: what the command reports, as it would have
    fallback: NotRequired[str]  # not ok: why the command must do the work itself
