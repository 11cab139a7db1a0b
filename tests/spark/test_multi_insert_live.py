"""Multi-inserts, WITH before INSERT OVERWRITE DIRECTORY and trimmed folder names through Spark's
own parser of the version under test; on 3.5, the answer tests/sparkwalk replays is still it."""

import json
from pathlib import Path

import pytest

from planlineage import script as sql_script
from planlineage.spark.request import build_request
from planlineage.spark.stages import lineage_of

from .conftest import VERSION

RECORDED = Path(__file__).parent.parent / "sparkwalk" / "recorded"
SQL = (RECORDED / "multi_insert_and_directories.sql").read_text(encoding="utf-8")


def _live(parser):
    statements = sql_script.split(SQL)
    answer = parser.parse(build_request(statements))
    return answer, lineage_of(answer, statements, SQL, columns=True)


def test_multi_inserts_and_directories_pair_and_name_as_openlineage_spark(parser):
    _, document = _live(parser)
    sinks = {sink.table: sink for sink in document.sinks}
    named = {table: [(d.namespace, d.name) for d in sink.datasets] for table, sink in sinks.items()}
    assert named == {
        "spark_catalog.default.ids": [("s3://lake", "ids")],
        "spark_catalog.default.names": [("s3://lake", "names")],
        "csv.`s3a://lake/export/recent`": [("s3://lake", "export/recent")],
        "json.`s3a://lake/export/names/dt=2024-03-01`": [("s3://lake", "export/names")],
        "spark_catalog.default.daily": [("s3://lake", "daily")],
        "parquet.`s3a://lake/export/ids/2024/03/01`": [("s3://lake", "export/ids")],
    }
    for table in named:
        inputs = {(d.namespace, d.name) for i in sinks[table].inputs for d in i.datasets}
        expected = {("s3://lake", "landing/metrics")} if table.endswith("daily") else {("s3://lake", "src")}
        assert inputs == expected, table
    assert [(c.name, c.type) for c in sinks["csv.`s3a://lake/export/recent`"].schema_] == [
        ("id", "INT"),
        ("name", "STRING"),
    ]
    assert sinks["spark_catalog.default.names"].columns is not None


@pytest.mark.skipif(not str(VERSION).startswith("3.5"), reason="recorded on Spark 3.5 only")
def test_the_recorded_answer_is_what_this_spark_parses(parser):
    answer, document = _live(parser)
    recorded = json.loads((RECORDED / "multi_insert_and_directories.3.5.json").read_text(encoding="utf-8"))
    assert [s["class"] for s in answer["statements"]] == [s["class"] for s in recorded["statements"]]
    statements = sql_script.split(SQL)
    assert document == lineage_of(recorded, statements, SQL, columns=True)
