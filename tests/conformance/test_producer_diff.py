"""The comparison the conformance suite decides by: byte for byte, unions per output, table
definitions apart. No JVM: events and documents written here."""

from __future__ import annotations

import json
import uuid

from producer_diff import compare, from_document, from_events


def _event(job, inputs=(), outputs=(), symlinks=None):
    def dataset(key):
        facets = {"symlinks": {"identifiers": symlinks[key]}} if symlinks and key in symlinks else {}
        return {"namespace": key[0], "name": key[1], "facets": facets}

    return {
        "eventType": "COMPLETE",
        "job": {"namespace": "conformance", "name": job},
        "inputs": [dataset(k) for k in inputs],
        "outputs": [dataset(k) for k in outputs],
    }


def _events(tmp_path, *events):
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return from_events(path)


def _document(*sinks):
    return {
        "sinks": [
            {
                "datasets": [{"namespace": out[0], "name": out[1], "symlinks": links}],
                "inputs": [{"datasets": [{"namespace": i[0], "name": i[1], "symlinks": []}]} for i in inputs],
            }
            for out, inputs, links in sinks
        ]
    }


SRC, DST = ("file", "/w/src"), ("file", "/w/dst")
LINK = {"namespace": "file:/w", "name": "default.dst", "type": "TABLE"}


def test_the_same_write_is_identical_and_parent_and_child_events_are_one_write(tmp_path):
    producer = _events(
        tmp_path,
        _event("app.execute_create_data_source_table_as_select_command.default_dst", [SRC], [DST], {DST: [LINK]}),
        _event("app.execute_insert_into_hadoop_fs_relation_command.w_dst", [SRC], [DST]),
    )
    assert compare(producer, from_document(_document((DST, [SRC], [LINK])))) == []


def test_a_missing_input_an_extra_sink_and_a_symlink_are_each_a_difference(tmp_path):
    producer = _events(tmp_path, _event("app.insert", [SRC], [DST], {DST: [LINK]}))
    other = ("file", "/w/other")
    ours = from_document(_document((DST, [], []), (other, [SRC], [])))
    kinds = {(d.kind, d.dataset) for d in compare(producer, ours)}
    assert kinds == {("inputs", DST), ("output-extra", other), ("symlinks", DST)}


def test_a_byte_of_difference_is_a_difference(tmp_path):
    producer = _events(tmp_path, _event("app.insert", [SRC], [DST]))
    ours = from_document(_document((("file", "/w/dst/"), [SRC], [])))
    assert {d.kind for d in compare(producer, ours)} == {"output-missing", "output-extra"}


def test_a_table_definition_without_data_is_not_a_missing_sink(tmp_path):
    producer = _events(tmp_path, _event("app.execute_create_data_source_table_command.default_src", [], [SRC]))
    assert compare(producer, from_document(_document())) == []
    written = _events(tmp_path, _event("app.execute_insert_into_hadoop_fs_relation_command.src", [], [SRC]))
    assert [d.kind for d in compare(written, from_document(_document()))] == ["output-missing"]


# -- job- and run-level facets --------------------------------------------------------------------


def _writing_event(
    job_type=("FLINK", "JOB", "STREAMING"),
    engine=("flink", "2.2.0"),
    parent=False,
    run_id=None,
    sql=None,
    lifecycle=None,
    output=DST,
):
    facets = {"jobType": dict(zip(("integration", "jobType", "processingType"), job_type))}
    if sql:
        facets["sql"] = {"query": sql}
    run_facets = {"processing_engine": {"name": engine[0], "version": engine[1]}}
    if parent:
        run_facets["parent"] = {"run": {"runId": "01900000-0000-7000-8000-000000000001"}}
    out_facets = {"lifecycleStateChange": {"lifecycleStateChange": lifecycle}} if lifecycle else {}
    return {
        "eventType": "START",
        "run": {"runId": run_id or "01900000-0000-7000-8000-00000000000a", "facets": run_facets},
        "job": {"namespace": "conformance", "name": "j", "facets": facets},
        "inputs": [],
        "outputs": [{"namespace": output[0], "name": output[1], "facets": out_facets}],
    }


