"""The lineage page in a real browser (Playwright driving Debian's Chromium): what is in the
viewport after load, filter, search, zoom, pan, depth and a column selection, measured with
bounding boxes; the panel beside the graph; last-run colours; `planlineage ui` live."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from browser import box, browser_page, inside, overlap, ready, served

from planlineage.cli.main import main
from planlineage.graph import render_html
from planlineage.graph.model import from_events
from planlineage.graph.view import node_id

PRODUCER_FLINK = "https://github.com/OpenLineage/OpenLineage/tree/1.30.0/integration/flink"
PRODUCER_SPARK = "https://github.com/OpenLineage/OpenLineage/tree/1.30.0/integration/spark"


def event(job, inputs, outputs, state="COMPLETE", run="01890000-0000-7000-8000-000000000001",
          time_="2026-11-30T10:00:00Z", producer=PRODUCER_SPARK, error=None, parent=None, columns=None):  # fmt: skip
    facets = {}
    if error:
        facets["errorMessage"] = {"message": error, "programmingLanguage": "JAVA"}
    if parent:
        facets["parent"] = {"job": {"namespace": "etl", "name": parent}, "run": {"runId": run}}
    outs = []
    for ns, name in outputs:
        d = {"namespace": ns, "name": name}
        if columns and (ns, name) in columns:
            d["facets"] = columns[(ns, name)]
        outs.append(d)
    return {
        "eventType": state, "eventTime": time_, "producer": producer,
        "run": {"runId": run, "facets": facets}, "job": {"namespace": "etl", "name": job},
        "inputs": [{"namespace": ns, "name": n} for ns, n in inputs], "outputs": outs,
    }  # fmt: skip


def estate(jobs: int = 60) -> list[dict]:
    """A chain-and-fan estate: each job reads the previous one's table and a source of its own."""
    events = []
    for i in range(jobs):
        inputs = [("s3://raw", f"src_{i:03d}")] + ([("kafka://k:9092", f"t_{i - 1:03d}")] if i % 7 else [])
        events.append(
            event(f"job_{i:03d}", inputs, [("kafka://k:9092", f"t_{i:03d}")], run=f"01890000-0000-7000-8000-{i:012d}")
        )
    return events


def write_page(tmp_path: Path, events: list[dict], name: str = "lineage.html") -> Path:
    page = tmp_path / name
    page.write_text(render_html(from_events(events)))
    return page


def canvas(page) -> dict:
    return box(page, "#canvas")


def node(page, kind: str, ns: str, name: str) -> str:
    return "#" + node_id(kind, (ns, name))


def test_job_filter_fits_the_job_into_the_viewport(tmp_path):
    # The first symptom: filtering by a job showed a blank canvas (its nodes 2,800 px below).
    page_file = write_page(tmp_path, estate(60))
    with browser_page() as page:
        page.goto(page_file.as_uri())
        ready(page)
        view = canvas(page)
        first = box(page, node(page, "job", "etl", "job_000"))
        assert inside(first, view)  # fit on load: the whole graph in view
        page.fill("#job-filter", "job_055")
        page.dispatch_event("#job-filter", "change")
        target = box(page, node(page, "job", "etl", "job_055"))
        assert inside(target, view), (target, view)
        assert target["height"] >= 8  # not a speck: the filtered chain is scaled to fit, not the estate
        assert page.locator(node(page, "job", "etl", "job_000")).count() == 0  # filtered out: not drawn
        assert "job=job_055" in page.evaluate("location.hash")
        page.fill("#search", "t_050")
        hit = box(page, node(page, "dataset", "kafka://k:9092", "t_050"))
        assert inside(hit, view)  # fit after a search: the hits centred
        assert "hit" in page.get_attribute(node(page, "dataset", "kafka://k:9092", "t_050"), "class")


