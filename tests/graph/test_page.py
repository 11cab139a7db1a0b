"""The lineage page in a real headless Chromium: it loads without a console message, its script
runs, every job and dataset name is text in the DOM, and search, job filter, namespace collapse and
the facet panel work. Screenshots are kept under pytest's tmp dir (their paths are printed)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from chromium import classes_of, dump_dom, element_texts, elements_by_id, find_chromium, screenshot

from planlineage.cli.main import main
from planlineage.graph import build, render_html
from planlineage.graph.model import from_events
from planlineage.graph.view import view


@pytest.fixture(autouse=True)
def _chromium_installed():
    if find_chromium() is None:  # never a silent skip: CI installs it (.ci/run)
        pytest.fail("no Chromium: install Debian's `chromium` package (.ci/run does)", pytrace=False)


DATA = Path(__file__).resolve().parent.parent / "doctor" / "data"
CORPUS = [
    str(DATA / n)
    for n in ("gravitino_lineage.log", "planlineage_file_transport.jsonl", "dbt_events.json", "custom_emitter.jsonl")
]


def _names_in_dom(dom: str) -> set[str]:
    return {text for tag, attrs, text in element_texts(dom) if tag == "text"}


def _page(tmp_path: Path, *extra: str) -> Path:
    out = tmp_path / "lineage.html"
    assert main(["graph", "--events", *CORPUS, "--out", str(out), *extra]) == 0
    return out


def _assert_clean(run) -> None:
    assert run.console == [], run.console
    assert 'data-ready="true"' in run.dom, "the page script did not run to its end"


def test_corpus_page_loads_and_names_everything(tmp_path):
    page = _page(tmp_path)
    html = page.read_text()
    # self-contained: nothing to fetch
    assert not re.search(r"""\s(src|href)=["']?(https?:)?//""", html)
    assert "<link" not in html and "@import" not in html and "data-api" not in html  # the data is embedded
    run = dump_dom(page)
    _assert_clean(run)
    graph = build(CORPUS)
    names = _names_in_dom(run.dom)
    assert graph.jobs and graph.datasets
    for namespace, name in graph.datasets:
        assert name in names, name
        assert namespace in names, namespace
    for _, name in graph.jobs:
        assert name in names, name
    shot = tmp_path / "lineage.png"
    screenshot(page, shot)
    print(f"screenshot: {shot}")


def test_splits_are_highlighted_and_explained(tmp_path):
    page = _page(tmp_path)
    graph = build(CORPUS)
    data = view(graph)
    ids = {(d["namespace"], d["name"]): i for i, d in data["details"].items() if d["kind"] == "dataset"}
    split_id = ids[("s3a://datalake", "audit/payments")]
    run = dump_dom(page, f"#node={split_id}")
    _assert_clean(run)
    assert "split" in classes_of(run.dom, split_id)
    assert "selected" in classes_of(run.dom, split_id)
    panel = " ".join(t for tag, attrs, t in element_texts(run.dom[run.dom.index('id="details"') :]))
    assert "Split:" in panel and "s3/s3a/s3n" in panel and "audit/payments" in panel
    plain = ids[("kafka://kafka-1.prod:9092", "sessions")]
    assert "split" not in classes_of(run.dom, plain)


def test_facets_panel_shows_schema_sql_and_runs(tmp_path):
    page = _page(tmp_path)
    data = view(build(CORPUS))
    job = next(i for i, d in data["details"].items() if d["name"] == "orders-enrichment")
    run = dump_dom(page, f"#node={job}")
    _assert_clean(run)
    panel = run.dom[run.dom.index('id="details"') :]
    texts = [t for _, _, t in element_texts(panel)]
    assert "run states" in texts and "RUNNING" in texts
    assert any("properties.bootstrap.servers" in t for t in texts)  # the SQL facet
    dataset = next(i for i, d in data["details"].items() if d["name"] == "analytics.enriched_orders")
    run = dump_dom(page, f"#node={dataset}")
    texts = [t for _, _, t in element_texts(run.dom[run.dom.index('id="details"') :])]
    assert "schema" in texts and "customer" in texts and "STRING" in texts
    assert "symlinks" in texts and "default_catalog.default_database.enriched_orders" in texts


def test_search_filter_and_collapse(tmp_path):
    page = _page(tmp_path)
    data = view(build(CORPUS))
    by_name = {d["name"]: i for i, d in data["details"].items()}
    run = dump_dom(page, "#q=enrich")
    _assert_clean(run)
    assert "hit" in classes_of(run.dom, by_name["orders-enrichment"])
    assert "dim" in classes_of(run.dom, by_name["sessions"])

    run = dump_dom(page, "#job=orders-enrichment")
    _assert_clean(run)
    drawn = elements_by_id(run.dom)
    assert by_name["orders-enrichment"] in drawn and by_name["analytics.enriched_orders"] in drawn
    assert by_name["sessions"] not in drawn  # filtered out: not drawn at all

    run = dump_dom(page, "#collapse=snowflake://xy12345.eu-west-1")
    _assert_clean(run)
    folded = [
        i
        for i, d in data["details"].items()
        if d.get("namespace") == "snowflake://xy12345.eu-west-1" and d["kind"] == "dataset"
    ]
    assert len(folded) == 3
    assert not set(folded) & set(elements_by_id(run.dom))  # drawn as their namespace's node instead
    aggregates = [a for i, a in elements_by_id(run.dom).items() if i.startswith("agg")]
    assert aggregates and sum(len(a["data-members"].split()) for a in aggregates) == 3
    assert "snowflake://xy12345.eu-west-1" in _names_in_dom(run.dom)


