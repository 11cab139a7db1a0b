"""The walk and naming over Spark's own parsed plans of every supported version, with no JVM.

The plans are recorded by tests/fixtures/spark/generate.py; the expected lineage
(tests/fixtures/spark/expected.json) is written by hand and must hold on every version.
"""

import json
from pathlib import Path

import pytest

from planlineage import script as sql_script
from planlineage.pipeline import ExtractError
from planlineage.spark.stages import lineage_of
from planlineage.spark.versions import SUPPORTED

SPARK = Path(__file__).parent.parent / "fixtures" / "spark"
EXPECTED = json.loads((SPARK / "expected.json").read_text())["cases"]


def summary(lineage) -> list[dict]:
    def table(t):
        return {
            "table": t.table,
            "connector": t.connector,
            "datasets": [f"{d.namespace} {d.name}" for d in t.datasets],
        }

    def change(s):  # openlineage-spark's lifecycleStateChange of the output, when it has one
        return {"lifecycle": s.lifecycle_state_change} if s.lifecycle_state_change else {}

    return [{**table(s), **change(s), "inputs": [table(i) for i in s.inputs]} for s in lineage.sinks]


def replay(minor: str, case: str, conf=None, identity=None):
    answer = json.loads((SPARK / "plans" / minor / f"{case}.json").read_text())
    script = (SPARK / ("broken.sql" if case == "broken" else f"sql/{case}.sql")).read_text()
    return lineage_of(answer, sql_script.split(script), script, identity=identity, conf=conf)


def cases():
    return [pytest.param(minor, case, id=f"{minor}-{case}") for minor in SUPPORTED for case in sorted(EXPECTED)]


def test_every_version_has_every_case():
    for minor, spark in SUPPORTED.items():
        for case in EXPECTED:
            answer = json.loads((SPARK / "plans" / minor / f"{case}.json").read_text())
            assert answer["ok"] and answer["spark_version"] == spark.version


@pytest.mark.parametrize("minor,case", cases())
def test_corpus_lineage_is_the_same_on_every_version(minor, case):
    expected = EXPECTED[case]
    lineage = replay(minor, case, conf=expected["conf"])
    assert summary(lineage) == expected["sinks"]
    assert len(lineage.warnings) == expected["warnings"], lineage.warnings
    assert lineage.spark_version == SUPPORTED[minor].version
    assert lineage.runtime_mode == "batch"


@pytest.mark.parametrize("minor", list(SUPPORTED))
def test_no_secret_in_the_document(minor):
    for case in EXPECTED:
        text = json.dumps(replay(minor, case, conf=EXPECTED[case]["conf"]).to_json_dict())
        assert "FAKE" not in text


@pytest.mark.parametrize("minor", list(SUPPORTED))
def test_undeclared_tables_warn_and_name_nothing_without_a_metastore(minor):
    lineage = replay(minor, "views_ctes_jdbc")
    customers = lineage.sinks[0].inputs[2]
    assert customers.datasets == []
    assert lineage.warnings == [
        "table spark_catalog.sales.customers: not created in the script and no Hive metastore configured "
        "(spark.sql.catalogImplementation=hive, spark.sql.hive.metastore.uris), so its physical identity "
        "cannot be known; no dataset"
    ]


@pytest.mark.parametrize("minor", list(SUPPORTED))
def test_hive_metastore_names_catalog_tables_and_symlinks_locations(minor):
    lineage = replay(minor, "hive_metastore", conf=EXPECTED["hive_metastore"]["conf"])
    sink = lineage.sinks[0]
    assert [(s.namespace, s.name, s.type) for s in sink.datasets[0].symlinks] == [
        ("hive://hms.prod:9083", "warehouse_db.external_sales", "TABLE")
    ]
    raw = sink.inputs[0].datasets[0]
    assert [(s.namespace, s.name) for s in raw.symlinks] == [("hive://hms.prod:9083", "warehouse_db.raw_sales")]
    assert any("spark_catalog.other_db.copy: not created in the script" in w for w in lineage.warnings)


@pytest.mark.parametrize("minor", list(SUPPORTED))
def test_managed_table_gets_the_warehouse_symlink(minor):
    lineage = replay(minor, "ctas_rtas", conf=EXPECTED["ctas_rtas"]["conf"])
    managed = lineage.sinks[2].datasets[0]
    assert [(s.namespace, s.name) for s in managed.symlinks] == [("s3://lake/warehouse", "default.managed_copy")]


