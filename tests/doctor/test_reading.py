"""How the doctor reads event files it did not write: a JSON array on one line, names holding
terminal escapes, JSON nested too deeply to parse, and large logs read as a stream."""

from __future__ import annotations

import inspect
import json
import tracemalloc

import pytest

from planlineage.cli.main import main
from planlineage.doctor import diagnose


def _event(job: str, namespace: str, name: str, sql: str = "") -> dict:
    event = {
        "eventType": "COMPLETE",
        "eventTime": "2026-11-30T10:00:00Z",
        "producer": f"https://example.test/{job}",
        "run": {"runId": "01890000-0000-7000-8000-000000000001"},
        "job": {"namespace": "etl", "name": job},
        "inputs": [{"namespace": namespace, "name": name}],
        "outputs": [],
    }
    if sql:
        event["job"]["facets"] = {"sql": {"query": sql}}
    return event


def test_json_array_on_one_line_is_read_as_its_events(tmp_path, capsys):
    events = [_event(f"job{i}", "s3://datalake", f"t{i}") for i in range(3)]
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps(events) + "\n" + json.dumps([_event("job3", "s3a://datalake", "t0")]) + "\n")
    report = diagnose([str(dump)])
    assert {("s3://datalake", f"t{i}") for i in range(3)} <= set(report.datasets)
    assert report.event_count == 4
    assert [sorted(d.key for d in s.datasets) for s in report.splits] == [
        [("s3://datalake", "t0"), ("s3a://datalake", "t0")]
    ]
    # a log sink line whose message is an array: the prefix is skipped, every element read
    log = tmp_path / "sink.log"
    log.write_text("2026-11-30 10:00:00 INFO [main] lineage - " + json.dumps(events) + "\n")
    assert diagnose([str(log)]).event_count == 3
    assert main(["doctor", "--events", str(dump)]) == 1
    assert f"{dump}: 4 event(s)" in capsys.readouterr().out


ESCAPES = "\x1b[2J\x1b]0;pwned\x07\x9b31m\u202e\x00"