def test_zoom_and_pan_with_wheel_drag_and_buttons(tmp_path):
    page_file = write_page(tmp_path, estate(20))
    with browser_page() as page:
        page.goto(page_file.as_uri())
        ready(page)
        sel = node(page, "job", "etl", "job_010")
        before = box(page, sel)
        page.click("#zoom-in")
        page.wait_for_timeout(100)
        zoomed = box(page, sel)
        assert zoomed["width"] > before["width"] * 1.3
        view = canvas(page)
        page.mouse.move(view["x"] + view["width"] / 2, view["y"] + view["height"] / 2)
        page.mouse.wheel(0, 400)  # zoom out around the cursor
        page.wait_for_timeout(150)
        out = box(page, sel)
        assert out["width"] < zoomed["width"]
        # drag on the background: the graph follows the pointer
        start = box(page, sel)
        x, y = view["x"] + 5, view["y"] + view["height"] - 5
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(x + 60, y - 40, steps=5)
        page.mouse.up()
        page.wait_for_timeout(100)
        moved = box(page, sel)
        assert abs(moved["x"] - start["x"] - 60) < 2 and abs(moved["y"] - start["y"] + 40) < 2
        page.click("#fit")
        page.wait_for_timeout(100)
        for i in (0, 19):
            assert inside(box(page, node(page, "job", "etl", f"job_{i:03d}")), view)


def test_panel_is_beside_the_graph_collapsible_and_resizable(tmp_path):
    page_file = write_page(tmp_path, estate(30))
    with browser_page(width=1400) as page:
        page.goto(page_file.as_uri())
        ready(page)
        panel, view = box(page, "#panel"), canvas(page)
        assert not overlap(panel, view)
        # the right-most column (outputs) is inside the canvas, not under the panel
        assert inside(box(page, node(page, "dataset", "kafka://k:9092", "t_029")), view)
        page.click(node(page, "job", "etl", "job_029"))
        assert page.locator("#details h2").inner_text() == "job_029"
        wide = view["width"]
        page.click("#panel-toggle")
        page.wait_for_timeout(100)
        assert canvas(page)["width"] > wide + 250
        assert not page.locator("#details").is_visible()
        page.click("#panel-toggle")
        page.wait_for_timeout(100)
        r = box(page, "#resizer")
        page.mouse.move(r["x"] + 3, r["y"] + 200)
        page.mouse.down()
        page.mouse.move(r["x"] - 200, r["y"] + 200, steps=4)
        page.mouse.up()
        panel, view = box(page, "#panel"), canvas(page)
        assert panel["width"] > 550 and not overlap(panel, view)


def test_last_run_state_colours_legend_and_fail_error(tmp_path):
    events = [
        event("running", [("s3://raw", "a")], [("s3://out", "a")], state="START"),
        event("complete", [("s3://raw", "b")], [("s3://out", "b")], state="START", time_="2026-11-30T09:00:00Z"),
        event("complete", [("s3://raw", "b")], [("s3://out", "b")], state="COMPLETE"),
        event("failed", [("s3://raw", "c")], [("s3://out", "c")], state="FAIL", error="java.lang.IllegalStateException: sink s3://out/c refused"),
        event("aborted", [("s3://raw", "d")], [("s3://out", "d")], state="ABORT"),
    ]  # fmt: skip
    page_file = write_page(tmp_path, events)
    with browser_page() as page:
        page.goto(page_file.as_uri())
        ready(page)
        fills = {}
        for job, state in (("running", "RUNNING"), ("complete", "COMPLETE"), ("failed", "FAIL"), ("aborted", "ABORT")):
            rect = node(page, "job", "etl", job) + " rect"
            fills[state] = page.eval_on_selector(rect, "e => getComputedStyle(e).fill")
            legend = page.eval_on_selector(f"#legend .state-{state}", "e => getComputedStyle(e).backgroundColor")
            assert fills[state] == legend, (state, fills[state], legend)
            assert page.locator(f"#legend .state-{state}").inner_text() == state
        assert len(set(fills.values())) == 4
        page.click(node(page, "job", "etl", "failed"))
        panel = page.locator("#details").inner_text()
        assert "last run: FAIL" in panel and "IllegalStateException: sink s3://out/c refused" in panel
        assert inside(box(page, "#details pre.error"), box(page, "#panel"))


