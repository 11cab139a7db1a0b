"""doctor names the splits where a producer contradicts the OpenLineage naming spec, as measured by
the conformance suite and kept there (tests/conformance/decisions.toml, verdicts "kept"):
openlineage-flink's listener names a filesystem table by Flink's fallback lineage dataset (empty
namespace, catalog name), and splits a Kafka `topic` list on `,` only.

The listener's events are shaped as openlineage-flink 1.53.0 wrote them on Flink 2.2.1 in the
conformance run (its producer URL, its symlinks facet, an empty identifier list for the fallback);
planlineage's as its emitter writes them (the file dataset with the Flink table as TABLE symlink).
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from planlineage.cli.main import main
from planlineage.doctor import diagnose

LISTENER = "https://github.com/OpenLineage/OpenLineage/tree/1.53.0/integration/flink"
PLANLINEAGE = "https://github.com/planlineage/planlineage"
KAFKA = "kafka://127.0.0.1:39092"
DECISIONS = Path(__file__).resolve().parents[1] / "conformance" / "decisions.toml"


def _dataset(namespace: str, name: str, producer: str, symlinks=()) -> dict:
    return {
        "namespace": namespace,
        "name": name,
        "facets": {
            "symlinks": {
                "_producer": producer,
                "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/SymlinksDatasetFacet.json#/$defs/SymlinksDatasetFacet",
                "identifiers": [{"namespace": ns, "name": n, "type": "TABLE"} for ns, n in symlinks],
            }
        },
    }


def _event(producer: str, job: str, inputs=(), outputs=(), namespace: str = "conformance") -> dict:
    return {
        "eventTime": "2026-12-02T06:37:37.301Z",
        "producer": producer,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "eventType": "START",
        "run": {"runId": "01a23579-04f7-7b0b-ae42-1fd315358690", "facets": {}},
        "job": {"namespace": namespace, "name": job, "facets": {}},
        "inputs": list(inputs),
        "outputs": list(outputs),
    }


def _write(tmp_path: Path, events: list[dict]) -> str:
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return str(path)


def _files_job(job: str, path: str, table: str = "default_catalog.default_database.out_csv") -> list[dict]:
    listener = _event(LISTENER, job, outputs=[_dataset("", table, LISTENER)])
    ours = _event(PLANLINEAGE, job, outputs=[_dataset("file", path, PLANLINEAGE, [("file", table)])])
    return [listener, ours]


def _topic_list_job() -> list[dict]:
    table = "default_catalog.default_database.both_sides"
    listener = _event(
        LISTENER, "29_kafka_topic_list", inputs=[_dataset(KAFKA, "east;west", LISTENER, [(KAFKA, table)])]
    )
    ours = _event(
        PLANLINEAGE,
        "29_kafka_topic_list",
        inputs=[
            _dataset(KAFKA, "east", PLANLINEAGE, [(KAFKA, table)]),
            _dataset(KAFKA, "west", PLANLINEAGE, [(KAFKA, table)]),
        ],
    )
    return [listener, ours]


def test_the_listeners_fallback_name_of_a_file_table_is_named(tmp_path):
    report = diagnose([_write(tmp_path, _files_job("01_datagen_to_csv_files", "/data/out_csv"))])
    [split] = report.splits
    assert {(d.namespace, d.name) for d in split.datasets} == {
        ("", "default_catalog.default_database.out_csv"),
        ("file", "/data/out_csv"),
    }
    assert "fallback lineage dataset" in split.reason and "naming spec" in split.reason
    assert "keep `file` `/data/out_csv`" in split.fix and "lineage.flink-runs" in split.fix


def test_one_catalog_name_of_two_jobs_is_joined_only_within_its_job(tmp_path):
    # every session's out_csv is default_catalog.default_database.out_csv: not one table
    events = _files_job("job-a", "/data/a/out_csv") + _files_job("job-b", "/data/b/out_csv")
    report = diagnose([_write(tmp_path, events)])
    assert not report.splits  # the listener's name is in both jobs: it names two tables, joined to neither
    events = _files_job("job-a", "/data/a/out_csv") + _files_job("job-b", "/data/b/out_csv")[1:]
    report = diagnose([_write(tmp_path, events)])
    assert [sorted(d.name for d in s.datasets) for s in report.splits] == [
        ["/data/a/out_csv", "default_catalog.default_database.out_csv"]
    ]


def test_a_fallback_name_without_planlineages_table_is_no_split(tmp_path):
    listener = _event(
        LISTENER, "03_datagen_to_print", outputs=[_dataset("", "default_catalog.default_database.p", LISTENER)]
    )
    assert not diagnose([_write(tmp_path, [listener])]).splits


def test_the_listeners_topic_list_is_named(tmp_path):
    report = diagnose([_write(tmp_path, _topic_list_job())])
    [split] = report.splits
    assert {d.name for d in split.datasets} == {"east;west", "east", "west"}
    assert "splits that option on `,` only" in split.reason and "`east` and `west`" in split.reason
    assert "one Flink table per topic" in split.fix


def test_the_doctor_command_shows_both(tmp_path, capsys):
    path = _write(tmp_path, _files_job("01_datagen_to_csv_files", "/data/out_csv") + _topic_list_job())
    assert main(["doctor", "--events", path]) == 1
    out = capsys.readouterr().out
    assert "2 split(s)" in out and "fallback lineage dataset" in out and "east;west" in out


def test_every_kept_naming_decision_has_a_doctor_reason():
    """The conformance decisions that keep the spec against the listener's naming are the ones
    doctor names: a new such decision needs its reason here."""
    decisions = tomllib.loads(DECISIONS.read_text(encoding="utf-8"))["flink"]
    # naming decisions only: job/run facet and symlink decisions (issue #37) split no dataset
    naming = [d for d in decisions if "split" in d or "case" in d]
    kept_names = {d.get("split") or d["case"] for d in naming if d["verdict"].startswith("kept")}
    named_by_doctor = {"filesystem", "29_kafka_topic_list"}
    # no storage (planlineage reports no dataset: nothing to join) or not a naming difference
    nothing_to_join = {"datagen", "print", "blackhole", "23_jdbc_lookup_join"}
    assert kept_names == named_by_doctor | nothing_to_join
