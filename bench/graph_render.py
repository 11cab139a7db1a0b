"""Benchmark of the lineage page on a large graph; prints the figures.

    python bench/graph_render.py [--jobs 1000] [--browser] [--out /tmp/lineage-1000.html] [--max-seconds 30]

Builds a synthetic estate of `--jobs` jobs (five tiers reading the previous tier's outputs, over six
namespaces, with STATEMENT SET parents), then times each stage: events -> graph, layout, HTML, and
with `--browser` the real headless Chromium loading the page until its script has run (DOM
dumped). Exits 1 when the Python stages together, or the browser, take longer than
`--max-seconds`.
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from planlineage.graph import render_html
from planlineage.graph.layout import layout
from planlineage.graph.model import from_events

NAMESPACES = [
    "kafka://kafka-1.prod:9092",
    "postgres://warehouse.prod:5432",
    "postgres://reporting.prod:5432",
    "s3://datalake",
    "hdfs://namenode:8020",
    "mysql://mysql.prod:3306",
]
PRODUCERS = [
    "https://github.com/planlineage/planlineage",
    "https://github.com/OpenLineage/OpenLineage/tree/1.30.0/integration/spark",
    "https://github.com/apache/airflow/tree/providers-openlineage/2.1.0",
    "https://github.com/OpenLineage/OpenLineage/tree/1.30.0/integration/dbt",
]


def _dataset(i: int, prefix: str) -> dict:
    ns = NAMESPACES[i % len(NAMESPACES)]
    name = f"/warehouse/{prefix}_{i:05d}" if ns.startswith("hdfs") else f"analytics.{prefix}_{i:05d}"
    return {
        "namespace": ns,
        "name": name,
        "facets": {"schema": {"fields": [{"name": "id", "type": "BIGINT"}, {"name": "v", "type": "STRING"}]}},
    }


def synthetic_events(jobs: int = 1000, seed: int = 7) -> list[dict]:
    """`jobs` jobs in five tiers; tier t reads two outputs of tier t-1 and one source table."""
    rng = random.Random(seed)
    tier_size = max(1, jobs // 5)
    events = []
    for i in range(jobs):
        tier = min(4, i // tier_size)
        inputs = [_dataset(rng.randrange(jobs * 2), "source")]
        if tier:
            lo = (tier - 1) * tier_size
            inputs += [_dataset(lo + rng.randrange(tier_size), "table") for _ in range(2)]
        job = f"job_{i:05d}"
        run_facets = {}
        if tier == 0 and i % 10 < 3:  # every tenth job starts a STATEMENT SET of three
            parent = f"statement_set_{i // 10:04d}"
            job = f"{parent}.default_catalog.default_database.table_{i:05d}"
            run_facets["parent"] = {
                "run": {"runId": str(uuid.UUID(int=i // 10))},
                "job": {"namespace": "planlineage", "name": parent},
            }
        events.append(
            {
                "eventType": "RUNNING",
                "eventTime": "2026-11-30T10:00:00.000Z",
                "producer": PRODUCERS[i % len(PRODUCERS)],
                "run": {"runId": str(uuid.UUID(int=10**6 + i)), "facets": run_facets},
                "job": {"namespace": "planlineage", "name": job, "facets": {"sql": {"query": f"INSERT INTO t{i} ..."}}},
                "inputs": inputs,
                "outputs": [_dataset(i, "table")],
            }
        )
    return events


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--browser", action="store_true", help="also time headless Chromium loading the page")
    parser.add_argument("--out", default=None, help="keep the page here")
    parser.add_argument("--max-seconds", type=float, default=30.0)
    args = parser.parse_args(argv)

    events = synthetic_events(args.jobs)
    t0 = time.perf_counter()
    graph = from_events(events)
    t1 = time.perf_counter()
    layout(graph)
    t2 = time.perf_counter()
    page = render_html(graph)  # lays out again: the figure below is the whole page
    t3 = time.perf_counter()
    parents = len(graph.group_only())
    print(f"{len(graph.jobs) - parents} jobs (+{parents} STATEMENT SET parents), {len(graph.datasets)} datasets")
    print(f"events -> graph  {t1 - t0:7.3f} s")
    print(f"layout           {t2 - t1:7.3f} s")
    print(f"html (+layout)   {t3 - t2:7.3f} s   {len(page) / 1e6:.1f} MB")
    total = t1 - t0 + t3 - t2
    print(f"python total     {total:7.3f} s")
    failed = total > args.max_seconds
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out or Path(tmp) / "lineage.html")
        out.write_text(page, encoding="utf-8")
        if args.browser:
            binary = shutil.which("chromium") or "/usr/bin/chromium"
            profile = Path(tmp) / "profile"
            start = time.perf_counter()
            proc = subprocess.run(
                [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
                 "--virtual-time-budget=10000", "--dump-dom", out.resolve().as_uri()],
                capture_output=True, text=True, timeout=300,
            )  # fmt: skip
            took = time.perf_counter() - start
            ready = 'data-ready="true"' in proc.stdout
            print(f"chromium load    {took:7.3f} s   script ran: {ready}")
            failed = failed or took > args.max_seconds or not ready
    if failed:
        print(f"over the bound of {args.max_seconds} s (or the page script did not run)", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