def test_depth_around_the_selected_node_and_the_url_keeps_the_view(tmp_path):
    page_file = write_page(tmp_path, estate(20))
    centre = node_id("job", ("etl", "job_010"))
    with browser_page() as page:
        page.goto(page_file.as_uri())
        ready(page)
        page.click("#" + centre)
        page.select_option("#depth", "2")  # two hops: the job's datasets and the jobs next to them
        drawn = set(
            page.eval_on_selector_all("#nodes g.node", "gs => gs.map(g => g.querySelector('text.name').textContent)")
        )
        assert drawn == {"job_009", "job_010", "job_011", "t_009", "t_010", "src_010"}
        view = canvas(page)
        for name in ("job_009", "job_011"):
            assert inside(box(page, node(page, "job", "etl", name)), view)
        url = page.url
        assert re.search(r"node=" + centre, url) and "depth=2" in url
        page.goto("about:blank")
        page.goto(url)  # the URL keeps the view
        ready(page)
        again = set(
            page.eval_on_selector_all("#nodes g.node", "gs => gs.map(g => g.querySelector('text.name').textContent)")
        )
        assert again == drawn
        assert page.locator("#details h2").inner_text() == "job_010"


def test_selecting_a_column_lights_up_its_upstream_columns_across_producers(tmp_path):
    def lineage(*fields):
        return {"columnLineage": {"fields": {out: {"inputFields": [{"namespace": ns, "name": n, "field": f, "transformations": [{"type": t, "subtype": s}]}]} for out, ns, n, f, t, s in fields}},
                "schema": {"fields": [{"name": out, "type": "STRING"} for out, *_ in fields]}}  # fmt: skip

    events = [
        event("flink_enrich", [("kafka://k:9092", "orders")], [("kafka://k:9092", "enriched")], producer=PRODUCER_FLINK,
              columns={("kafka://k:9092", "enriched"): lineage(("amount_eur", "kafka://k:9092", "orders", "amount", "DIRECT", "TRANSFORMATION"),
                                                               ("customer", "kafka://k:9092", "orders", "customer_id", "DIRECT", "IDENTITY"))}),
        event("spark_totals", [("kafka://k:9092", "enriched")], [("s3://dl", "totals")], producer=PRODUCER_SPARK,
              columns={("s3://dl", "totals"): lineage(("total", "kafka://k:9092", "enriched", "amount_eur", "DIRECT", "AGGREGATION"))}),
        event("unrelated", [("s3://raw", "x")], [("s3://dl", "y")]),
    ]  # fmt: skip
    page_file = write_page(tmp_path, events)
    totals = node_id("dataset", ("s3://dl", "totals"))
    with browser_page() as page:
        page.goto(page_file.as_uri())
        ready(page)
        page.click("#" + totals)
        page.click("#details button.column-pick:text-is('total')")
        chips = page.eval_on_selector_all("g.col-chip", "gs => gs.map(g => g.dataset.column)")
        assert sorted(chips) == ["amount", "amount_eur", "total"]  # not customer, not customer_id
        view = canvas(page)
        for chip in page.locator("g.col-chip").all():
            assert inside(chip.bounding_box(), view)
        labels = page.eval_on_selector_all("text.col-how", "ts => ts.map(t => t.textContent)")
        assert sorted(labels) == ["DIRECT/AGGREGATION", "DIRECT/TRANSFORMATION"]
        for label in page.locator("text.col-how").all():
            assert inside(label.bounding_box(), view)
        lit = page.eval_on_selector_all(
            "#nodes g.col-lit", "gs => gs.map(g => g.querySelector('text.name').textContent)"
        )
        assert sorted(lit) == ["enriched", "orders", "totals"]
        assert "column=total" in page.url
        panel = page.locator("#details").inner_text()
        assert "orders .amount" in panel and "DIRECT/TRANSFORMATION" in panel


