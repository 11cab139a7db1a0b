"""The degraded table-level lineage read from SQL text (used only when a stood-in catalog's tables
cannot be given a schema that compiles)."""

from planlineage import script
from planlineage.planner.static_lineage import static_lineage

D = "default_catalog.default_database."


def lineage(text):
    return [(s.table, s.options.get("connector"), [i for i, _ in s.inputs]) for s in static_lineage(script.split(text))]


def test_each_insert_is_its_own_sink_with_the_tables_its_sql_names():
    text = (
        "CREATE CATALOG lake WITH ('type' = 'paimon', 'warehouse' = 's3://w');"
        "CREATE TABLE a (x INT) WITH ('connector' = 'kafka', 'topic' = 'a');"
        "CREATE TABLE b (x INT) WITH ('connector' = 'print');"
        "CREATE TEMPORARY VIEW v AS SELECT x FROM a JOIN lake.dim.d ON TRUE;"
        "EXECUTE STATEMENT SET BEGIN "
        "INSERT INTO b SELECT x FROM v;"
        "INSERT INTO lake.ods.t PARTITION (dt = '1') WITH r AS (SELECT * FROM lake.ods.s) "
        "SELECT * FROM r, a AS q, LATERAL TABLE(f(q.x)) WHERE q.x IN (SELECT x FROM b);"
        "INSERT INTO b SELECT 1;"
        "END;"
        "USE CATALOG lake; USE ods;"
        "INSERT INTO u SELECT * FROM `s` UNION ALL SELECT * FROM default_catalog.default_database.a;"
    )
    assert lineage(text) == [
        (D + "b", "print", [D + "a", "lake.dim.d"]),
        ("lake.ods.t", "paimon", ["lake.ods.s", D + "a", D + "b"]),
        (D + "b", "print", []),
        ("lake.ods.u", "paimon", ["lake.ods.s", D + "a"]),
    ]


def test_catalog_tables_carry_the_catalog_options_for_their_identity():
    (sink,) = static_lineage(
        script.split(
            "CREATE CATALOG ice WITH ('type' = 'iceberg', 'catalog-type' = 'hadoop', 'warehouse' = 'hdfs://n/w');"
            "CREATE TABLE ice.db.t AS SELECT * FROM ice.db.s;"
        )
    )
    assert sink.table == "ice.db.t" and sink.inputs[0][0] == "ice.db.s"
    assert sink.options == {
        "connector": "iceberg",
        "planlineage.catalog-type": "iceberg",
        "planlineage.catalog.catalog-type": "hadoop",
        "planlineage.catalog.warehouse": "hdfs://n/w",
    }
