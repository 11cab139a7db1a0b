"""The comparison the conformance suite decides by: byte for byte, unions per output, table
definitions apart. No JVM: events and documents written here."""

from __future__ import annotations

import json

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