def test_edges_do_not_cross_statement_set_boxes(tmp_path):
    # a STATEMENT SET whose second child reads what its first writes (two layers), next to
    # long edges that span several layers
    events = [
        event("set.a", [("s3://raw", "in")], [("s3://mid", "m")], parent="set"),
        event("set.b", [("s3://mid", "m")], [("s3://out", "o")], parent="set"),
        event("set.c", [("s3://raw", "in2")], [("s3://out", "o2")], parent="set"),
        event("long", [("s3://raw", "far")], [("s3://out", "far_out")]),
        event("tail", [("s3://out", "o"), ("s3://raw", "far")], [("s3://out", "end")]),
        event("tail2", [("s3://raw", "in"), ("s3://out", "o2")], [("s3://out", "end2")]),
    ]
    page_file = write_page(tmp_path, events)
    with browser_page() as page:
        page.goto(page_file.as_uri())
        ready(page)
        crossings = page.evaluate(
            """() => {
            const boxes = [];
            document.querySelectorAll('#groups g.group').forEach(g => {
              const kids = new Set(g.dataset.children.split(' '));
              g.querySelectorAll('rect').forEach(r => boxes.push({kids, x: +r.getAttribute('x'), y: +r.getAttribute('y'),
                w: +r.getAttribute('width'), h: +r.getAttribute('height')}));
            });
            const found = [];
            document.querySelectorAll('#edges path.edge').forEach(p => {
              const a = p.dataset.a, b = p.dataset.b, len = p.getTotalLength();
              boxes.forEach(bx => {
                if (bx.kids.has(a) || bx.kids.has(b)) return;
                for (let s = 0; s <= len; s += 2) {
                  const pt = p.getPointAtLength(s);
                  if (pt.x > bx.x && pt.x < bx.x + bx.w && pt.y > bx.y && pt.y < bx.y + bx.h) { found.push([a, b]); return; }
                }
              });
            });
            return {found, boxes: boxes.length, edges: document.querySelectorAll('#edges path.edge').length};
        }"""
        )
        assert crossings["boxes"] >= 2 and crossings["edges"] >= 10
        assert crossings["found"] == []


def test_counts_agree_between_stderr_and_page(tmp_path, capsys):
    events = [*estate(12), event("set.a", [("s3://raw", "q")], [("s3://o", "q")], parent="set")]
    log = tmp_path / "events.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    out = tmp_path / "page.html"
    assert main(["graph", "--events", str(log), "--out", str(out)]) == 0
    said = capsys.readouterr().err.strip().split(": ", 1)[1]
    with browser_page() as page:
        page.goto(out.as_uri())
        ready(page)
        assert page.locator("#counts").inner_text() == said == "13 job(s), 26 dataset(s), 0 split(s)"


def test_ui_serves_the_page_and_new_runs_appear_without_reload(tmp_path):
    log = tmp_path / "events.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in estate(5)))
    with served([str(log)]) as url, browser_page() as page:
        page.goto(url + "#job=job_004")
        ready(page)
        assert inside(box(page, node(page, "job", "etl", "job_004")), canvas(page))
        navigations = []
        page.on("framenavigated", lambda f: navigations.append(f.url))
        with log.open("a") as f:  # a new run of job_004 fails, and a new job appears
            f.write(json.dumps(event("job_004", [("kafka://k:9092", "t_003")], [("kafka://k:9092", "t_004")], state="FAIL",
                                     run="01890000-0000-7000-8000-0000000000ff", time_="2026-11-30T11:00:00Z", error="boom")) + "\n")  # fmt: skip
            f.write(json.dumps(event("job_new", [("kafka://k:9092", "t_004")], [("s3://o", "new")])) + "\n")
        start = time.monotonic()
        page.wait_for_selector(node(page, "job", "etl", "job_004") + ".state-FAIL", timeout=5000)
        page.wait_for_selector(node(page, "job", "etl", "job_new"), timeout=5000)
        assert time.monotonic() - start < 5
        assert navigations == []  # no reload
        assert "job=job_004" in page.url  # the view kept


def test_ui_is_read_only_loopback_and_token_guarded(tmp_path, capfd):
    import urllib.error
    import urllib.request

    from planlineage.graph.server import resolve_token

    log = tmp_path / "events.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in estate(3)))

    def get(url, method="GET", headers=None):
        request = urllib.request.Request(url, method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=10) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    with served([str(log)]) as url:
        status, body = get(url + "api/graph")
        assert status == 200 and {n["name"] for n in json.loads(body)["nodes"]} >= {"job_000", "t_002"}
        assert get(url + "api/graph", method="POST")[0] == 405
        assert get(url + "api/graph", method="DELETE")[0] == 405
        assert get(url, headers={"Host": "attacker.example:8765"})[0] == 403  # DNS rebinding
        assert get(url + "etc/passwd")[0] == 404
    fake = "s3cr3t-test-only-token"
    with served([str(log)], env={"token": fake}) as url:
        assert get(url + "api/graph")[0] == 401
        assert get(url + "api/graph", headers={"Authorization": "Bearer wrong"})[0] == 401
        assert get(url + "api/graph", headers={"Authorization": f"Bearer {fake}"})[0] == 200
        assert get(url)[0] == 200  # the page itself holds no lineage
        with browser_page() as page:  # the page takes the token from the URL fragment, then drops it
            page.goto(url + f"#token={fake}&job=job_001")
            ready(page)
            assert "token" not in page.url and "job=job_001" in page.url
    captured = capfd.readouterr()
    assert fake not in captured.out + captured.err  # nothing logged
    assert resolve_token("127.0.0.1") == (None, False)
    home = {"PLANLINEAGE_HOME": str(tmp_path / "home")}
    assert resolve_token("10.1.2.3", {**home, "PLANLINEAGE_LINEAGE_UI_TOKEN": fake}) == (fake, False)
    token, generated = resolve_token("0.0.0.0", home)
    assert generated and len(token) >= 30


