"""Each Spark target carries the statement(s) writing it (its job's SQL facet, as openlineage-spark's
is the statement it executes), read back from Spark's recorded answers: no JVM."""

from __future__ import annotations

import json
from pathlib import Path

from planlineage import script as sql_script
from planlineage.spark.stages import lineage_of

SPARK = Path(__file__).resolve().parents[1] / "fixtures" / "spark"


def replay(minor: str, case: str):
    answer = json.loads((SPARK / "plans" / minor / f"{case}.json").read_text())
    script = (SPARK / "sql" / f"{case}.sql").read_text()
    return lineage_of(answer, sql_script.split(script), script)


def test_each_target_has_its_own_statement_not_the_script():
    lineage = replay("3.5", "ctas_rtas")
    statements = {sink.table: sink.statement for sink in lineage.sinks}
    assert (
        statements["spark_catalog.default.managed_copy"]
        == "CREATE TABLE managed_copy USING orc AS SELECT * FROM staging.daily"
    )
    assert statements["spark_catalog.lake.summary"].startswith("CREATE OR REPLACE TABLE lake.summary USING iceberg")
    assert "managed_copy" not in statements["spark_catalog.staging.daily"]


def test_every_writing_target_of_every_case_knows_its_statement():
    for case in ("analyzed", "merge_paths", "v2_overwrite_append", "v2_row_level", "jdbc_write"):
        lineage = replay("3.5", case)
        assert lineage.sinks and all(sink.statement for sink in lineage.sinks), case
