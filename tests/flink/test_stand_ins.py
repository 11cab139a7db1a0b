"""What the analyser does not have (UDF classes, Python functions, sink abilities of newer
versions) must not cost a job its lineage: the real planner of the version under test."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixture_cases import before

from planlineage.pipeline import ExtractError, extract
from planlineage.planner.provision import find_java_tool

ROOT = Path(__file__).parent.parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
SHARED = (FIXTURES / "sql" / "_tables.sql").read_text()
D = "default_catalog.default_database."
KAFKA = "'connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = 'k:9092', 'format' = 'json'"
CHANGELOG_KAFKA = KAFKA.replace("'json'", "'debezium-json'")  # a topic of every change


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
    # `score(a, 1) + 1`: the planner refuses STRING + INT, and a number is what fits
    assert {s.name.split(".")[-1]: s.result_type for s in extract(text, planner=planner).stand_ins} == {
        "parse_amount": "DECIMAL(10, 2)",
        "score": "INT",
    }
    lineage = extract(text.replace("score(a, 1) + 1", "CAST(score(a, 1) AS INT) + 1"), planner=planner)
    assert {s.name.split(".")[-1]: s.result_type for s in lineage.stand_ins} == {
        "parse_amount": "DECIMAL(10, 2)",
        "score": "INT",
    }
    assert pairs(lineage) == {D + "o": [D + "s"]}


FUNCTION_TABLES = (
    f"CREATE TABLE ev (user_id STRING, action STRING, ids ARRAY<INT>, ts TIMESTAMP(3)) WITH ({KAFKA});"
    # flags takes an aggregate's updates: a changelog format, as the real Kafka sink needs
    f"CREATE TABLE flags (user_id STRING, flag BOOLEAN) WITH ({CHANGELOG_KAFKA});"
    f"CREATE TABLE lists (user_id STRING, items ARRAY<STRING>, due TIMESTAMP(3)) WITH ({KAFKA});"
)


def result_types(lineage):
    return {s.name.split(".")[-1]: (s.function_kind, s.result_type) for s in lineage.stand_ins}


TYPED_BY_USE = {
    # The case: a UDAF without its jar, its result read by ARRAY_CONTAINS through an alias.
    "aggregate, a typed builtin's argument": (
        "CREATE FUNCTION collect_actions AS 'com.acme.udaf.CollectActions' USING JAR 'hdfs:///udf/acme.jar';\n"
        "INSERT INTO flags SELECT user_id, ARRAY_CONTAINS(agg_result, 'cart') FROM (\n"
        "  SELECT user_id, collect_actions(action) AS agg_result FROM ev GROUP BY user_id);",
        {"collect_actions": ("aggregate", "ARRAY<STRING>")},
    ),
    "table function fields, a typed builtin and IS TRUE": (
        "CREATE FUNCTION explode_tags AS 'com.acme.ExplodeTags';\n"
        "INSERT INTO flags SELECT e.user_id, ARRAY_CONTAINS(t.tags, 'vip') AND t.seen IS TRUE\n"
        "FROM ev AS e, LATERAL TABLE(explode_tags(e.action)) AS t(tags, seen);",
        {"explode_tags": ("table", "ROW<f0 ARRAY<STRING>, f1 BOOLEAN>")},
    ),
    "scalar, a comparison, a CAST, sink columns": (
        "CREATE FUNCTION parse_ids AS 'com.acme.ParseIds';\n"
        "CREATE TEMPORARY SYSTEM FUNCTION py_items AS 'udfs.items' LANGUAGE PYTHON;\n"
        "CREATE FUNCTION next_due AS 'com.acme.NextDue';\n"
        "EXECUTE STATEMENT SET BEGIN\n"
        # a comparison with an array column, and a CAST of the alias to another array type
        "INSERT INTO flags SELECT user_id, p = ids AND CAST(p AS ARRAY<BIGINT>) IS NOT NULL\n"
        "  FROM (SELECT user_id, ids, parse_ids(action) AS p FROM ev);\n"
        # sink columns: an alias of a Python function's result, and a typed builtin's argument
        "INSERT INTO lists SELECT user_id, it, TIMESTAMPADD(DAY, 1, next_due(user_id))\n"
        "  FROM (SELECT user_id, py_items(action, 2) AS it FROM ev);\n"
        "END;",
        {
            "parse_ids": ("scalar", "ARRAY<INTEGER>"),
            "py_items": ("scalar", "ARRAY<STRING>"),
            "next_due": ("scalar", "TIMESTAMP(3)"),
        },
    ),
}


#: The Flink version a case's SQL needs: CREATE FUNCTION ... USING JAR and the ARRAY_CONTAINS
#: builtin arrived in Flink 1.16; on 1.15 the script itself does not parse or validate.
TYPED_BY_USE_SINCE = {
    "aggregate, a typed builtin's argument": "1.16",
    "table function fields, a typed builtin and IS TRUE": "1.16",
}


@pytest.mark.parametrize("case", list(TYPED_BY_USE))
def test_a_stand_in_is_typed_by_the_use_the_planner_rejects(planner, provisioned, case):
    since = TYPED_BY_USE_SINCE.get(case)
    if since and before(provisioned.flink.minor, since):
        pytest.skip(f"Flink {provisioned.flink.minor} cannot state this case: its SQL needs Flink {since}+")
    functions_and_inserts, expected = TYPED_BY_USE[case]
    lineage = extract(FUNCTION_TABLES + functions_and_inserts, planner=planner)
    assert result_types(lineage) == expected
    assert lineage.sinks and all(pairing == [D + "ev"] for pairing in pairs(lineage).values())


def test_a_use_no_stand_in_type_fits_is_the_planners_own_refusal(planner):
    text = (
        FUNCTION_TABLES + "CREATE FUNCTION f AS 'com.acme.F';\n"
        # the same result indexed as an array and added to a number: no one type is both
        "INSERT INTO flags SELECT user_id, f(action)[1] + f(action) > 0 FROM ev;"
    )
    with pytest.raises(ExtractError) as raised:
        extract(text, planner=planner)
    assert "line 2" in str(raised.value) and "Cannot apply" in str(raised.value)


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
    if before(provisioned.flink.minor, "1.20"):
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


@pytest.fixture(scope="module")
def flink_home(provisioned, tmp_path_factory):
    """A cluster's Flink home whose lib/ holds a real catalog (built here) next to Flink's own jars."""
    javac, jar = find_java_tool("javac"), find_java_tool("jar")
    if not javac or not jar:
        pytest.skip("no JDK here to build a catalog jar")
    work = tmp_path_factory.mktemp("catalog")
    source = work / "src" / "com" / "acme" / "catalog" / "AcmeCatalogFactory.java"
    source.parent.mkdir(parents=True)
    source.write_text(
        "package com.acme.catalog;\n"
        "import java.util.*;\n"
        "import org.apache.flink.configuration.ConfigOption;\n"
        "import org.apache.flink.table.catalog.*;\n"
        "import org.apache.flink.table.factories.CatalogFactory;\n"
        "public class AcmeCatalogFactory implements CatalogFactory {\n"
        '  public String factoryIdentifier() { return "acme-lake"; }\n'
        "  public Set<ConfigOption<?>> requiredOptions() { return Collections.emptySet(); }\n"
        "  public Set<ConfigOption<?>> optionalOptions() { return Collections.emptySet(); }\n"
        "  public Catalog createCatalog(Context context) {\n"
        '    return new GenericInMemoryCatalog(context.getName(), "db");\n'
        "  }\n}\n"
    )
    classes = work / "classes"
    services = classes / "META-INF" / "services"
    services.mkdir(parents=True)
    (services / "org.apache.flink.table.factories.Factory").write_text("com.acme.catalog.AcmeCatalogFactory\n")
    classpath = os.pathsep.join(str(p) for p in provisioned.lib.glob("*.jar"))
    subprocess.run([javac, "--release", "11", "-cp", classpath, "-d", str(classes), str(source)], check=True)
    home = work / "flink"
    (home / "lib").mkdir(parents=True)
    (home / "opt").mkdir()
    subprocess.run([jar, "cf", str(home / "lib" / "acme-catalog-1.0.jar"), "-C", str(classes), "."], check=True)
    # Flink's own distribution jars are never added (these are not even jars: adding one would fail).
    (home / "lib" / "flink-dist-1.20.5.jar").write_text("not a jar")
    (home / "opt" / "flink-python-1.20.5.jar").write_text("not a jar")
    return home


CATALOG_JOB = (
    "CREATE CATALOG acme WITH ('type' = 'acme-lake');\n"
    "CREATE TABLE acme.db.events (id BIGINT, payload STRING) WITH ('connector' = 'datagen');\n"
    f"CREATE TABLE out1 (id BIGINT) WITH ({KAFKA});\n"
    "INSERT INTO out1 SELECT id FROM acme.db.events;\n"
)


def test_a_real_catalog_in_the_flink_home_wins_over_the_stand_in(provisioned, flink_home, planner):
    from planlineage.planner.cluster_jars import cluster_jars

    jars = cluster_jars(str(flink_home))
    assert [Path(j).name for j in jars] == ["acme-catalog-1.0.jar"]
    real = extract(CATALOG_JOB, planner=planner, jars=jars)
    assert pairs(real) == {D + "out1": ["acme.db.events"]} and real.stand_ins == []
    # the real catalog knows only what was created in it: an undeclared table is an error there ...
    with pytest.raises(ExtractError) as raised:
        extract(CATALOG_JOB.replace("acme.db.events;", "acme.db.undeclared;"), planner=planner, jars=jars)
    assert "undeclared" in str(raised.value)
    # ... while without the jar the catalog is stood in, and answers for it
    stood = extract(CATALOG_JOB.replace("acme.db.events;", "acme.db.undeclared;"), planner=planner)
    assert pairs(stood) == {D + "out1": ["acme.db.undeclared"]}
    assert [(s.kind, s.name, s.catalog_type) for s in stood.stand_ins] == [
        ("catalog", "acme", "acme-lake"),
        ("table", "acme.db.undeclared", "acme-lake"),
    ]


def test_cli_flink_home_and_the_table_format_list_stand_ins(provisioned, flink_home, tmp_path):
    script = tmp_path / "job.sql"
    script.write_text(
        CATALOG_JOB
        + "CREATE FUNCTION mask AS 'com.acme.Mask';\nINSERT INTO out1 SELECT mask(id) FROM acme.db.events;\n"
    )
    run = [sys.executable, "-m", "planlineage", "extract", str(script), "--flink-version", provisioned.flink.minor]
    result = subprocess.run(
        [*run, "--flink-home", str(flink_home), "--format", "table"], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert (
        "STAND-IN function default_catalog.default_database.mask: class com.acme.Mask is on no jar given"
        in result.stdout
    )
    assert "STAND-IN catalog" not in result.stdout
    result = subprocess.run(
        [*run, "--flink-home", str(tmp_path / "nowhere")], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 2 and "has no lib/ folder" in result.stderr


def test_a_catalog_job_no_schema_fits_gives_a_marked_static_result(planner):
    text = (
        "CREATE CATALOG lake WITH ('type' = 'paimon', 'warehouse' = 's3://lake/wh');\n"
        f"CREATE TABLE orders (order_id BIGINT, amount DOUBLE) WITH ({KAFKA});\n"
        f"CREATE TABLE out_k (id BIGINT, amt DOUBLE) WITH ({KAFKA});\n"
        "EXECUTE STATEMENT SET BEGIN\n"
        "INSERT INTO out_k SELECT order_id, amount FROM orders;\n"
        # a static partition of an undeclared catalog table: no derived schema has the column
        "INSERT INTO lake.ods.daily PARTITION (dt = '2024-01-01') SELECT order_id, amount FROM lake.ods.refunds;\n"
        "END;\n"
    )
    lineage = extract(text, planner=planner)
    assert pairs(lineage) == {D + "out_k": [D + "orders"], "lake.ods.daily": ["lake.ods.refunds"]}
    assert {s.method for s in lineage.sinks} == {"static"}
    assert [(d.namespace, d.name) for d in lineage.sinks[1].datasets] == [("s3://lake", "wh/ods.db/daily")]
    assert any('"method": "static"' in w and "could not be compiled" in w for w in lineage.warnings)
    assert lineage.to_json_dict()["sinks"][0]["method"] == "static"


def test_a_script_error_is_never_hidden_by_the_static_fallback(planner):
    with pytest.raises(ExtractError):
        extract(
            "CREATE CATALOG lake WITH ('type' = 'paimon');\nINSERT INTO lake.db.t SELEC 1;",
            planner=planner,
        )


MISSPELLED = (
    f"CREATE TABLE orders (order_id BIGINT, amount DOUBLE) WITH ({KAFKA});\n"
    f"CREATE TABLE out_k (id BIGINT, amt DOUBLE) WITH ({KAFKA});\n"
)


@pytest.mark.parametrize(
    "insert",
    [
        "INSERT INTO out_k SELECT order_id, amuont FROM orders;",
        # next to an undeclared catalog table: `o.` names the declared one
        "INSERT INTO out_k SELECT o.order_id, o.amuont FROM orders AS o JOIN lake.ods.refunds AS r"
        " ON o.order_id = r.order_id;",
        "INSERT INTO lake.ods.daily SELECT order_id, amuont FROM orders;",
    ],
)
def test_a_misspelled_column_of_a_declared_table_is_the_scripts_error_with_a_catalog_too(planner, insert):
    catalog = "CREATE CATALOG lake WITH ('type' = 'paimon', 'warehouse' = 's3://lake/wh');\n"
    messages = []
    for text in (MISSPELLED + insert, catalog + MISSPELLED + insert):
        with pytest.raises(ExtractError) as raised:
            extract(text, planner=planner)
        messages.append(str(raised.value).split(" cannot be compiled: ")[1])
    assert "Column 'amuont' not found" in messages[1]
    if "lake." not in insert:
        assert messages[0] == messages[1]  # the planner's own message, with or without the catalog


def test_the_cli_exits_2_on_a_misspelled_column_with_a_stood_in_catalog(provisioned, tmp_path):
    script = tmp_path / "job.sql"
    script.write_text(
        "CREATE CATALOG lake WITH ('type' = 'paimon', 'warehouse' = 's3://lake/wh');\n"
        + MISSPELLED
        + "INSERT INTO out_k SELECT order_id, amuont FROM orders;\n"
    )
    run = [sys.executable, "-m", "planlineage", "extract", str(script), "--flink-version", provisioned.flink.minor]
    result = subprocess.run(run, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and result.stdout == ""
    assert "line 4" in result.stderr and "Column 'amuont' not found in any table" in result.stderr


def test_column_lineage_through_a_stand_in_is_its_arguments_marked_inferred(planner):
    from planlineage.planner.columns import INFERRED

    text = SHARED + (FIXTURES / "sql" / "stand_in_functions.sql").read_text()
    sinks = {s.table: s for s in extract(text, planner=planner, columns=True).sinks}
    direct = [
        (c.table, c.column, t.subtype, t.description)
        for c in sinks[D + "out_s"].columns["k"]  # mask(c.name)
        for t in c.transformations
        if t.type == "DIRECT"
    ]
    assert direct == [(D + "customers", "name", "TRANSFORMATION", INFERRED)]
    weighted = sinks[D + "out_u"].columns["v"]  # weighted(amount, product_id): an aggregate
    assert {
        (c.column, t.subtype, t.description) for c in weighted for t in c.transformations if t.type == "DIRECT"
    } == {
        ("amount", "AGGREGATION", INFERRED),
        ("product_id", "AGGREGATION", INFERRED),
    }
    key = sinks[D + "out_u"].columns["k"]  # customer_id: no function, nothing inferred
    assert [t.description for c in key if c.column == "customer_id" for t in c.transformations] == [None, None]


def test_a_rules_file_gives_a_catalog_table_the_schema_usage_cannot(planner, tmp_path):
    from planlineage.registry import load_config

    text = (
        "CREATE CATALOG lake WITH ('type' = 'paimon', 'warehouse' = 's3://lake/wh');\n"
        f"CREATE TABLE totals (k STRING, total DOUBLE) WITH ({CHANGELOG_KAFKA});\n"
        "INSERT INTO totals SELECT k, SUM(amount) FROM lake.ods.payments GROUP BY k;\n"
    )
    # from usage alone `amount` is a STRING, which SUM refuses: only the static result is left
    degraded = extract(text, planner=planner)
    assert {s.method for s in degraded.sinks} == {"static"}
    rules = tmp_path / "rules.toml"
    rules.write_text('[tables."lake.ods.payments"]\ncolumns = { k = "STRING", amount = "DECIMAL(12, 2)" }\n')
    lineage = extract(text, planner=planner, identity=load_config(rules))
    assert pairs(lineage) == {D + "totals": ["lake.ods.payments"]} and lineage.sinks[0].method is None
    (source,) = lineage.sinks[0].inputs
    assert [(c.name, c.type) for c in source.schema_] == [("k", "STRING"), ("amount", "DECIMAL(12, 2)")]
    assert "columns from the rules file: k, amount" in lineage.stand_ins[-1].reason


AGGREGATE = "SELECT customer_id, SUM(amount) FROM orders GROUP BY customer_id"
JDBC = "'connector' = 'jdbc', 'url' = 'jdbc:postgresql://pg:5432/dw', 'table-name' = 'totals'"
FILES = "'connector' = 'filesystem', 'format' = 'json', 'path' = "


def test_a_stood_in_sink_takes_the_changes_its_real_connector_takes(planner):
    """As the real connectors plan them (so planlineage reports what the platform will: a job the
    real sink refuses does not start): Kafka and filesystem sinks write what their format encodes
    (JSON: inserts; an aggregate's updates are the planner's refusal, naming the sink), a JDBC
    sink without a primary key says to declare one, upsert-kafka and JDBC with a key take updates,
    a CDC format takes every change, and a batch job's aggregate (inserts, once) goes anywhere."""
    with pytest.raises(ExtractError, match="totals' doesn't support consuming update"):
        extract(
            SHARED + f"CREATE TABLE totals (c BIGINT, s DOUBLE) WITH ({KAFKA}); INSERT INTO totals {AGGREGATE};",
            planner=planner,
        )
    with pytest.raises(ExtractError, match="please declare primary key for sink table"):
        extract(
            SHARED + f"CREATE TABLE totals (c BIGINT, s DOUBLE) WITH ({JDBC}); INSERT INTO totals {AGGREGATE};",
            planner=planner,
        )
    keyed = f"CREATE TABLE totals (c BIGINT, s DOUBLE, PRIMARY KEY (c) NOT ENFORCED) WITH ({JDBC});"
    cdc = f"CREATE TABLE changes (c BIGINT, s DOUBLE) WITH ({CHANGELOG_KAFKA});"
    assert pairs(extract(SHARED + f"INSERT INTO out_u {AGGREGATE};", planner=planner)) == {D + "out_u": [D + "orders"]}
    assert pairs(extract(SHARED + keyed + f"INSERT INTO totals {AGGREGATE};", planner=planner)) == {
        D + "totals": [D + "orders"]
    }
    assert pairs(extract(SHARED + cdc + f"INSERT INTO changes {AGGREGATE};", planner=planner)) == {
        D + "changes": [D + "orders"]
    }
    files = (
        f"CREATE TABLE fs_in (c BIGINT, a DOUBLE) WITH ({FILES}'s3a://lake/in/');"
        f"CREATE TABLE fs_out (c BIGINT, s DOUBLE) WITH ({FILES}'s3a://lake/out/');"
        "INSERT INTO fs_out SELECT c, SUM(a) FROM fs_in GROUP BY c;"
    )
    with pytest.raises(ExtractError, match="fs_out' doesn't support consuming update"):
        extract(files, planner=planner)
    batch = extract("SET 'execution.runtime-mode' = 'batch';" + files, planner=planner)
    assert pairs(batch) == {D + "fs_out": [D + "fs_in"]}