@pytest.mark.parametrize("minor", list(SUPPORTED))
def test_managed_table_without_warehouse_warns(minor):
    lineage = replay(minor, "ctas_rtas", conf={})
    assert lineage.sinks[2].datasets == []
    assert any("spark.sql.warehouse.dir" in w and "managed_copy" in w for w in lineage.warnings)


@pytest.mark.parametrize("minor", list(SUPPORTED))
def test_declared_schema_is_the_tables(minor):
    lineage = replay(minor, "views_ctes_jdbc")
    assert [(c.name, c.type) for c in lineage.sinks[0].schema_] == [("id", "BIGINT"), ("total", "DOUBLE")]


@pytest.mark.parametrize("minor", list(SUPPORTED))
def test_jdbc_subquery_is_a_warning_not_a_guess(minor):
    lineage = replay(minor, "jdbc_write")
    assert lineage.warnings == [
        "table pg_query: a JDBC query or subquery ('query' / dbtable '(…)') names no table without parsing the "
        "database's SQL; no dataset"
    ]


@pytest.mark.parametrize("minor", list(SUPPORTED))
def test_gravitino_profile_names_by_table(minor):
    from planlineage.registry import load_config

    config = load_config(None, profile="gravitino", metalake="prod_lake")
    lineage = replay(minor, "views_ctes_jdbc", identity=config)
    sink = lineage.sinks[0]
    assert [(d.namespace, d.name) for d in sink.datasets] == [("prod_lake", "spark_catalog.sales.enriched")]
    assert [(d.namespace, d.name) for d in sink.inputs[2].datasets] == [("prod_lake", "spark_catalog.sales.customers")]


@pytest.mark.parametrize("minor", list(SUPPORTED))
def test_broken_script_names_statement_line_and_sparks_reason(minor):
    with pytest.raises(ExtractError) as raised:
        replay(minor, "broken")
    message = str(raised.value)
    assert raised.value.line == 5
    assert message.startswith("statement at line 4 (INSERT INTO t SELECT a FRM v) cannot be parsed: line 5: ")
    assert "[PARSE_SYNTAX_ERROR]" in message


@pytest.mark.parametrize("minor", list(SUPPORTED))
def test_analyzer_checks_writes_whose_tables_are_declared(minor):
    lineage = replay(minor, "analyzed")
    rejected = [w for w in lineage.warnings if "Spark's analyzer rejects it" in w]
    assert len(rejected) == 1
    assert rejected[0].startswith(
        "statement at line 6: Spark's analyzer rejects it: [UNRESOLVED_COLUMN.WITH_SUGGESTION]"
    )
    assert "`nope`" in rejected[0]
    # CTAS: the columns come from the analysed query.
    report = lineage.sinks[1]
    assert [(c.name, c.type) for c in report.schema_] == [("id", "BIGINT"), ("doubled", "DOUBLE")]


@pytest.mark.parametrize("minor", list(SUPPORTED))
def test_undeclared_tables_are_not_analysed_and_not_rejected(minor):
    answer = json.loads((SPARK / "plans" / minor / "analyzed.json").read_text())
    analysis = [s.get("analysis") for s in answer["statements"]]
    assert analysis[5] == {"analyzed": False}  # INSERT … FROM unknown_table: not known here, no warning
    assert analysis[2]["analyzed"] is True and "rejected" not in analysis[2]
    # A cached view over a CTAS target, both shadowed: the directory write is analysed too.
    assert analysis[6] == {"analyzed": True}
    assert analysis[7]["analyzed"] is True and analysis[7]["query_plan"]


@pytest.mark.parametrize("minor", list(SUPPORTED))
def test_paths_and_undeclared_tables_never_reach_the_analyzer(minor):
    """parquet.`path` would make the analyzer look at a file system: such statements are not analysed."""
    for case in ("merge_paths", "cache_views_multi", "views_ctes_jdbc"):
        answer = json.loads((SPARK / "plans" / minor / f"{case}.json").read_text())
        assert all(not (s.get("analysis") or {}).get("analyzed") for s in answer["statements"]), case
        assert not any((s.get("analysis") or {}).get("rejected") for s in answer["statements"]), case


def column_summary(lineage):
    return {
        sink.table.split(".")[-1]: {
            name: sorted(
                (s.table.split(".")[-1], s.column, tuple(t.subtype for t in s.transformations)) for s in sources
            )
            for name, sources in sink.columns.items()
        }
        for sink in lineage.sinks
        if sink.columns is not None
    }


