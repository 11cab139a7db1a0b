"""What Spark's analyze server is asked for one script: its statements, each with its line (Flink's
counterpart: planner/request.py). Spark parses every statement itself, so nothing is left out."""

from __future__ import annotations

from typing import TypedDict

from planlineage import script as sql_script


class StatementRequest(TypedDict):
    sql: str
    line: int  # where it starts in the script, for the errors the user reads


class ParseRequest(TypedDict):
    statements: list[StatementRequest]


def build_request(statements: list[sql_script.Statement]) -> ParseRequest:
    return {"statements": [{"sql": s.sql, "line": s.line} for s in statements]}
