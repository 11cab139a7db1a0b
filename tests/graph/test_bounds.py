"""The graph's bounds: work linear in the jobs, a cap on the nodes drawn (with the way to draw a
part), long names drawn shortened but kept whole, control characters never written raw."""

from __future__ import annotations

import json
import re

from planlineage.cli.main import main
from planlineage.graph import render_dot, render_html
from planlineage.graph.model import LineageGraph, from_events


def _data(page: str) -> dict:
    """The data embedded in a static page (the script draws every name from it)."""
    return json.loads(re.search(r'<script id="graph-data" type="application/json">(.*?)</script>', page).group(1))


def _names(page: str) -> set[str]:
    return {n["name"] for n in _data(page)["nodes"]}


def _event(job: str, inputs: list[tuple[str, str]], outputs: list[tuple[str, str]], job_ns: str = "etl") -> dict:
    return {
        "eventType": "COMPLETE", "eventTime": "2026-11-30T10:00:00Z", "producer": "https://example.test/p",
        "run": {"runId": "01890000-0000-7000-8000-000000000001"}, "job": {"namespace": job_ns, "name": job},
        "inputs": [{"namespace": ns, "name": n} for ns, n in inputs],
        "outputs": [{"namespace": ns, "name": n} for ns, n in outputs],
    }  # fmt: skip


def test_page_computes_the_groups_once_not_per_job(monkeypatch):
    from graph_render import synthetic_events

    calls = []
    children = LineageGraph.children

    def counted(self):
        calls.append(1)
        return children(self)

    monkeypatch.setattr(LineageGraph, "children", counted)
    graph = from_events(synthetic_events(300))
    calls.clear()
    render_html(graph)
    assert len(calls) <= 4, len(calls)  # was one per job (quadratic in the jobs)


def _estate(tmp_path, jobs: int = 30):
    events = tmp_path / "estate.jsonl"
    lines = [
        _event(f"job{i}", [("kafka://k:9092", f"in{i}")], [("s3://lake", f"out{i}")], "team-a" if i < 3 else "team-b")
        for i in range(jobs)
    ]
    lines.append(_event("reader", [("postgres://pg:5432", "db.public.t")], [("s3://lake", "reader_out")], "team-b"))
    events.write_text("".join(json.dumps(e) + "\n" for e in lines))
    return events


def test_too_many_nodes_draws_the_busiest_part_with_a_search_over_all(tmp_path, capsys):
    # over --max-nodes the page used to be refused (exit 2, nothing written): a first picture, never nothing
    events = _estate(tmp_path)
    out = tmp_path / "page.html"
    assert main(["graph", "--events", str(events), "--out", str(out), "--max-nodes", "20"]) == 0
    err = capsys.readouterr().err
    assert "93 nodes (31 jobs, 62 datasets)" in err and "--max-nodes 20" in err and "busiest part" in err
    assert "--job NAME" in err and "--namespace NS" in err and "Traceback" not in err
    data = _data(out.read_text())
    assert 0 < len(data["nodes"]) <= 20 and data["focus"]["total"] == 93
    assert data["counts"] == "31 job(s), 62 dataset(s), 0 split(s)"  # the estate's, not the part's
    assert {row[3] for row in data["index"]} >= {"job0", "job29", "reader", "out7", "db.public.t"}  # searchable
    assert main(["graph", "--events", str(events), "--format", "dot", "--max-nodes", "20"]) == 0
    captured = capsys.readouterr()
    assert "--namespace NS" in captured.err and captured.out.count("->") >= 1
    # a job namespace: its jobs and their datasets
    assert (
        main(["graph", "--events", str(events), "--out", str(out), "--max-nodes", "20", "--namespace", "team-a"]) == 0
    )
    names = _names(out.read_text())
    assert {"job0", "job2", "out2"} <= names and "job3" not in names
    # a dataset namespace: the jobs that read or write it, and their datasets
    assert main(["graph", "--events", str(events), "--out", str(out), "--namespace", "postgres://pg:5432"]) == 0
    names = _names(out.read_text())
    assert {"reader", "reader_out"} <= names and "job0" not in names
    assert main(["graph", "--events", str(events), "--out", str(out), "--namespace", "nope"]) == 2
    assert "no job or dataset in namespace 'nope'" in capsys.readouterr().err


def test_long_names_are_drawn_short_and_kept_whole():
    name = "analytics." + "x" * 10_000 + ".orders"
    graph = from_events([_event("copy", [("s3://lake", name)], [("s3://lake", "out")])])
    page = render_html(graph)
    data = _data(page)
    assert data["width"] < 2000, data["width"]
    assert name in {n["name"] for n in data["nodes"]}  # the whole name: the node's tooltip, search, the panel
    shown = [n["label"] for n in data["nodes"]]
    assert any(s.startswith("analytics.xxx") and s.endswith("x.orders") and "…" in s for s in shown), shown
    assert all(len(s) <= 80 for s in shown)
    assert name in {d["name"] for d in data["details"].values()}


def test_control_characters_are_never_written_raw(tmp_path, capsys):
    odd = "t\x00\x1b[2J\x9b\u202e\ud800"
    graph = from_events([_event("job\x1b]0;x\x07", [("s3://la\x00ke", odd)], [("s3://lake", "out")])])
    page = render_html(graph)
    dot = render_dot(graph)
    for text in (page, dot):
        for char in "\x00\x1b\x07\x9b\u202e\ud800":
            assert char not in text, repr(char)
    labels = {n["label"] for n in _data(page)["nodes"]} | {n["sub"] for n in _data(page)["nodes"]}
    assert "t\\x00\\x1b[2J\\x9b\\u202e\\ud800" in labels and "s3://la\\x00ke" in labels
    assert "t\\\\x00" in dot  # DOT quotes the backslash of the escape
    events = tmp_path / "odd.jsonl"
    events.write_text(
        json.dumps(_event("j", [("s3://lake", odd)], []))
        + "\n"
        + json.dumps(_event("k", [("s3://lake", "t\x00")], []))
        + "\n"
    )
    out = tmp_path / "odd.html"
    assert main(["graph", "--events", str(events), "--out", str(out)]) == 0  # the surrogate's line is skipped
    labels = {n["label"] for n in _data(out.read_text())["nodes"]}
    assert "t\\x00" in labels and "j" not in labels
    assert main(["graph", "--events", str(events), "--format", "dot"]) == 0
    assert "\x00" not in capsys.readouterr().out
