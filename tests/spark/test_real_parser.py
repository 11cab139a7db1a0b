"""Spark's own parser of the version under test, live: the corpus, the recorded fixtures, errors, the CLI."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from planlineage import script as sql_script
from planlineage.pipeline import ExtractError
from planlineage.spark import extract
from planlineage.spark.request import build_request
from planlineage.spark.stages import lineage_of

from .conftest import VERSION

SPARK = Path(__file__).parent.parent / "fixtures" / "spark"
EXPECTED = json.loads((SPARK / "expected.json").read_text())["cases"]


def summary(lineage):
    def table(t):
        return {"table": t.table, "connector": t.connector, "datasets": [f"{d.namespace} {d.name}" for d in t.datasets]}

    def change(s):  # openlineage-spark's lifecycleStateChange of the output, when it has one
        return {"lifecycle": s.lifecycle_state_change} if s.lifecycle_state_change else {}

    return [{**table(s), **change(s), "inputs": [table(i) for i in s.inputs]} for s in lineage.sinks]


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_corpus(parser, case):
    script = (SPARK / "sql" / f"{case}.sql").read_text()
    lineage = extract(script, conf=EXPECTED[case]["conf"], parser=parser)
    assert lineage.spark_version == parser.version
    assert summary(lineage) == EXPECTED[case]["sinks"]
    assert len(lineage.warnings) == EXPECTED[case]["warnings"]


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_recorded_fixture_is_what_this_spark_parses(parser, case):
    """The unit tests replay recorded parses: they must still be what Spark answers."""
    minor = ".".join(VERSION.split(".")[:2])
    script = (SPARK / "sql" / f"{case}.sql").read_text()
    statements = sql_script.split(script)
    live = parser.parse(build_request(statements))
    recorded = json.loads((SPARK / "plans" / minor / f"{case}.json").read_text())
    assert [s["class"] for s in live["statements"]] == [s["class"] for s in recorded["statements"]]
    conf = EXPECTED[case]["conf"]
    assert lineage_of(live, statements, script, conf=conf, columns=True) == lineage_of(
        recorded, statements, script, conf=conf, columns=True
    )


def test_broken_script_names_statement_line_and_reason(parser):
    script = "SET spark.sql.shuffle.partitions = 4;\n\nCREATE TEMPORARY VIEW v AS\nSELECT 1 AS a;\n\nINSERT INTO t\n  SELECT a\n  FROM v WHERE a = ;\n"
    with pytest.raises(ExtractError) as raised:
        extract(script, parser=parser)
    assert raised.value.line == 8
    assert str(raised.value).startswith(
        "statement at line 6 (INSERT INTO t SELECT a FROM v WHERE a =) cannot be parsed: line 8: "
    )


def test_jobs_do_not_leak_into_each_other(parser):
    first = "CREATE TEMPORARY VIEW src USING parquet OPTIONS (path '/data/a');\nINSERT INTO out SELECT * FROM src;"
    second = "INSERT INTO out SELECT * FROM src;"
    assert extract(first, parser=parser).sinks[0].inputs[0].table == "src"
    # The second job never declared `src`: it is a catalog table, not the first job's view.
    assert extract(second, parser=parser).sinks[0].inputs[0].table == "spark_catalog.default.src"


def test_secret_never_in_an_error(parser):
    script = "CREATE TEMPORARY VIEW v USING jdbc OPTIONS (url 'jdbc:mysql://h/db', password 'FAKE-pw-123456' dbtable 'x' WHERE);"
    with pytest.raises(ExtractError) as raised:
        extract(script, parser=parser)
    assert "FAKE-pw-123456" not in str(raised.value)


def test_no_secret_in_the_jvm_log(parser, provisioned):
    script = (
        "CREATE TEMPORARY VIEW v (a INT) USING jdbc OPTIONS (url 'jdbc:mysql://h/db', dbtable 'x', "
        "password 'FAKE-pw-7654321');\n"
        "CREATE TABLE t2 (a INT) USING parquet LOCATION '/x';\n"
        "INSERT INTO t2 SELECT nope FROM v WHERE 'FAKE-literal-7654321' = 'x';\n"
    )
    lineage = extract(script, parser=parser)
    assert any("Spark's analyzer rejects it" in w for w in lineage.warnings)
    assert "FAKE-pw-7654321" not in json.dumps(lineage.to_json_dict())
    log = provisioned.log.read_text(errors="replace")
    assert "FAKE-pw-7654321" not in log and "FAKE-literal-7654321" not in log


def test_cli_cold(tmp_path):
    job = tmp_path / "job.sql"
    job.write_text((SPARK / "sql" / "views_ctes_jdbc.sql").read_text())
    command = [
        sys.executable,
        "-P",
        "-m",
        "planlineage",
        "extract",
        str(job),
        "--engine",
        "spark",
        "--spark-version",
        VERSION,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["spark_version"].startswith(VERSION) and "flink_version" not in document
    assert [s["table"] for s in document["sinks"]] == ["spark_catalog.sales.enriched"]
    job.write_text("INSERT INTO t SELEC 1;")
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert "statement at line 1" in done.stderr and "PARSE_SYNTAX_ERROR" in done.stderr
