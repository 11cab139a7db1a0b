"""The real Flink planner of the version under test, through the product's own provisioning."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixture_cases import lacks

from planlineage.pipeline import ExtractError, extract
from planlineage.planner.provision import find_java_tool

ROOT = Path(__file__).parent.parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text())["cases"]
SHARED = (FIXTURES / "sql" / "_tables.sql").read_text()
D = "default_catalog.default_database."
FAKE_SECRETS = ["kafka-FAKE-secret", "mysql-FAKE-secret", "pg-FAKE-secret", "cdc-FAKE-secret"]


def pairs(lineage):
    return {s.table: [i.table for i in s.inputs] for s in lineage.sinks}


def ids(table):
    return [(d.namespace, d.name) for d in table.datasets]


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_fixture_cases_give_the_same_lineage_live(planner, provisioned, case):
    if lacks(provisioned.flink.minor, case):  # CTAS: Flink 1.16+
        pytest.skip(lacks(provisioned.flink.minor, case))
    text = SHARED + "\n" + (FIXTURES / "sql" / f"{case}.sql").read_text()
    assert pairs(extract(text, planner=planner)) == EXPECTED[case]


def test_example_kafka_to_jdbc_enrichment(planner):
    lineage = extract((ROOT / "examples" / "kafka_to_jdbc_enrichment.sql").read_text(), planner=planner)
    assert lineage.runtime_mode == "streaming" and lineage.warnings == []
    (sink,) = lineage.sinks
    assert (sink.table, sink.connector, ids(sink)) == (
        D + "enriched_orders",
        "jdbc",
        [("postgres://warehouse.prod:5432", "analytics.sales.enriched_orders")],
    )
    assert [(i.table, i.connector, ids(i)) for i in sink.inputs] == [
        (D + "orders", "kafka", [("kafka://kafka-1.prod:9092", "orders")]),
        (D + "customers", "jdbc", [("mysql://mysql.prod:3306", "crm.customers")]),
    ]
    assert [c.name for c in sink.inputs[0].schema_] == ["order_id", "customer_id", "amount", "event_time"]
    assert sink.datasets[0].symlinks == []  # openlineage-flink's JDBC visitor attaches no TABLE symlink
    assert sink.inputs[0].datasets[0].symlinks == []  # a default_catalog table's name is none (issue #37)


def test_example_cdc_pipeline(planner):
    lineage = extract((ROOT / "examples" / "cdc_pipeline.sql").read_text(), planner=planner)
    (sink,) = lineage.sinks
    assert (sink.connector, ids(sink)) == ("upsert-kafka", [("kafka://kafka-1.prod:9092", "customer-totals")])
    assert [(i.connector, ids(i)) for i in sink.inputs] == [("mysql-cdc", [("mysql://mysql.prod:3306", "shop.orders")])]


def test_example_statement_set_keeps_per_sink_pairing(planner):
    lineage = extract((ROOT / "examples" / "statement_set.sql").read_text(), planner=planner)
    assert {s.table: (ids(s), [ids(i) for i in s.inputs]) for s in lineage.sinks} == {
        D + "click_counts": ([("s3://lake", "clicks/counts")], [[("kafka://kafka-1.prod:9092", "clicks")]]),
        D + "payment_archive": (
            [("hdfs://namenode:8020", "/archive/payments")],
            [[("kafka://kafka-1.prod:9092", "payments")]],
        ),
    }


def test_example_batch_job(planner):
    lineage = extract((ROOT / "examples" / "batch_daily_report.sql").read_text(), planner=planner)
    assert lineage.runtime_mode == "batch"
    (sink,) = lineage.sinks
    assert ids(sink) == [("clickhouse://ch.prod:8123", "reports.daily_sales")]
    assert [ids(i) for i in sink.inputs] == [
        [("s3://lake", "sales")],
        [("postgres://ref.prod:5432", "reference.public.countries")],
    ]


def test_unknown_connector_warns_and_gives_no_dataset(planner):
    lineage = extract(
        "CREATE TABLE q (a INT) WITH ('connector' = 'acme-queue', 'queue' = 'x');"
        "CREATE TABLE o (a INT) WITH ('connector' = 'blackhole');"
        "INSERT INTO o SELECT a FROM q;",
        planner=planner,
    )
    (sink,) = lineage.sinks
    assert sink.datasets == [] and sink.inputs[0].connector == "acme-queue" and sink.inputs[0].datasets == []
    assert len(lineage.warnings) == 1
    assert D + "q" in lineage.warnings[0] and "acme-queue" in lineage.warnings[0]


def test_script_features_real_users_write(planner):
    script = """
    SET table.exec.state.ttl = 1 h;
    RESET 'table.exec.state.ttl';
    CREATE CATALOG c2 WITH ('type' = 'generic_in_memory');
    CREATE DATABASE c2.db2;
    USE CATALOG c2;
    USE db2;
    CREATE TABLE base (id BIGINT, v STRING) WITH ('connector' = 'kafka', 'topic' = 'base',
      'properties.bootstrap.servers' = 'k:9092', 'format' = 'json');
    ALTER TABLE base SET ('topic' = 'base-altered');
    CREATE TABLE dst WITH ('connector' = 'kafka', 'topic' = 'dst', 'properties.bootstrap.servers' = 'k:9092', 'format' = 'json')
      LIKE base (EXCLUDING OPTIONS);
    SELECT * FROM base;
    EXPLAIN PLAN FOR SELECT * FROM base;
    SHOW TABLES;
    INSERT INTO dst SELECT id, UPPER(v) FROM base;
    """
    lineage = extract(script, planner=planner)
    (sink,) = lineage.sinks
    assert sink.table == "c2.db2.dst" and ids(sink) == [("kafka://k:9092", "dst")]
    assert [(i.table, ids(i)) for i in sink.inputs] == [("c2.db2.base", [("kafka://k:9092", "base-altered")])]


def test_a_script_without_sinks_has_no_sinks(planner):
    lineage = extract("CREATE TABLE t (a INT) WITH ('connector' = 'datagen'); SELECT * FROM t;", planner=planner)
    assert lineage.sinks == []


def test_syntax_error_names_the_statement_and_its_line(planner):
    with pytest.raises(ExtractError) as raised:
        extract(
            "CREATE TABLE t (a INT) WITH ('connector' = 'datagen');\n\nINSERT INTO nowhere SELECT a FROM t;",
            planner=planner,
        )
    message = str(raised.value)
    assert raised.value.line == 3 and "line 3" in message and "nowhere" in message


def test_compile_failure_is_blamed_on_its_statement_and_secrets_are_redacted(planner):
    script = (
        "CREATE TABLE s (a INT) WITH ('connector' = 'datagen', 'password' = 'hunter2-FAKE');\n"
        "CREATE TABLE k (a INT) WITH ('connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = 'k:1',"
        " 'format' = 'json');\n"
        "INSERT INTO k SELECT a FROM s;\n"
    )
    with pytest.raises(ExtractError) as raised:
        extract(script, planner=planner)
    message = str(raised.value)
    assert "line 3" in message and "hunter2-FAKE" not in message


def test_missing_udf_class_is_stood_in_with_the_type_of_its_sink_column(planner):
    script = (
        "CREATE TEMPORARY FUNCTION enrich AS 'com.acme.udf.Enrich';\n"
        "CREATE TABLE s (a INT) WITH ('connector' = 'datagen');\n"
        "CREATE TABLE o (a INT) WITH ('connector' = 'blackhole');\n"
        "INSERT INTO o SELECT enrich(a) FROM s;\n"
    )
    lineage = extract(script, planner=planner)
    assert pairs(lineage) == {D + "o": [D + "s"]}
    (stood,) = lineage.stand_ins
    assert (stood.kind, stood.name, stood.class_name, stood.result_type) == (
        "function",
        D + "enrich",
        "com.acme.udf.Enrich",
        "INT",
    )


def test_missing_catalog_type_is_stood_in(planner):
    lineage = extract("CREATE CATALOG h WITH ('type' = 'hive');\nINSERT INTO h.d.t SELECT 1;", planner=planner)
    assert pairs(lineage) == {"h.d.t": []}
    assert [(s.kind, s.name, s.catalog_type) for s in lineage.stand_ins] == [
        ("catalog", "h", "hive"),
        ("table", "h.d.t", "hive"),
    ]


@pytest.fixture(scope="module")
def udf_jar(provisioned, tmp_path_factory):
    javac, jar = find_java_tool("javac"), find_java_tool("jar")
    if not javac or not jar:
        pytest.skip("no JDK here to build a UDF jar")
    work = tmp_path_factory.mktemp("udf")
    source = work / "com" / "acme" / "udf" / "Enrich.java"
    source.parent.mkdir(parents=True)
    source.write_text(
        "package com.acme.udf;\n"
        "public class Enrich extends org.apache.flink.table.functions.ScalarFunction {\n"
        "  public Integer eval(Integer a) { return a == null ? null : a + 1; }\n}\n"
    )
    classpath = os.pathsep.join(str(p) for p in provisioned.lib.glob("*.jar"))
    subprocess.run([javac, "--release", "11", "-cp", classpath, "-d", str(work / "classes"), str(source)], check=True)
    subprocess.run([jar, "cf", str(work / "enrich.jar"), "-C", str(work / "classes"), "."], check=True)
    return str(work / "enrich.jar")


def test_a_udf_jar_given_with_jar_is_used_for_real(planner, udf_jar):
    script = (
        "CREATE TEMPORARY FUNCTION enrich AS 'com.acme.udf.Enrich';\n"
        "CREATE TABLE s (a INT) WITH ('connector' = 'datagen');\n"
        "CREATE TABLE o (a INT) WITH ('connector' = 'blackhole');\n"
        "INSERT INTO o SELECT enrich(a) FROM s;\n"
    )
    lineage = extract(script, planner=planner, jars=[udf_jar])
    assert pairs(lineage) == {D + "o": [D + "s"]}
    assert lineage.stand_ins == []  # the real class won over the stand-in
    # The next job on the same JVM does not see the jar any more: the function is stood in.
    assert [s.name for s in extract(script, planner=planner).stand_ins] == [D + "enrich"]


def test_nothing_leaks_from_one_job_to_the_next(planner):
    extract(
        "CREATE TEMPORARY TABLE leak (a INT) WITH ('connector' = 'datagen');"
        "CREATE TABLE o (a INT) WITH ('connector' = 'blackhole');"
        "SET 'table.local-time-zone' = 'Asia/Tokyo';"
        "INSERT INTO o SELECT a FROM leak;",
        planner=planner,
    )
    with pytest.raises(ExtractError) as raised:
        extract(
            "CREATE TABLE o (a INT) WITH ('connector' = 'blackhole'); INSERT INTO o SELECT a FROM leak;",
            planner=planner,
        )
    assert "leak" in str(raised.value)


def run_cli(*args, stdin=None):
    return subprocess.run(
        [sys.executable, "-P", "-m", "planlineage", *args], input=stdin, capture_output=True, text=True, timeout=300
    )


def test_cli_extract_json_has_the_documented_shape_and_no_secret(provisioned):
    result = run_cli(
        "extract",
        str(ROOT / "examples" / "kafka_to_jdbc_enrichment.sql"),
        "--flink-version",
        provisioned.flink.minor,
        "--format",
        "json",
    )
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["flink_version"] == provisioned.flink.version
    sink = document["sinks"][0]
    assert {"table", "connector", "datasets", "inputs"} <= set(sink)
    assert {"namespace", "name"} <= set(sink["inputs"][0]["datasets"][0])
    assert document["warnings"] == []
    for secret in FAKE_SECRETS:
        assert secret not in result.stdout + result.stderr


def test_cli_reads_stdin_and_prints_a_table(provisioned):
    result = run_cli(
        "extract",
        "-",
        "--flink-version",
        provisioned.flink.version,
        "--format",
        "table",
        stdin=(ROOT / "examples" / "cdc_pipeline.sql").read_text(),
    )
    assert result.returncode == 0, result.stderr
    assert (
        "<- default_catalog.default_database.shop_orders [mysql-cdc]  mysql://mysql.prod:3306 shop.orders"
        in result.stdout
    )
    assert "cdc-FAKE-secret" not in result.stdout + result.stderr


def test_cli_bad_script_exits_2_with_one_paragraph(provisioned):
    result = run_cli(
        "extract",
        "-",
        "--flink-version",
        provisioned.flink.minor,
        stdin="CREATE TABLE t (a INT) WITH ('connector' = 'datagen');\nINSERT INTO t SELEC a FROM t;\n",
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "line 2" in result.stderr
    assert result.stderr.strip().count("\n") == 0


def test_cli_extract_columns_adds_column_lineage_per_sink(provisioned):
    def statement_set(*options):
        script = str(ROOT / "examples" / "statement_set.sql")
        return run_cli("extract", script, "--flink-version", provisioned.flink.minor, *options)

    plain = statement_set("--format", "json")
    assert "columns" not in json.loads(plain.stdout)["sinks"][0]
    result = statement_set("--format", "json", "--columns")
    assert result.returncode == 0, result.stderr
    sinks = {s["table"]: s for s in json.loads(result.stdout)["sinks"]}
    archive = sinks[D + "payment_archive"]["columns"]
    assert archive["user_id"] == [
        {"table": D + "payments", "column": "user_id", "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}]}
    ]
    counts = sinks[D + "click_counts"]["columns"]["clicks"]
    assert {(c["column"], t["subtype"]) for c in counts for t in c["transformations"]} >= {("ts", "WINDOW")}
    table = statement_set("--format", "table", "--columns")  # the same lineage, for a person to read
    assert table.returncode == 0, table.stderr
    assert table.stdout.count("  columns:\n") == len(sinks)
    assert f" <- {D}payments.user_id (DIRECT/IDENTITY)\n" in table.stdout