JOIN_AND_FILTER = [("customers", "id", ("JOIN",)), ("orders", "customer_id", ("JOIN",))]
EXPECTED_COLUMNS = {
    "region_totals": {
        "region": sorted(
            [("customers", "region", ("IDENTITY", "GROUP_BY")), ("orders", "amount", ("FILTER",)), *JOIN_AND_FILTER]
        ),
        "total": sorted(
            [("customers", "region", ("GROUP_BY",)), ("orders", "amount", ("AGGREGATION", "FILTER")), *JOIN_AND_FILTER]
        ),
        "orders": sorted([("customers", "region", ("GROUP_BY",)), ("orders", "amount", ("FILTER",)), *JOIN_AND_FILTER]),
    },
    "ranked": {
        # UNION ALL: order_id is orders.id (first branch) and orders.customer_id (second).
        "order_id": sorted(
            [
                ("customers", "id", ("JOIN",)),
                ("customers", "region", ("WINDOW",)),
                ("orders", "amount", ("WINDOW",)),
                ("orders", "customer_id", ("IDENTITY",)),
                ("orders", "id", ("IDENTITY", "JOIN")),
            ]
        ),
        "region_code": sorted(
            [
                ("customers", "id", ("JOIN",)),
                ("customers", "region", ("TRANSFORMATION", "WINDOW")),
                ("orders", "amount", ("WINDOW",)),
                ("orders", "id", ("JOIN",)),
            ]
        ),
        # Spark's analyzer gives rank() its ORDER BY expressions as arguments.
        "r": sorted(
            [
                ("customers", "id", ("JOIN",)),
                ("customers", "region", ("WINDOW",)),
                ("orders", "amount", ("AGGREGATION", "WINDOW")),
                ("orders", "id", ("JOIN",)),
            ]
        ),
    },
}


@pytest.mark.parametrize("minor", list(SUPPORTED))
def test_column_lineage_where_the_analyzer_resolved_every_write(minor):
    answer = json.loads((SPARK / "plans" / minor / "columns.json").read_text())
    script = (SPARK / "sql" / "columns.sql").read_text()
    lineage = lineage_of(answer, sql_script.split(script), script, columns=True)
    assert column_summary(lineage) == EXPECTED_COLUMNS
    # Every source column names an input of its sink, as the events need.
    for sink in lineage.sinks:
        tables = {i.table for i in sink.inputs}
        assert {s.table for sources in sink.columns.values() for s in sources} <= tables


@pytest.mark.parametrize("minor", list(SUPPORTED))
def test_no_column_lineage_unless_every_write_was_analysed(minor):
    answer = json.loads((SPARK / "plans" / minor / "analyzed.json").read_text())
    script = (SPARK / "sql" / "analyzed.sql").read_text()
    lineage = lineage_of(answer, sql_script.split(script), script, columns=True)
    enriched, report, directory = lineage.sinks
    assert enriched.columns is None  # one of its writes read an undeclared table
    assert column_summary(lineage)["report"] == {
        "id": [("enriched", "id", ("IDENTITY",))],
        "doubled": [("enriched", "total", ("TRANSFORMATION",))],
    }
    # Through a cached view (its schema cast is not a transformation).
    assert directory.columns == {
        "id": [report.columns["id"][0].model_copy(update={"table": "spark_catalog.db1.report"})]
    }
    assert lineage_of(answer, sql_script.split(script), script).sinks[1].columns is None  # only when asked


@pytest.mark.parametrize("minor", list(SUPPORTED))
def test_a_merge_target_of_unknown_format_is_not_also_an_input(minor):
    """openlineage-spark lists a Delta or Iceberg MERGE target among the inputs too (it reads it);
    without the script's CREATE TABLE … USING delta the format is unknown: not guessed."""
    answer = json.loads((SPARK / "plans" / minor / "merge_paths.json").read_text())
    script = (SPARK / "sql" / "merge_paths.sql").read_text()
    statements = sql_script.split(script)
    assert answer["statements"][0]["class"].endswith("CreateTable")
    undeclared = dict(answer, statements=answer["statements"][1:])
    lineage = lineage_of(undeclared, statements[1:], script)
    assert [sink.table for sink in lineage.sinks] == ["spark_catalog.dim.customers"]
    assert "spark_catalog.dim.customers" not in [i.table for i in lineage.sinks[0].inputs]
    assert len(lineage.sinks[0].inputs) == 3


