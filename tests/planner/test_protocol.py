"""The compile protocol's records (planner.protocol) are what the request builder sends: every key
it writes is one the records name, and every key they require is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from planlineage import script
from planlineage.flink_versions import supported
from planlineage.planner import protocol
from planlineage.planner.provisioned import Provisioned
from planlineage.planner.request import build_request
from planlineage.planner.warm_up import TRAINING_SCRIPTS, WARM_UP

#: A stood-in catalog (its INSERTs are sent with their parts), a function, a schema from the rules.
SCRIPT = """
CREATE CATALOG lake WITH ('type' = 'no-such-catalog');
CREATE FUNCTION enrich AS 'com.example.Enrich';
CREATE TABLE s (a INT, b STRING) WITH ('connector' = 'datagen');
INSERT INTO lake.db.out (a, b) SELECT a, enrich(b) FROM s;
"""


def keys_fit(record: dict, kind: type) -> None:
    assert set(record) <= set(kind.__annotations__), (kind.__name__, set(record) - set(kind.__annotations__))
    assert kind.__required_keys__ <= set(record), (kind.__name__, kind.__required_keys__ - set(record))


@pytest.mark.parametrize("sql", [SCRIPT, *TRAINING_SCRIPTS])
def test_a_built_request_is_a_compile_request(sql, tmp_path: Path):
    provisioned = Provisioned(supported()["1.20"], tmp_path)
    request, _, _ = build_request(script.split(sql), provisioned, [], table_schemas={"lake.db.out": {"a": "INT"}})
    keys_fit(request, protocol.CompileRequest)
    for statement in request["statements"]:
        keys_fit(statement, protocol.StatementRequest)
        for part in statement.get("inserts", []):
            keys_fit(part, protocol.InsertPart)
    for hint in request.get("function_hints", {}).values():
        keys_fit(hint, protocol.FunctionHint)
    if sql is SCRIPT:  # every optional part is exercised once
        (insert,) = [s for s in request["statements"] if "inserts" in s]
        assert insert["inserts"] == [
            {"target": "lake.db.out", "columns": ["a", "b"], "query": "SELECT a, enrich(b) FROM s"}
        ]
        assert set(request["function_hints"]) == {"enrich"}
        assert request["table_schemas"] == {"lake.db.out": {"a": "INT"}}


def test_the_warm_up_job_is_a_compile_request():
    keys_fit(WARM_UP, protocol.CompileRequest)
    for statement in WARM_UP["statements"]:
        keys_fit(statement, protocol.StatementRequest)
