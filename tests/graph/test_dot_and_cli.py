"""`graph --format dot`, `extract --format dot` rendering, the graph command's errors, --state."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from planlineage.cli.main import main
from planlineage.document import Dataset, JobLineage, SinkLineage, TableLineage
from planlineage.graph import script_dot
from planlineage.lifecycle import runs
from planlineage.settings import Settings
from planlineage.store.sqlite import Store

DATA = Path(__file__).resolve().parent.parent / "doctor" / "data"
CORPUS = [
    str(DATA / n)
    for n in ("gravitino_lineage.log", "planlineage_file_transport.jsonl", "dbt_events.json", "custom_emitter.jsonl")
]


def _statement_set() -> JobLineage:
    src = TableLineage(
        table="c.d.orders", connector="kafka", datasets=[Dataset(namespace="kafka://k:9092", name="orders")]
    )
    sinks = [
        SinkLineage(
            table=f"c.d.{t}", connector="kafka", datasets=[Dataset(namespace="kafka://k:9092", name=t)], inputs=[src]
        )
        for t in ("big", "small")
    ]
    return JobLineage(flink_version="1.20.5", sinks=sinks)


def _check_dot_syntax(text: str) -> None:
    dot = shutil.which("dot")
    if dot:  # Graphviz, when the machine has it, is the real judge
        proc = subprocess.run([dot, "-Tsvg"], input=text, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
    assert text.startswith("digraph ") and text.rstrip().endswith("}")
    assert text.count("{") == text.count("}")


def test_script_dot_groups_statement_set_children():
    text = script_dot(_statement_set(), "jobs/router.sql")
    _check_dot_syntax(text)
    assert 'digraph "router"' in text
    assert re.search(r'subgraph cluster_0 \{\s+label="STATEMENT SET router"', text)
    assert '"router.c.d.big\\nplanlineage"' in text and '"router.c.d.small\\nplanlineage"' in text
    assert '"orders\\nkafka://k:9092"' in text
    assert text.count("->") == 4  # orders -> each child -> its sink


def test_graph_dot_marks_splits(capsys):
    assert main(["graph", "--events", *CORPUS, "--format", "dot"]) == 0
    text = capsys.readouterr().out
    _check_dot_syntax(text)
    assert text.count('label="split"') == 9
    assert '"reports/orders/\\ns3://datalake", color="#d93025"' in text


def test_graph_job_filter_and_errors(tmp_path, capsys, monkeypatch):
    out = tmp_path / "one.html"
    assert main(["graph", "--events", *CORPUS, "--job", "orders-enrichment", "--out", str(out)]) == 0
    page = out.read_text()
    data = json.loads(re.search(r'<script id="graph-data" type="application/json">(.*?)</script>', page).group(1))
    names = {n["name"] for n in data["nodes"]}
    assert "orders-enrichment" in names
    assert "clickstream-sessionizer" not in names  # not connected to it
    # a split twin is another node: Spark's read of analytics.public.enriched_orders is not downstream
    assert "orders_report.execute_save_into_data_source_command" not in names
    assert main(["graph", "--events", *CORPUS, "--job", "no-such-job", "--out", str(out)]) == 2
    assert "no job named 'no-such-job'" in capsys.readouterr().err
    assert main(["graph", "--events", *CORPUS]) == 2
    assert "--out" in capsys.readouterr().err
    assert main(["graph", "--events", str(DATA / "not_events.log"), "--out", str(out)]) == 2
    assert main(["graph", "--out", str(out)]) == 2
    capsys.readouterr()
    monkeypatch.setenv("PLANLINEAGE_HOME", str(tmp_path / "no-home"))
    assert main(["graph", "--state", "--out", str(out)]) == 2  # no recorded run: nothing to draw
    assert "nothing to draw" in capsys.readouterr().err
    assert not (tmp_path / "no-home").exists()


def test_job_filter_keeps_upstream_and_downstream(tmp_path):
    from graph_render import synthetic_events

    events = tmp_path / "estate.jsonl"
    events.write_text("".join(json.dumps(e) + "\n" for e in synthetic_events(50)))
    out = tmp_path / "job.html"
    assert main(["graph", "--events", str(events), "--job", "job_00035", "--out", str(out)]) == 0
    page = out.read_text()
    data = json.loads(re.search(r'<script id="graph-data" type="application/json">(.*?)</script>', page).group(1))
    jobs = {d["name"] for d in data["details"].values() if d["kind"] == "job"}
    assert "job_00035" in jobs and "job_00036" not in jobs  # a sibling of the same tier is neither
    tiers = {int(name.rsplit("_", 1)[1]) // 10 for name in jobs if name.startswith("job_")}
    assert {2, 4} <= tiers  # something upstream (tier 2) and downstream (tier 4) of tier 3


def test_graph_from_state(tmp_path, monkeypatch, capsys):
    for name in list(os.environ):
        if name.startswith("PLANLINEAGE_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("PLANLINEAGE_HOME", str(tmp_path / "home"))
    store = Store()
    settings = Settings(store)
    settings.set("lineage.transport", "file")
    settings.set("lineage.file", str(tmp_path / "events.jsonl"))
    assert runs.record_submission(store, "app-7", "router", _statement_set(), "INSERT ...", settings)
    runs.record_state(store, "app-7", "FINISHED")
    out = tmp_path / "state.html"
    assert main(["graph", "--state", "--out", str(out)]) == 0
    page = out.read_text()
    data = json.loads(re.search(r'<script id="graph-data" type="application/json">(.*?)</script>', page).group(1))
    runs_of = {d["name"]: [r["eventType"] for r in d.get("runs", [])] for d in data["details"].values()}
    assert runs_of["router.c.d.big"] == ["COMPLETE"]  # the run's last state
    assert data["groups"] and len(data["groups"][0]["children"]) == 2
    capsys.readouterr()
    assert main(["graph", "--state", "--job", "router", "--format", "dot"]) == 0  # the parent's name
    dot = capsys.readouterr().out
    assert '"router.c.d.big\\nplanlineage"' in dot and '"router.c.d.small\\nplanlineage"' in dot
    assert 'label="STATEMENT SET router"' in dot


def test_gravitino_log_states_are_upper_cased_run_states():
    from planlineage.graph import build

    graph = build(CORPUS)
    job = graph.jobs[("spark_jobs", "orders_report.execute_save_into_data_source_command")]
    assert [r["eventType"] for r in job.runs] == ["COMPLETE"]  # the log sink wrote "complete"
    assert job.inputs == {
        ("postgres://warehouse.prod:5432", "analytics.public.enriched_orders"),
        ("mysql://mysql.prod:3306", "crm.customers"),
    }
    assert job.outputs == {("s3://datalake", "reports/orders")}