HADOOP_ICE = {
    "spark.sql.catalog.ice": "org.apache.iceberg.spark.SparkCatalog",
    "spark.sql.catalog.ice.type": "hadoop",
    "spark.sql.catalog.ice.warehouse": "s3a://lake/wh/",
}


@pytest.mark.parametrize("minor", list(SUPPORTED))
@pytest.mark.parametrize(
    "conf, named",
    [
        (HADOOP_ICE, True),
        ({**HADOOP_ICE, "spark.sql.catalog.ice.type": "hive"}, False),  # locations in the metastore
        ({**HADOOP_ICE, "spark.sql.catalog.ice.catalog-impl": "org.apache.iceberg.aws.glue.GlueCatalog"}, False),
        ({**HADOOP_ICE, "spark.sql.catalog.ice.warehouse": "arn:aws:s3tables:us-east-1:1:bucket/b"}, False),
    ],
)
def test_tables_of_a_hadoop_iceberg_catalog_are_named_by_its_layout(minor, conf, named):
    """openlineage-spark's IcebergHandler, Hadoop catalog type: the dataset is the table's location,
    <warehouse>/<namespace…>/<table> (the only one HadoopCatalog allows), with a TABLE symlink
    (the warehouse, the identifier). Other catalog types keep locations in their service: WARN."""
    lineage = replay(minor, "v2_catalogs", conf=conf)

    def names(table):
        return [(d.namespace, d.name, [(s.namespace, s.name) for s in d.symlinks or []]) for d in table.datasets]

    agg, snapshot = lineage.sinks
    if not named:
        assert names(agg) == names(snapshot) == names(agg.inputs[0]) == []
        return
    assert (agg.table, agg.connector) == ("ice.analytics.events_agg", "iceberg")
    assert names(agg) == [("s3://lake", "wh/analytics/events_agg", [("s3://lake/wh", "analytics.events_agg")])]
    assert names(agg.inputs[0]) == [("s3://lake", "wh/raw/events", [("s3://lake/wh", "raw.events")])]
    assert names(snapshot) == [("s3://lake", "wh/snapshot", [("s3://lake/wh", "snapshot")])]
    assert names(agg.inputs[1]) == []  # spark_catalog.default.dim: no metastore, no guess
    assert not any("catalog 'ice'" in w for w in lineage.warnings)


LAKE = EXPECTED["v2_create_replace"]["conf"]


def replay_columns(minor: str, case: str):
    answer = json.loads((SPARK / "plans" / minor / f"{case}.json").read_text())
    script = (SPARK / "sql" / f"{case}.sql").read_text()
    return lineage_of(answer, sql_script.split(script), script, conf=EXPECTED[case]["conf"], columns=True)


@pytest.mark.parametrize("minor", list(SUPPORTED))
def test_replace_where_is_an_overwrite_paired_with_its_query(minor):
    """INSERT INTO … REPLACE WHERE is OverwriteByExpression straight from Spark's parser:
    openlineage-spark's TableContentChangeDatasetBuilder reports its table with an OVERWRITE; its
    query is what it reads, and where the analyzer resolves it (with or without CTEs), the write
    has column lineage."""
    lineage = replay_columns(minor, "v2_replace_where")
    assert not any("does not pair" in w for w in lineage.warnings)
    assert [(s.table, s.lifecycle_state_change) for s in lineage.sinks] == [
        ("lake.sales.daily", "OVERWRITE"),
        ("lake.sales.weekly", "OVERWRITE"),
        ("spark_catalog.curated.orders", "OVERWRITE"),
        ("spark_catalog.curated.regions", "OVERWRITE"),
    ]
    columns = column_summary(lineage)
    assert columns["orders"] == {
        "day": [("landed", "day", ("IDENTITY", "FILTER"))],
        "region": [("landed", "day", ("FILTER",)), ("landed", "region", ("TRANSFORMATION",))],
        "amount": [("landed", "amount", ("IDENTITY",)), ("landed", "day", ("FILTER",))],
    }
    assert columns["regions"]["n"] == [("landed", "day", ("FILTER", "GROUP_BY")), ("landed", "region", ("GROUP_BY",))]


