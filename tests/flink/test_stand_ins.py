"""What the analyser does not have (UDF classes, Python functions, sink abilities of newer
versions) must not cost a job its lineage: the real planner of the version under test."""

from pathlib import Path

import pytest

from planlineage.pipeline import ExtractError, extract

ROOT = Path(__file__).parent.parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
SHARED = (FIXTURES / "sql" / "_tables.sql").read_text()
D = "default_catalog.default_database."
KAFKA = "'connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = 'k:9092', 'format' = 'json'"


def pairs(lineage):
    return {s.table: [i.table for i in s.inputs] for s in lineage.sinks}


def test_every_function_kind_is_stood_in_with_its_kind_and_type(planner):
    text = SHARED + (FIXTURES / "sql" / "stand_in_functions.sql").read_text()
    lineage = extract(text, planner=planner)
    stood = {s.name.split(".")[-1]: s for s in lineage.stand_ins}
    assert {name: (s.function_kind, s.result_type) for name, s in stood.items()} == {
        "mask": ("scalar", "STRING"),
        "is_vip": ("scalar", "BOOLEAN"),  # a WHERE condition
        "weighted": ("aggregate", "DOUBLE"),  # the type of the sink column it lands in
        "py_score": ("scalar", "DOUBLE"),
        "split_tags": ("table", "ROW<f0 STRING, f1 STRING>"),  # AS t(tag, score)
        "py_explode": ("table", "ROW<f0 STRING>"),
    }
    assert stood["py_score"].language == "PYTHON" and "Python" in stood["py_score"].reason
    assert stood["mask"].class_name == "com.acme.udf.Mask" and "com.acme.udf.Mask" in stood["mask"].reason
    assert stood["is_vip"].name == "is_vip"  # a system function has no catalog
    document = lineage.to_json_dict()
    assert document["stand_ins"][0]["class"] == "com.acme.udf.Mask"


def test_a_function_whose_class_is_present_is_the_real_one(planner):
    # Flink's own classes are on the classpath: no stand-in, and the job compiles for real.
    text = (
        f"CREATE TABLE s (a STRING) WITH ({KAFKA});"
        f"CREATE TABLE o (a STRING) WITH ({KAFKA});"
        "CREATE TEMPORARY FUNCTION up AS 'org.apache.flink.table.functions.BuiltInFunctionDefinitions';"
        "INSERT INTO o SELECT a FROM s;"
    )
    lineage = extract(text, planner=planner)
    assert lineage.stand_ins == [] and "stand_ins" not in lineage.to_json_dict()


def test_a_cast_gives_the_stand_in_its_type(planner):
    text = (
        f"CREATE TABLE s (a STRING) WITH ({KAFKA});"
        f"CREATE TABLE o (n DECIMAL(10, 2), m INT) WITH ({KAFKA});"
        "CREATE FUNCTION parse_amount AS 'com.acme.ParseAmount';"
        "CREATE FUNCTION score AS 'com.acme.Score';"
        "INSERT INTO o SELECT CAST(parse_amount(a) AS DECIMAL(10, 2)), score(a, 1) + 1 FROM s;"
    )
    with pytest.raises(ExtractError) as raised:
        extract(text, planner=planner)
    # `score(a, 1) + 1`: no context types it, and STRING + INT is Flink's own refusal, said as such
    assert "line 1" in str(raised.value) and "pass the jar" not in str(raised.value)
    lineage = extract(text.replace("score(a, 1) + 1", "CAST(score(a, 1) AS INT) + 1"), planner=planner)
    assert {s.name.split(".")[-1]: s.result_type for s in lineage.stand_ins} == {
        "parse_amount": "DECIMAL(10, 2)",
        "score": "INT",
    }
    assert pairs(lineage) == {D + "o": [D + "s"]}


def test_compile_plan_gives_the_sinks_it_carries(planner):
    text = SHARED + (FIXTURES / "sql" / "compile_plan.sql").read_text()
    lineage = extract(text, planner=planner)
    assert pairs(lineage) == {D + "out_a": [D + "orders"], D + "out_b": [D + "refunds"], D + "out_s": [D + "customers"]}
    assert not Path("/tmp/planlineage-never-written.json").exists()
    assert not Path("/tmp/planlineage-never-written-2.json").exists()


def test_execute_plan_is_not_run_and_says_its_sinks_are_missing(planner):
    text = (
        SHARED
        + "EXECUTE PLAN '/tmp/planlineage-some-plan.json';\nINSERT INTO out_a SELECT order_id, amount FROM orders;"
    )
    lineage = extract(text, planner=planner)
    assert pairs(lineage) == {D + "out_a": [D + "orders"]}
    (warning,) = lineage.warnings
    assert "EXECUTE PLAN" in warning and "not in this lineage" in warning


def test_a_parse_error_is_one_paragraph(planner):
    with pytest.raises(ExtractError) as raised:
        extract(
            "CREATE TABLE a (x INT) WITH ('connector' = 'datagen');\nINSERT INTO a SELEC x FROM a;", planner=planner
        )
    message = str(raised.value)
    assert "line 2" in message and "Was expecting" not in message and len(message) < 400
    assert "\n" not in message


def test_sources_may_declare_source_watermarks(planner):
    text = (
        f"CREATE TABLE s (a STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS SOURCE_WATERMARK()) WITH ({KAFKA});"
        f"CREATE TABLE o (a STRING) WITH ({KAFKA});"
        "INSERT INTO o SELECT a FROM s;"
    )
    assert pairs(extract(text, planner=planner)) == {D + "o": [D + "s"]}


def test_bucketed_sinks_compile_through_the_stand_in(planner, provisioned):
    if provisioned.flink.minor in ("1.18", "1.19"):
        pytest.skip("DISTRIBUTED BY exists from Flink 1.20")
    text = (
        f"CREATE TABLE s (k STRING, v INT) WITH ({KAFKA});"
        f"CREATE TABLE b1 (k STRING, v INT) DISTRIBUTED BY HASH(k) INTO 4 BUCKETS WITH ({KAFKA});"
        "CREATE TABLE b2 (k STRING, v INT) DISTRIBUTED BY RANGE(v) WITH ('connector' = 'acme-store');"
        "CREATE TABLE b3 (k STRING, v INT) DISTRIBUTED INTO 3 BUCKETS WITH ('connector' = 'acme-store');"
        "EXECUTE STATEMENT SET BEGIN INSERT INTO b1 SELECT k, v FROM s; INSERT INTO b2 SELECT k, v FROM s;"
        " INSERT INTO b3 SELECT k, v FROM s; END;"
    )
    lineage = extract(text, planner=planner)
    assert pairs(lineage) == {D + "b1": [D + "s"], D + "b2": [D + "s"], D + "b3": [D + "s"]}
    assert [d.namespace for d in lineage.sinks[0].datasets] == ["kafka://k:9092"]
