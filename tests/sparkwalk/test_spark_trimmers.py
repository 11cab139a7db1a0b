"""openlineage-spark's dataset name trimmers, against the answers of its own classes.

trimmer-vectors.json was written by TrimmerVectors.java running the trimmer classes of the pinned
openlineage-spark 1.53.0 jar: per name, what each default trimmer makes of it and the name after
all of them, repeatedly (DatasetIdentifier.withTrimmedName).
"""

import json
from pathlib import Path

import pytest

from planlineage.document import Dataset, Symlink, TableLineage
from planlineage.spark.naming import table_lineage, trimmed
from planlineage.spark.trimmers import DEFAULT_TRIMMERS, DISABLED, EXTRA, PACKAGE, name_trimming, subset_facet
from planlineage.spark.walk import Source

VECTORS = json.loads((Path(__file__).with_name("trimmer-vectors.json")).read_text(encoding="utf-8"))


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v["name"])
def test_each_trimmer_answers_as_openlineage_java(vector):
    for trimmer in DEFAULT_TRIMMERS:
        expected = vector[trimmer.class_name.rsplit(".", 1)[1]]
        got = trimmer.trim(vector["name"]) if trimmer.can_trim(vector["name"]) else None
        assert got == expected, trimmer.class_name


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v["name"])
def test_every_trimmer_repeatedly_gives_the_producers_name(vector):
    assert name_trimming({}).trim(vector["name"]) == vector["trimmed"]


def test_the_vectors_cover_a_cut_by_each_trimmer_and_names_left_alone():
    for trimmer in DEFAULT_TRIMMERS:
        assert any(v[trimmer.class_name.rsplit(".", 1)[1]] is not None for v in VECTORS), trimmer.class_name
    assert sum(v["trimmed"] == v["name"] for v in VECTORS) >= 20


def test_disabled_trimmers_are_matched_as_openlineage_matches_them():
    # DatasetConfig keeps a trimmer unless the setting contains its class name (a substring test).
    conf = {DISABLED: f"{PACKAGE}DateTrimmer;{PACKAGE}KeyValueTrimmer"}
    trimming = name_trimming(conf)
    assert [t.class_name for t in trimming.trimmers] == [f"{PACKAGE}MultiDirDateTrimmer", f"{PACKAGE}YearMonthTrimmer"]
    assert trimming.trim("s/landing/2024-03-01") == "s/landing/2024-03-01"
    assert trimming.trim("s/landing/dt=1") == "s/landing/dt=1"
    assert trimming.trim("s/landing/202403") == "s/landing"
    # A simple name is not a class name: nothing is disabled.
    assert len(name_trimming({DISABLED: "DateTrimmer"}).trimmers) == 4
    assert name_trimming({DISABLED: ""}).trimmers == DEFAULT_TRIMMERS


def test_an_extra_trimmer_planlineage_cannot_run_is_a_warning():
    trimming = name_trimming({EXTRA: f"{PACKAGE}DateTrimmer; com.acme.HourTrimmer"})
    assert trimming.trimmers == DEFAULT_TRIMMERS
    (warning,) = trimming.warnings
    assert "com.acme.HourTrimmer" in warning and EXTRA in warning
    assert name_trimming({EXTRA: f"{PACKAGE}YearMonthTrimmer"}).warnings == ()


def test_a_path_source_is_named_without_its_date_folder_and_keeps_namespace_and_symlinks():
    source = Source(display="parquet.`s3a://lake/metrics/2024-03-01`", kind="path", provider="parquet")
    source.location = "s3a://lake/metrics/2024-03-01"
    lineage = trimmed(table_lineage(source, {}, None, []), name_trimming({}))
    assert [(d.namespace, d.name) for d in lineage.datasets] == [("s3://lake", "metrics")]
    link = Symlink(namespace="hive://ms:9083", name="db.t", type="TABLE")
    table = TableLineage(table="t", datasets=[Dataset(namespace="file", name="/w/t/dt=1", symlinks=[link])])
    (dataset,) = trimmed(table, name_trimming({})).datasets
    assert (dataset.namespace, dataset.name, dataset.symlinks) == ("file", "/w/t", [link])
    untouched = TableLineage(table="x", datasets=[Dataset(namespace="postgres://h:5432", name="db.public.t")])
    assert trimmed(untouched, name_trimming({})) is untouched


def test_the_subset_facet_is_the_one_the_producer_writes():
    # As openlineage-spark 1.53.0's events carry it (conformance case 25), less `_producer`.
    assert subset_facet(["/l/m/2024-03-01", "/l/m/2024-03-02"]) == {
        "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/BaseSubsetDatasetFacet.json"
        "#/$defs/InputSubsetInputDatasetFacet",
        "inputCondition": {"type": "location", "locations": ["/l/m/2024-03-01", "/l/m/2024-03-02"]},
    }
    assert subset_facet(["/l/m/dt=1"], output=True) == {
        "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/BaseSubsetDatasetFacet.json"
        "#/$defs/OutputSubsetOutputDatasetFacet",
        "outputCondition": {"type": "location", "locations": ["/l/m/dt=1"]},
    }