def test_stood_in_metadata_has_the_real_connectors_types(planner):
    """Kafka's 'timestamp' is TIMESTAMP_LTZ(3) (KafkaDynamicSource.ReadableMetadata): read into a
    TIMESTAMP_LTZ(3) column it is the value itself, into a TIMESTAMP(3) column the planner
    converts it, as it does with the real connector; a key the stand-in does not know keeps the
    type its column declares (never a refusal)."""

    def columns(declared: str, key: str = "timestamp") -> str:
        text = (
            f"CREATE TABLE s (id BIGINT, t {declared} METADATA FROM '{key}') WITH ({KAFKA});"
            f"CREATE TABLE o (id BIGINT, t {declared}) WITH ({KAFKA});"
            "INSERT INTO o SELECT id, t FROM s;"
        )
        (source,) = extract(text, planner=planner, columns=True).to_json_dict()["sinks"][0]["columns"]["t"]
        (how,) = source["transformations"]
        return f"{source['column']} {how['type']}/{how['subtype']} ({how.get('description')})"

    assert columns("TIMESTAMP_LTZ(3)") == "t DIRECT/IDENTITY (metadata key 'timestamp')"
    assert columns("TIMESTAMP(3)") == "t DIRECT/TRANSFORMATION (metadata key 'timestamp')"
    assert columns("STRING", "no-such-key") == "t DIRECT/IDENTITY (metadata key 'no-such-key')"


