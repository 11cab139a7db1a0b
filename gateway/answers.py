"""What the recorder reads from the SQL Gateway's JSON bodies, tolerantly: anything it cannot read
(not JSON, another shape, a binary body) reads as nothing, never as an error.

The shapes, from Flink's ``flink-sql-gateway`` REST handlers and messages:

* open session: request ``{"sessionName": …, "properties": {k: v}}``, answer ``{"sessionHandle": …}``;
* configure-session: request ``{"statement": …}``; statements: ``{"statement": …, "executionConfig": …}``,
  answer ``{"operationHandle": …}``; v4 scripts: ``{"script": …}``, answer ``{"operationHandle": …}``;
* fetch results: ``{"resultType", "isQueryResult", "jobID", "resultKind", "results", "nextResultUri"}``
  on v2+ (``jobID`` null until the job is known); v1 has no ``jobID``: an INSERT's result is one
  row of the one column ``job id`` (``results.columns[i].name``, ``results.data[0].fields[i]``);
* info: ``{"productName": "Apache Flink", "version": "2.3.0"}``.
"""

from __future__ import annotations

import json
import re
from typing import Any

_JOB_ID = re.compile(r"[0-9a-fA-F]{32}")
_JOB_ID_COLUMN = "job id"


def json_object(body: bytes | None) -> dict[str, Any] | None:
    if not body:
        return None
    try:
        value = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def text_field(body: bytes | None, name: str) -> str | None:
    value = (json_object(body) or {}).get(name)
    return value if isinstance(value, str) else None


def properties(body: bytes | None) -> dict[str, str]:
    """An open-session request's ``properties`` (values as strings, as the gateway reads them)."""
    value = (json_object(body) or {}).get("properties")
    if not isinstance(value, dict):
        return {}
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in value.items()}


def job_id(body: bytes | None) -> str | None:
    """The Flink job id a fetch-results answer reveals: ``jobID`` (v2+), else the v1 ``job id`` row."""
    answer = json_object(body)
    if answer is None:
        return None
    found = answer.get("jobID")
    if isinstance(found, str) and _JOB_ID.fullmatch(found):
        return found.lower()
    results = answer.get("results")
    if not isinstance(results, dict):
        return None
    columns, data = results.get("columns"), results.get("data")
    if not isinstance(columns, list) or not isinstance(data, list) or len(data) != 1:
        return None
    names = [c.get("name") if isinstance(c, dict) else None for c in columns]
    if _JOB_ID_COLUMN not in names:
        return None
    row = data[0]
    fields = row.get("fields") if isinstance(row, dict) else None
    index = names.index(_JOB_ID_COLUMN)
    if not isinstance(fields, list) or index >= len(fields):
        return None
    value = fields[index]
    return value.lower() if isinstance(value, str) and _JOB_ID.fullmatch(value) else None


def flink_version(body: bytes | None) -> str | None:
    version = text_field(body, "version")
    return version.strip() if version and version.strip() else None