def test_large_estate_paints_an_overview_and_a_filter_draws_names_in_view(tmp_path):
    from graph_render import synthetic_events

    events = synthetic_events(1000)  # 1,000 jobs, 1,785 datasets: more than the page names at once
    page_file = write_page(tmp_path, events, "big.html")
    with browser_page() as page:
        page.goto(page_file.as_uri())
        ready(page)
        assert page.get_attribute("#graph", "data-mode") == "overview"
        assert page.locator("#nodes g.node").count() == 0  # shapes only, not 2,785 groups of text
        assert "zoom in, filter or search" in page.locator("#mode").inner_text()
        page.fill("#job-filter", "job_00500")
        page.dispatch_event("#job-filter", "change")
        target = node(page, "job", "planlineage", "job_00500")
        assert inside(box(page, target), canvas(page))
        assert page.locator(target + " text.name").text_content() == "job_00500"
        assert page.locator("#nodes g.node").count() < 200  # only the job's lineage is in the DOM


def test_ui_command_messages_and_the_token_printed_once(tmp_path, capsys, monkeypatch):
    import socket

    from planlineage.graph import server as ui_server

    assert main(["ui"]) == 2
    assert "give what to read: a script or a folder of scripts" in capsys.readouterr().err
    assert main(["ui", "--events", str(tmp_path / "missing.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "missing.jsonl" in err and "Traceback" not in err
    log = tmp_path / "events.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in estate(2)))
    with socket.socket() as taken:  # a port in use: one line naming it and what to do
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["ui", "--events", str(log), "--port", str(port)]) == 2
        err = capsys.readouterr().err
        assert f"cannot listen on 127.0.0.1:{port}" in err and "--port" in err and "Traceback" not in err

    class Listening:  # stands in for the socket: no address beyond loopback is ever bound here
        server_address = ("0.0.0.0", 8765)

    seen = {}

    def fake_serve(live, host, port, token, ready, say):
        seen["token"] = token
        ready(Listening())

    monkeypatch.delenv("PLANLINEAGE_LINEAGE_UI_TOKEN", raising=False)
    monkeypatch.setattr(ui_server, "serve", fake_serve)
    assert main(["ui", "--events", str(log), "--host", "0.0.0.0"]) == 0
    err = capsys.readouterr().err
    assert err.count(seen["token"]) == 1 and f"http://0.0.0.0:8765/#token={seen['token']}" in err
    monkeypatch.setenv("PLANLINEAGE_LINEAGE_UI_TOKEN", "s3cr3t-test-only")
    assert main(["ui", "--events", str(log), "--host", "0.0.0.0"]) == 0
    err = capsys.readouterr().err
    assert seen["token"] == "s3cr3t-test-only" and "s3cr3t-test-only" not in err  # a token set is never echoed
    # from the node's settings file (`planlineage settings set lineage.ui-token -` keeps it off the command line)
    monkeypatch.delenv("PLANLINEAGE_LINEAGE_UI_TOKEN")
    monkeypatch.setenv("PLANLINEAGE_HOME", str(tmp_path / "home"))
    assert main(["settings", "set", "lineage.ui-token", "s3cr3t-test-only-stored"]) == 0
    capsys.readouterr()
    assert main(["ui", "--events", str(log), "--host", "0.0.0.0"]) == 0
    err = capsys.readouterr().err
    assert seen["token"] == "s3cr3t-test-only-stored" and "s3cr3t-test-only" not in err