def test_statement_set_children_grouped_under_parent(tmp_path, monkeypatch):
    from planlineage.document import Dataset, JobLineage, SinkLineage, TableLineage
    from planlineage.emitter import events as ev

    src = TableLineage(
        table="c.d.orders", connector="kafka", datasets=[Dataset(namespace="kafka://k:9092", name="orders")]
    )
    sinks = [
        SinkLineage(
            table=f"c.d.{t}", connector="kafka", datasets=[Dataset(namespace="kafka://k:9092", name=t)], inputs=[src]
        )
        for t in ("big_orders", "small_orders", "refunds")
    ]
    built = ev.build_events(
        JobLineage(flink_version="1.20.5", sinks=sinks), job_name="order-router", job_namespace="planlineage",
        run_id=ev.new_run_id(), event_type="START",
    )  # fmt: skip
    events = tmp_path / "events.jsonl"
    events.write_text("".join(json.dumps(ev.to_dict(e)) + "\n" for e in built))
    out = tmp_path / "set.html"
    assert main(["graph", "--events", str(events), "--out", str(out)]) == 0
    run = dump_dom(out)
    _assert_clean(run)
    groups = {i: a for i, a in elements_by_id(run.dom).items() if "group" in (a.get("class") or "").split()}
    assert len(groups) == 1
    (group,) = groups.values()
    data = view(from_events([ev.to_dict(e) for e in built]))
    children = {data["details"][c]["name"] for c in group["data-children"].split()}
    assert children == {f"order-router.c.d.{t}" for t in ("big_orders", "small_orders", "refunds")}
    assert "order-router" in _names_in_dom(run.dom)  # the parent labels its box
    shot = tmp_path / "statement_set.png"
    screenshot(out, shot, size="1200,500")
    print(f"screenshot: {shot}")


def test_hostile_names_stay_text(tmp_path):
    evil = '</script><script>console.log("owned")</script><img src=x onerror=alert(1)>'
    event = {
        "eventType": "COMPLETE", "eventTime": "2026-11-30T10:00:00Z", "producer": "https://example.test/p",
        "run": {"runId": "01890000-0000-7000-8000-000000000001"},
        "job": {"namespace": "n", "name": "job <b>bold</b> & co"},
        "inputs": [{"namespace": "s3://b", "name": evil}], "outputs": [{"namespace": "s3://b", "name": "out"}],
    }  # fmt: skip
    page = tmp_path / "evil.html"
    page.write_text(render_html(from_events([event])))
    run = dump_dom(page, "#node=" + view(from_events([event]))["nodes"][0]["id"])
    _assert_clean(run)
    names = _names_in_dom(run.dom)
    assert evil in names and "job <b>bold</b> & co" in names
    assert "<img" not in run.dom.replace("&lt;img", "")


def test_thousand_job_page_in_browser(tmp_path):
    from graph_render import synthetic_events

    events = synthetic_events(1000)
    start = time.perf_counter()
    graph = from_events(events)
    page = tmp_path / "big.html"
    page.write_text(render_html(graph))
    rendered = time.perf_counter() - start
    start = time.perf_counter()
    run = dump_dom(page, "#job=job_00900&collapse=s3://datalake")
    loaded = time.perf_counter() - start
    print(f"1000 jobs: python {rendered:.2f} s, chromium {loaded:.2f} s")
    assert rendered < 30 and loaded < 60
    _assert_clean(run)
    names = _names_in_dom(run.dom)
    assert "job_00900" in names
    ids = elements_by_id(run.dom)
    assert any(i.startswith("agg") for i in ids)  # s3://datalake collapsed on the filtered page
    drawn = [i for i, a in ids.items() if "node" in (a.get("class") or "").split()]
    assert 0 < len(drawn) < len(graph.jobs) + len(graph.datasets)  # only the job's lineage is drawn


def test_column_lineage_in_the_panel(tmp_path):
    from planlineage.document import (
        Column,
        ColumnInput,
        ColumnTransformation,
        Dataset,
        JobLineage,
        SinkLineage,
        TableLineage,
    )
    from planlineage.emitter import events as ev

    orders = TableLineage(
        table="c.d.orders", connector="kafka", datasets=[Dataset(namespace="kafka://k:9092", name="orders")],
        schema=[Column(name="amount", type="DOUBLE"), Column(name="user_id", type="BIGINT")],
    )  # fmt: skip
    sink = SinkLineage(
        table="c.d.totals", connector="kafka", datasets=[Dataset(namespace="kafka://k:9092", name="totals")],
        schema=[Column(name="total", type="DOUBLE")], inputs=[orders],
        columns={"total": [ColumnInput(table="c.d.orders", column="amount", transformations=[ColumnTransformation(type="DIRECT", subtype="AGGREGATION")])]},
    )  # fmt: skip
    built = ev.build_events(
        JobLineage(flink_version="1.20.5", sinks=[sink]), job_name="totals", job_namespace="planlineage",
        run_id=ev.new_run_id(), event_type="START",
    )  # fmt: skip
    graph = from_events([ev.to_dict(e) for e in built])
    page = tmp_path / "columns.html"
    page.write_text(render_html(graph))
    data = view(graph)
    totals = next(i for i, d in data["details"].items() if d["name"] == "totals" and d["kind"] == "dataset")
    run = dump_dom(page, f"#node={totals}")
    _assert_clean(run)
    texts = [t for _, _, t in element_texts(run.dom[run.dom.index('id="details"') :])]
    assert "column lineage" in texts
    assert "kafka://k:9092 orders .amount" in texts and "DIRECT/AGGREGATION" in texts