# Issue #38: shapes of real scripts (Paimon's and Ververica's published SQL) that the stand-ins
# must carry through; the cases are written here, after what those scripts do.


def test_one_stood_in_result_into_a_bytes_column_from_two_inserts(planner):
    # The second INSERT's sink was converted while the function was still STRING; the type the
    # first INSERT's sink taught it must reach the second one too.
    text = (
        f"CREATE TABLE visits (uid INT, pages BYTES) WITH ({KAFKA});\n"
        "CREATE TEMPORARY FUNCTION to_pages AS 'com.acme.ToPages';\n"
        "INSERT INTO visits VALUES (1, to_pages(10, 11)), (2, to_pages(12));\n"
        "INSERT INTO visits VALUES (3, to_pages(13, 14));\n"
    )
    lineage = extract(text, planner=planner)
    assert pairs(lineage) == {D + "visits": []}
    assert result_types(lineage) == {"to_pages": ("scalar", "BYTES")}


LAKE = "CREATE CATALOG lake WITH ('type' = 'paimon', 'warehouse' = 'file:/tmp/planlineage-no-lake');\n"


def test_time_travel_reads_a_stood_in_catalogs_table(planner, provisioned):
    if before(provisioned.flink.minor, "1.18"):
        pytest.skip("FOR SYSTEM_TIME AS OF TIMESTAMP on a catalog table (time travel) arrived in Flink 1.18")
    text = (
        LAKE + "USE CATALOG lake;\n"
        "CREATE TABLE orders (id INT, amount DOUBLE, PRIMARY KEY (id) NOT ENFORCED);\n"
        "SET 'execution.runtime-mode' = 'batch';\n"
        "CREATE TEMPORARY TABLE as_of_may (id INT, amount DOUBLE) WITH ('connector' = 'blackhole');\n"
        "CREATE TEMPORARY TABLE day_after (id INT) WITH ('connector' = 'blackhole');\n"
        "INSERT INTO as_of_may SELECT * FROM orders FOR SYSTEM_TIME AS OF TIMESTAMP '2024-05-01 00:00:00';\n"
        # an undeclared table of the stood-in catalog, at a computed time
        "INSERT INTO day_after SELECT id FROM lake.sales.refunds\n"
        "  FOR SYSTEM_TIME AS OF TIMESTAMP '2024-05-01 00:00:00' + INTERVAL '1' DAY;\n"
    )
    lineage = extract(text, planner=planner)
    assert pairs(lineage) == {
        "lake.default.as_of_may": ["lake.default.orders"],
        "lake.default.day_after": ["lake.sales.refunds"],
    }
    assert {s.method for s in lineage.sinks} != {"static"}
    # the temporary sinks declared under the catalog's name are the script's, not stood in
    assert sorted(s.name for s in lineage.stand_ins) == ["lake", "lake.sales.refunds"]