def test_the_kind_of_a_write_is_its_lifecycle_facet_else_the_first_verb_of_its_sql():
    from producer_diff import write_kind

    assert write_kind("CREATE TABLE t (a INT);\nINSERT INTO t SELECT 1", None) == "CREATE"  # the whole script
    assert write_kind("INSERT INTO t SELECT 1", None) == "APPEND"
    assert write_kind("INSERT OVERWRITE t SELECT 1", None) == "APPEND"  # what a verb alone tells
    assert write_kind("INSERT OVERWRITE t SELECT 1", "OVERWRITE") == "OVERWRITE"
    assert write_kind("MERGE INTO t USING s ON a = b", None) == "MERGE"
    assert write_kind("ALTER TABLE t ADD c INT", None) == "ALTER"
    assert write_kind(None, None) is None and write_kind("SELECT 1", None) is None


def test_job_and_run_facets_that_differ_are_each_a_difference():
    from producer_diff import compare_facts, job_facts

    listener = job_facts([_writing_event(job_type=("FLINK", "JOB", "BATCH"))])
    same = job_facts([_writing_event(job_type=("FLINK", "JOB", "BATCH"), sql="INSERT INTO dst SELECT 1")])
    # no SQL on the listener's side: the backend's default kind (APPEND for Flink) meets INSERT's
    assert compare_facts(listener, same, default_kind="APPEND") == []
    # one write the producer types two ways across its events: either kind is one it gives
    both = job_facts([_writing_event(lifecycle="CREATE"), _writing_event(lifecycle="OVERWRITE")])
    assert compare_facts(both, job_facts([_writing_event(lifecycle="CREATE")])) == []
    assert [d.kind for d in compare_facts(both, job_facts([_writing_event(sql="INSERT INTO dst SELECT 1")]))] == [
        "output-kind"
    ]
    ours = job_facts(
        [
            _writing_event(
                job_type=("FLINK", "SQL", "STREAMING"),
                parent=True,
                run_id=str(uuid.uuid5(uuid.NAMESPACE_URL, "x")),
                sql="CREATE TABLE src (a INT);\nINSERT INTO dst SELECT 1",
            )
        ]
    )
    found = {(d.kind, d.dataset, _shown(d)) for d in compare_facts(listener, ours, default_kind="APPEND")}
    assert found == {
        ("job-type", ("job", ""), ("FLINK JOB BATCH", "FLINK SQL STREAMING")),
        ("parent", ("job", ""), ("absent", "present")),
        ("run-id", ("job", ""), ("v7", "v5")),
        ("output-kind", DST, ("APPEND", "CREATE")),
    }


def _shown(difference):
    from producer_diff import plain

    return (plain(difference.producer), plain(difference.planlineage))


def test_a_facet_decision_covers_that_difference_in_every_case_and_goes_stale_alone():
    from producer_diff import Difference, Placeholders, decision, stale_facet_decisions

    decided = {"facet": "parent", "producer": "absent", "planlineage": "present", "verdict": "kept"}
    other = {"facet": "engine", "verdict": "kept"}
    difference = Difference("parent", ("job", ""), {("absent",)}, {("present",)})
    assert decision([decided], "01_any", difference, Placeholders()) is decided
    assert decision([decided], "02_other", difference, Placeholders()) is decided
    assert (
        decision([decided], "01_any", Difference("parent", ("job", ""), {("present",)}, {("absent",)}), Placeholders())
        is None
    )
    assert stale_facet_decisions([decided, other], [difference]) == [other]


def test_in_memory_catalog_symlinks_are_set_aside_and_counted(tmp_path):
    from producer_diff import set_aside_in_memory_symlinks

    memory = {"namespace": "kafka://b:9092", "name": "default_catalog.default_database.t", "type": "TABLE"}
    producer = _events(tmp_path, _event("j", [SRC], [DST], {DST: [LINK, memory]}))
    kept, removed = set_aside_in_memory_symlinks(producer, {"default_catalog.default_database.t"})
    assert removed == 1
    assert kept.symlinks[DST] == {(LINK["namespace"], LINK["name"], "TABLE")}