def test_terminal_escapes_in_names_are_printed_escaped(tmp_path, capsys):
    events = tmp_path / "escapes.jsonl"
    name = "orders" + ESCAPES
    events.write_text(
        json.dumps(_event("job" + ESCAPES, "kafka://Kafka-1:9092", name))
        + "\n"
        + json.dumps(_event("other", "kafka://kafka-1:9092", name))
        + "\n"
    )
    assert main(["doctor", "--events", str(events)]) == 1
    out = capsys.readouterr().out
    for char in "\x1b\x07\x9b\u202e\x00":
        assert char not in out, repr(char)
    assert "orders\\x1b[2J\\x1b]0;pwned\\x07\\x9b31m\\u202e\\x00" in out
    assert "job\\x1b[2J" in out
    # an error naming the input escapes it too
    assert main(["doctor", "--events", str(tmp_path / ("missing\x1b[2J.log"))]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "missing\\x1b[2J.log" in err


def test_unusable_lines_are_reported_and_skipped(tmp_path, capsys):
    deep = '{"job": {"namespace": "x", "name": "deep"}, "run": {"facets": ' + "[" * 100_000 + "]" * 100_000 + "}}"
    # deep enough for the scrubbing but not for the JSON parser
    middle = json.dumps(_event("middle", "s3://datalake", "m")).replace(
        '"outputs": []', '"outputs": ' + "[" * 600 + "]" * 600
    )
    events = tmp_path / "deep.jsonl"
    events.write_text(
        json.dumps(_event("a", "s3://datalake", "t")) + "\n" + deep + "\n" + middle + "\n"
        + json.dumps(_event("half\ud800", "s3://datalake", "h")) + "\n"
        + json.dumps(_event("b", "s3a://datalake", "t")) + "\n"
    )  # fmt: skip
    assert main(["doctor", "--events", str(events)]) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert (
        "3 unreadable line(s) (nested too deeply: lines 2, 3; "
        "a lone surrogate escape (\\ud800-\\udfff), not Unicode text: line 4)" in captured.out
    )
    assert "2 event(s)" in captured.out
    page = tmp_path / "page.html"
    assert main(["graph", "--events", str(events), "--out", str(page)]) == 0
    assert "Traceback" not in capsys.readouterr().err
    only = tmp_path / "only.jsonl"
    only.write_text(deep + "\n")
    assert main(["doctor", "--events", str(only)]) == 2
    assert "line 1" in capsys.readouterr().err


@pytest.mark.parametrize("before", ["", "{ not json }\n"])
def test_pretty_printed_array_is_read_in_pieces(tmp_path, monkeypatch, before):
    from planlineage.doctor import sources

    events = [_event(f"job{i}", "s3://datalake", f"t{i}" * 2000) for i in range(40)]
    dump = tmp_path / "pretty.json"
    dump.write_text(before + json.dumps(events, indent=2))
    reads: list[int] = []
    opened = sources._open_text

    class Recorder:  # the file, with the size of every read() recorded
        def __init__(self, handle):
            self.handle = handle

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

        def __iter__(self):
            return iter(self.handle)

        def read(self, size=-1):
            reads.append(size)
            return self.handle.read(size)

    monkeypatch.setattr(sources, "_open_text", lambda path: Recorder(opened(path)))
    monkeypatch.setattr(sources, "_CHUNK", 1000)
    assert diagnose([str(dump)]).event_count == 40
    assert reads and all(0 < size <= 20_000 for size in reads), reads  # an event at a time, never the whole file


def _pretty(*events: dict) -> str:
    return "".join(json.dumps(event, indent=2) + "\n" for event in events)


@pytest.mark.parametrize("chunk", [1 << 16, 7])  # 7: every read ends inside a string or a number
def test_text_that_is_not_json_in_a_pretty_printed_file_is_counted_and_skipped(tmp_path, monkeypatch, capsys, chunk):
    from planlineage.doctor import sources

    monkeypatch.setattr(sources, "_CHUNK", chunk)
    a, b = _event("a", "s3://datalake", "t"), _event("b", "s3a://datalake", "t")
    dump = tmp_path / "pretty.json"
    dump.write_text("{ not json }\n" + _pretty(a, b))
    assert main(["doctor", "--events", str(dump)]) == 1  # the split between a and b is found
    out = capsys.readouterr().out
    assert f"{dump}: 2 event(s), 0 other line(s) skipped, 1 unreadable line(s) (not JSON)" in out
    # a broken value holding objects is counted once; an event after it, or inside it, is read
    dump.write_text(
        '{"wrapper": {"x": 1}, "events": [\n' + _pretty(a).rstrip() + ",\n" + '{"y": 2} oops]\n' + _pretty(b)
    )
    counts = sources.FileEvents(str(dump))
    assert [e["job"]["name"] for e in sources.iter_events(str(dump), counts)] == ["a", "b"]
    assert counts.unreadable == {"not JSON": (1, [])}
    # a file that ends inside an event: the events before it are read, the cut one is counted
    dump.write_text(_pretty(a, b)[: -len(_pretty(b)) // 2])
    assert main(["doctor", "--events", str(dump)]) == 0
    out = capsys.readouterr().out
    assert (
        "1 event(s), 0 other line(s) skipped, 1 unreadable line(s) (cut short: the file ends inside a JSON value)"
        in out
    )
    # nothing but broken values: no event, which is an error (exit 2) and no traceback
    dump.write_text("{ not json }\n{\n  oops\n}\n")
    assert main(["doctor", "--events", str(dump)]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_large_log_is_streamed_with_bounded_memory(tmp_path):
    log = tmp_path / "gravitino_lineage.log"
    sql = "INSERT INTO t SELECT * FROM s WHERE " + " AND ".join(f"c{i} = {i}" for i in range(120))
    with log.open("w") as out:
        for i in range(1_500):
            event = _event(f"job{i % 40}", "s3://datalake" if i % 2 else "s3a://datalake", f"t{i % 25}", sql)
            out.write("2026-11-30 10:00:00 INFO [main] lineage - " + json.dumps(event) + "\n")
    size = log.stat().st_size
    assert size > 2_500_000
    from planlineage.doctor.sources import iter_events

    assert inspect.isgenerator(iter_events(str(log)))
    small = tmp_path / "small.jsonl"
    small.write_text(json.dumps(_event("job", "s3://datalake", "t", sql)) + "\n")
    diagnose([str(small)])  # the modules it imports are not what is measured
    tracemalloc.start()
    try:
        report = diagnose([str(log)])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.event_count == 1_500 and len(report.splits) == 25
    assert peak < size / 5, (peak, size)  # the events are not kept: memory follows datasets and jobs
