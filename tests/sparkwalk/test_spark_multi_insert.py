"""Multi-inserts, WITH before INSERT OVERWRITE DIRECTORY and trimmed folder names, from Spark
3.5.9's recorded answer (recorded/multi_insert_and_directories.*: regenerate by sending the .sql
through planlineage.spark.client.SparkParser and writing its answer), no JVM.

What openlineage-spark 1.53.0 reports for the same statements is measured in the conformance
cases 22-27 (tests/conformance/cases/spark/)."""

import copy
import json
from pathlib import Path

from planlineage import script
from planlineage.spark.stages import lineage_of
from planlineage.spark.trimmers import DISABLED, PACKAGE

HERE = Path(__file__).parent / "recorded"
SQL = (HERE / "multi_insert_and_directories.sql").read_text(encoding="utf-8")
ANSWER = json.loads((HERE / "multi_insert_and_directories.3.5.json").read_text(encoding="utf-8"))


def _document(answer=ANSWER, conf=None):
    return lineage_of(answer, script.split(SQL), SQL, conf=conf, columns=True)


def _pairs(document):
    return {
        sink.table: ([(d.namespace, d.name) for d in sink.datasets], sorted(i.table for i in sink.inputs))
        for sink in document.sinks
    }


def test_each_insert_of_a_multi_insert_is_its_own_write():
    pairs = _pairs(_document())
    assert pairs["spark_catalog.default.ids"] == ([("s3://lake", "ids")], ["spark_catalog.default.src"])
    assert pairs["spark_catalog.default.names"] == ([("s3://lake", "names")], ["spark_catalog.default.src"])


def test_each_insert_of_a_multi_insert_has_the_column_lineage_of_its_own_select():
    sinks = {sink.table: sink for sink in _document().sinks}
    (names,) = sinks["spark_catalog.default.names"].columns["name"]
    assert (names.table, names.column, [(t.type, t.subtype) for t in names.transformations]) == (
        "spark_catalog.default.src",
        "name",
        [("DIRECT", "TRANSFORMATION")],
    )
    # ids is also written by the multi-insert after WITH, which is not analysed (its INSERTs need
    # the CTEs): no column lineage for ids rather than that of one write of two.
    assert sinks["spark_catalog.default.ids"].columns is None


def test_a_directory_written_after_with_is_named_by_its_location():
    document = _document()
    pairs = _pairs(document)
    assert pairs["csv.`s3a://lake/export/recent`"] == ([("s3://lake", "export/recent")], ["spark_catalog.default.src"])
    assert not any("None" in table for table in pairs)
    recent = next(s for s in document.sinks if s.table == "csv.`s3a://lake/export/recent`")
    assert sorted(recent.columns) == ["id", "name"]
    # the directory's files have the analysed query's columns, as the producer's schema facet says
    assert [(c.name, c.type) for c in recent.schema_] == [("id", "INT"), ("name", "STRING")]


def test_a_multi_insert_after_with_writes_a_table_and_a_directory():
    pairs = _pairs(_document())
    # the key=value folder of the directory is cut off, as openlineage-spark names it
    assert pairs["json.`s3a://lake/export/names/dt=2024-03-01`"] == (
        [("s3://lake", "export/names")],
        ["spark_catalog.default.src"],
    )


def test_a_multi_insert_into_a_directory_and_a_table_pairs_and_types_each():
    document = _document()
    pairs = _pairs(document)
    target = "parquet.`s3a://lake/export/ids/2024/03/01`"
    assert pairs[target] == ([("s3://lake", "export/ids")], ["spark_catalog.default.src"])
    directory = next(s for s in document.sinks if s.table == target)
    assert [(c.name, c.type) for c in directory.schema_] == [("id", "INT")]
    assert directory.lifecycle_state_change == "OVERWRITE"
    (ids,) = directory.columns["id"]
    assert (ids.table, ids.column) == ("spark_catalog.default.src", "id")
    # names is written by two analysed multi-inserts: the union of both writes' columns
    (names,) = {sink.table: sink for sink in document.sinks}["spark_catalog.default.names"].columns["name"]
    assert names.column == "name" and [(t.type, t.subtype) for t in names.transformations] == [
        ("DIRECT", "TRANSFORMATION")
    ]


def test_date_folders_read_are_one_dataset():
    daily = next(s for s in _document().sinks if s.table == "spark_catalog.default.daily")
    assert {(d.namespace, d.name) for i in daily.inputs for d in i.datasets} == {("s3://lake", "landing/metrics")}
    assert len(daily.inputs) == 3  # three tables the script reads, one dataset


def test_trimmers_disabled_in_the_apps_conf_keep_their_folders():
    conf = {DISABLED: f"{PACKAGE}DateTrimmer;{PACKAGE}KeyValueTrimmer"}
    document = _document(conf=conf)
    daily = next(s for s in document.sinks if s.table == "spark_catalog.default.daily")
    assert {d.name for i in daily.inputs for d in i.datasets} == {
        "landing/metrics/2024-03-01",
        "landing/metrics/2024-03-02",
        "landing/metrics",  # 2024/03/03: MultiDirDateTrimmer is still on
    }
    assert ("s3://lake", "export/names/dt=2024-03-01") in [
        (d.namespace, d.name) for s in document.sinks for d in s.datasets
    ]


def test_a_set_of_openlineage_settings_in_the_script_is_said_to_change_nothing():
    document = _document()
    (warning,) = [w for w in document.warnings if "spark.openlineage" in w]
    assert warning.startswith("statement at line 3: SET spark.openlineage.dataset.disabledTrimmers")
    assert "application's Spark conf" in warning
    # …and it changes nothing here either: the date folders are still cut off.
    daily = next(s for s in document.sinks if s.table == "spark_catalog.default.daily")
    assert {d.name for i in daily.inputs for d in i.datasets} == {"landing/metrics"}


def test_a_directory_whose_location_spark_did_not_give_is_a_warning_not_a_made_up_name():
    answer = copy.deepcopy(ANSWER)
    statement = next(s for s in answer["statements"] if s["line"] == 8)
    statement["extra"] = {}
    document = _document(answer)
    assert not any("None" in sink.table for sink in document.sinks)
    assert any(w.startswith("statement at line 8: the directory INSERT OVERWRITE DIRECTORY") for w in document.warnings)


def test_a_query_union_is_not_a_multi_insert():
    daily = next(s for s in _document().sinks if s.table == "spark_catalog.default.daily")
    assert len(daily.inputs) == 3 and daily.columns is None  # a path read: no analysis, no columns
