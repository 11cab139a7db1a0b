"""Benchmark of `planlineage ui` on a large estate in headless Chromium; prints the figures (not a test).

    nice python bench/ui.py [--jobs 5000] [--filters 5]

Generates bench/graph_render.py's estate (`--jobs` jobs in five tiers over six namespaces, with
STATEMENT SET parents; 5,000 jobs make ~8,900 datasets), last run states spread over RUNNING,
COMPLETE, FAIL and ABORT; builds the page's data once (graph, layout, routed edges: the server's
work, timed apart), serves it on loopback with the real server, and drives Debian's Chromium
(/usr/bin/chromium) through Playwright:

- paint: from navigation start until the page has drawn the fetched graph and the next frame is
  painted (the page marks data-ready, then two animation frames); past 5,000 nodes the first
  picture is the estate's busiest part (graph/focus.py), as `planlineage ui` serves it;
- a zoom step (the + and − buttons): click to the frame after the redraw;
- job filter settle: from setting the filter until the job's node is drawn and the next frame is
  painted, for jobs of each tier (a job outside the part drawn: the page asks the server for the
  part around it); each filtered job's node is checked to be inside the viewport.

Targets (issues 28, 38): paint <= 3 s (5,000 and 20,000 jobs), filter <= 300 ms on 2 cores.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time

from graph_render import synthetic_events

from planlineage.graph.focus import page_data
from planlineage.graph.model import from_events
from planlineage.graph.server import LiveGraph, UiServer
from planlineage.graph.view import node_id

STATES = ["RUNNING", "COMPLETE", "FAIL", "ABORT"]

STEP = """async (selector) => {
  const t0 = performance.now();
  document.querySelector(selector).click();
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  return performance.now() - t0;
}"""

SETTLE = """async ([name, id]) => {
  const input = document.getElementById('job-filter');
  const t0 = performance.now();
  input.value = name;
  input.dispatchEvent(new Event('change'));
  while (!document.getElementById(id) && performance.now() - t0 < 30000) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  return performance.now() - t0;
}"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=5000)
    parser.add_argument("--filters", type=int, default=5, help="job filters timed (spread over the tiers)")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args(argv)

    events = synthetic_events(args.jobs)
    for i, e in enumerate(events):
        e["eventType"] = STATES[i % 4]
        if e["eventType"] == "FAIL":
            e["run"]["facets"]["errorMessage"] = {"message": f"job {i} failed", "programmingLanguage": "JAVA"}
    t0 = time.perf_counter()
    graph = from_events(events)
    live = LiveGraph(lambda: graph, page=lambda g, around: page_data(g, around))
    live.refresh()
    built = time.perf_counter() - t0
    jobs = len(graph.jobs) - len(graph.group_only())
    print(f"estate: {jobs} jobs, {len(graph.datasets)} datasets; server-side build (graph, layout, routed edges, JSON): "
          f"{built:.2f} s, {len(live.body) / 1e6:.1f} MB")  # fmt: skip

    server = UiServer(("127.0.0.1", 0), live, None)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    from playwright.sync_api import sync_playwright

    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            start = time.perf_counter()
            page.goto(url, wait_until="commit")
            page.wait_for_selector("html[data-ready=true]", timeout=120000)
            page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
            paint = time.perf_counter() - start
            in_page = page.evaluate("performance.now()") / 1000
            mode = page.get_attribute("#graph", "data-mode")
            drawn = page.locator("#nodes g.node").count()
            print(
                f"paint: {paint:.2f} s wall ({in_page:.2f} s since navigation start in the page); {mode} view, {drawn} node elements"
            )
            steps = [page.evaluate(STEP, sel) for sel in ("#zoom-in", "#zoom-out", "#zoom-in", "#zoom-out")]
            print(
                f"zoom step on the whole estate ({mode} view): median {statistics.median(steps):.0f} ms, max {max(steps):.0f} ms"
            )
            names = sorted(n for _, n in graph.jobs if n.startswith("job_"))
            picks = [names[int(k * (len(names) - 1) / max(1, args.filters - 1))] for k in range(args.filters)]
            times = []
            canvas = page.locator("#canvas").bounding_box()
            for name in picks:
                ms = page.evaluate(SETTLE, [name, node_id("job", ("planlineage", name))])
                target = page.locator("#" + node_id("job", ("planlineage", name))).bounding_box()
                ok = target is not None and (
                    canvas["x"] <= target["x"] and target["x"] + target["width"] <= canvas["x"] + canvas["width"]
                    and canvas["y"] <= target["y"] and target["y"] + target["height"] <= canvas["y"] + canvas["height"]
                )  # fmt: skip
                shown = page.locator("#nodes g.node").count()
                times.append(ms)
                print(f"  filter {name}: {ms:.0f} ms, {shown} node elements, job in viewport: {ok}")
            print(f"job filter settle: median {statistics.median(times):.0f} ms, max {max(times):.0f} ms")
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
