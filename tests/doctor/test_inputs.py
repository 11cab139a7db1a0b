"""doctor.inputs.kind_of: what a file given to `doctor`, `graph` or `ui` is, from its content."""

from __future__ import annotations

import gzip
import json

import pytest

from planlineage.doctor.inputs import DOCUMENT, DOCUMENT_LINES, EVENTS, SCRIPT, kind_of
from planlineage.errors import UnreadableInput

EVENT = {
    "eventType": "START",
    "eventTime": "2026-12-01T10:00:00Z",
    "run": {"runId": "01890000-0000-7000-8000-000000000001"},
    "job": {"namespace": "default", "name": "orders"},
    "inputs": [],
    "outputs": [],
}
DOCUMENT_JSON = {"flink_version": "1.20.5", "runtime_mode": "streaming", "sinks": [], "warnings": []}


@pytest.mark.parametrize(
    ("name", "content", "kind"),
    [
        ("events.jsonl", json.dumps(EVENT) + "\n" + json.dumps(EVENT) + "\n", EVENTS),
        ("one_event.json", json.dumps(EVENT, indent=2), EVENTS),
        ("array.json", json.dumps([EVENT, EVENT]), EVENTS),
        ("gravitino_lineage.log", "2026-12-01 10:00:00 INFO [main] lineage - " + json.dumps(EVENT) + "\n", EVENTS),
        ("events.sql", json.dumps(EVENT) + "\n", EVENTS),
        ("orders.json", json.dumps(DOCUMENT_JSON, indent=2), DOCUMENT),
        ("orders.out", json.dumps(DOCUMENT_JSON), DOCUMENT),
        ("lines.jsonl", json.dumps({"script": "a.sql", "ok": True, "lineage": DOCUMENT_JSON}) + "\n", DOCUMENT_LINES),
        ("two.jsonl", json.dumps(DOCUMENT_JSON) + "\n" + json.dumps(DOCUMENT_JSON) + "\n", DOCUMENT_LINES),
        ("job.txt", "-- a job\nSET 'pipeline.name' = 'x';\nINSERT INTO t SELECT * FROM s;\n", SCRIPT),
        ("empty.sql", "", SCRIPT),  # the compile says it holds no statement
        ("job.sql", "this is not SQL at all", SCRIPT),  # the compile says what is wrong with it
    ],
)
def test_a_file_is_told_by_its_content(tmp_path, name, content, kind):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    assert kind_of(path) == kind


def test_a_rolled_log_is_events(tmp_path):
    path = tmp_path / "gravitino_lineage_2026-12-01.log.gz"
    path.write_bytes(gzip.compress((json.dumps(EVENT) + "\n").encode()))
    assert kind_of(path) == EVENTS


def test_a_document_larger_than_the_head_is_still_a_document(tmp_path):
    document = dict(DOCUMENT_JSON, warnings=["w" * 1000] * 400)  # ~400 KB, over the 256 KiB looked at first
    path = tmp_path / "big.json"
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    assert kind_of(path) == DOCUMENT


@pytest.mark.parametrize("content", ["remember the milk\n", "", '{"a": 1}\n'])
def test_anything_else_is_said_to_be_none_of_these(tmp_path, content):
    path = tmp_path / "notes.txt"
    path.write_text(content, encoding="utf-8")
    if content.startswith("{"):  # JSON without an event: read as events, the reader says it holds none
        assert kind_of(path) == EVENTS
        return
    with pytest.raises(UnreadableInput, match="is none of what this command reads"):
        kind_of(path)