def test_a_stood_in_aggregate_read_through_views_is_typed_by_its_use(planner, provisioned):
    if before(provisioned.flink.minor, "1.16"):
        pytest.skip("ARRAY_CONTAINS arrived in Flink 1.16")
    # Flink casts a view back to the row type it had when created: the aggregate's ARRAY type,
    # learnt only where ARRAY_CONTAINS reads it two views later, must reach the views too.
    text = (
        f"CREATE TABLE clicks (ts TIMESTAMP(3), kind STRING, uid INT, item INT,"
        f" WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ({KAFKA});\n"
        f"CREATE TABLE carts (uid INT, item INT, ended TIMESTAMP(3)) WITH ({KAFKA});\n"
        "CREATE TEMPORARY SYSTEM FUNCTION kinds_of AS 'com.acme.udaf.KindsOf';\n"
        "CREATE TEMPORARY VIEW windowed AS SELECT * FROM TABLE(\n"
        "  HOP(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND, INTERVAL '1' MINUTE));\n"
        "CREATE TEMPORARY VIEW per_item AS SELECT window_start, window_end, uid, item, kinds_of(kind) AS kinds\n"
        "  FROM windowed GROUP BY window_start, window_end, uid, item;\n"
        "CREATE TEMPORARY VIEW flagged AS SELECT *,\n"
        "  IF(ARRAY_CONTAINS(kinds, 'cart') AND NOT ARRAY_CONTAINS(kinds, 'buy'), 1, 0) AS left_cart FROM per_item;\n"
        "CREATE TEMPORARY VIEW left_carts AS SELECT * FROM flagged WHERE left_cart = 1;\n"
        "INSERT INTO carts SELECT uid, item, window_end FROM left_carts;\n"
    )
    lineage = extract(text, planner=planner)
    assert pairs(lineage) == {D + "carts": [D + "clicks"]}
    assert result_types(lineage) == {"kinds_of": ("aggregate", "ARRAY<STRING>")}