@pytest.mark.parametrize("minor", list(SUPPORTED))
def test_delete_and_update_write_their_table_and_read_it_only_when_rewritten(minor):
    """DELETE FROM / UPDATE on a table with row-level operations become ReplaceData / WriteDelta,
    whose query scans the table: output and input; the subqueries of the condition and of the
    assignments are inputs. A table whose format is not known is the output only, never guessed."""
    lineage = replay(minor, "v2_row_level", conf=LAKE)
    customers, tickets, events = lineage.sinks
    assert [i.table for i in customers.inputs] == [
        "lake.crm.customers",
        "lake.crm.erasure_requests",
        "lake.sales.big_spenders",
    ]
    assert [i.table for i in tickets.inputs] == ["spark_catalog.ops.tickets"]
    assert (events.table, events.inputs) == ("spark_catalog.legacy.events", [])
    assert {s.lifecycle_state_change for s in lineage.sinks} == {None}  # not an overwrite


@pytest.mark.parametrize("minor", list(SUPPORTED))
def test_a_table_created_and_then_appended_to_stays_created(minor):
    lineage = replay(minor, "v2_create_replace", conf=LAKE)
    assert [(s.table, s.connector, s.lifecycle_state_change) for s in lineage.sinks] == [
        ("lake.mart.top_regions", "iceberg", "CREATE"),  # CTAS then INSERT INTO
        ("lake.mart.snapshot", "iceberg", "OVERWRITE"),  # CREATE OR REPLACE … AS
        ("lake.mart.latest", "iceberg", "OVERWRITE"),  # REPLACE TABLE … AS
    ]
    document = lineage.to_json_dict()
    assert [s.get("lifecycle_state_change") for s in document["sinks"]] == ["CREATE", "OVERWRITE", "OVERWRITE"]
    appended = replay(minor, "v2_overwrite_append", conf=EXPECTED["v2_overwrite_append"]["conf"])
    assert "lifecycle_state_change" not in appended.to_json_dict()["sinks"][1]  # an append: no change


@pytest.mark.parametrize("minor", list(SUPPORTED))
def test_a_table_created_in_a_catalog_that_places_it_is_not_given_a_location(minor):
    """CTAS into an Iceberg catalog that keeps locations in its service (type hive, REST, …) and
    no LOCATION: only that catalog knows where the table lies. The warning says so (not the
    session catalog's warehouse), and the table is Iceberg's, not Hive's."""
    lineage = replay(minor, "v2_create_replace", conf={**LAKE, "spark.sql.catalog.lake.type": "hive"})
    top = lineage.sinks[0]
    assert (top.connector, top.datasets) == ("iceberg", [])
    assert (
        "table lake.mart.top_regions: a table of catalog 'lake' created in the script without a LOCATION; its "
        "location is known only to that catalog; no dataset"
    ) in lineage.warnings
    assert not any("spark.sql.warehouse.dir" in w for w in lineage.warnings)
    # The gravitino profile needs no location: catalog.schema.table in the metalake.
    from planlineage.registry import load_config

    config = load_config(None, profile="gravitino", metalake="prod_lake")
    named = replay(minor, "v2_create_replace", conf={**LAKE, "spark.sql.catalog.lake.type": "rest"}, identity=config)
    assert [(d.namespace, d.name) for d in named.sinks[0].datasets] == [("prod_lake", "lake.mart.top_regions")]
    assert named.warnings == []


@pytest.mark.parametrize("kind, change", [("AppendData", None), ("OverwritePartitionsDynamic", "OVERWRITE")])
def test_analyzer_made_v2_writes_are_paired_like_the_parsers(kind, change):
    """AppendData and OverwritePartitionsDynamic are what Spark's analyzer makes of an INSERT
    [OVERWRITE] into a v2 table; they share OverwriteByExpression's shape (the table a tree of its
    own, the query the child), so a plan that carries them is paired, never dropped."""
    answer = json.loads((SPARK / "plans" / "3.5" / "v2_replace_where.json").read_text())
    first = answer["statements"][0]
    first["plan"][0]["class"] = f"org.apache.spark.sql.catalyst.plans.logical.{kind}"
    first["class"] = kind
    script = (SPARK / "sql" / "v2_replace_where.sql").read_text()
    lineage = lineage_of(answer, sql_script.split(script), script, conf=LAKE)
    daily = lineage.sinks[0]
    assert (daily.table, [i.table for i in daily.inputs]) == ("lake.sales.daily", ["lake.raw.orders"])
    assert daily.lifecycle_state_change == change