def test_a_refusal_inside_a_stood_in_catalog_names_it_and_the_jar_that_gives_the_real_behaviour(planner, provisioned):
    if before(provisioned.flink.minor, "1.18"):
        pytest.skip("CALL (catalog procedures) arrived in Flink 1.18")
    # A stood-in catalog has no procedures: the real catalog's jar has them.
    text = LAKE + (
        f"CREATE TABLE o (a STRING) WITH ({KAFKA});\nINSERT INTO o SELECT a FROM lake.db.t;\nCALL lake.sys.compact('db.t');\n"
    )
    with pytest.raises(ExtractError) as raised:
        extract(text, planner=planner)
    message = str(raised.value)
    assert "line 4" in message and "getProcedure is not implemented" in message
    assert "catalog lake (type paimon) is stood in" in message and "--jar" in message
    assert message.count("SQL validation failed.") == 1  # Flink's wrapper repeats it: said once


def test_a_stood_in_function_no_type_fits_is_named_with_the_jar_that_gives_the_real_behaviour(planner):
    text = (
        FUNCTION_TABLES + "CREATE FUNCTION f AS 'com.acme.F';\n"
        "INSERT INTO flags SELECT user_id, f(action)[1] + f(action) > 0 FROM ev;"
    )
    with pytest.raises(ExtractError) as raised:
        extract(text, planner=planner)
    message = str(raised.value)
    assert "function default_catalog.default_database.f (class com.acme.F is on no jar given" in message
    assert "--jar" in message and message.count("SQL validation failed.") <= 1


def test_a_refusal_of_the_script_itself_adds_no_stand_in_hint(planner):
    # a join of a STRING key with an INT key: Flink refuses it with real connectors too
    text = (
        "CREATE TABLE l (k STRING, v STRING) WITH ('connector' = 'datagen');\n"
        "CREATE TABLE r (id INT, name STRING) WITH ('connector' = 'datagen');\n"
        "CREATE TABLE o (k STRING, name STRING) WITH ('connector' = 'blackhole');\n"
        "INSERT INTO o SELECT l.k, r.name FROM l JOIN r ON l.k = r.id;\n"
    )
    with pytest.raises(ExtractError) as raised:
        extract(text, planner=planner)
    assert "implicit type conversion" in str(raised.value) and "stood in" not in str(raised.value)
