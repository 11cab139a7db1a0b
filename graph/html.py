"""One self-contained HTML page of the lineage graph: inline SVG laid out in Python, inline CSS
and a small script; no network fetch, no library in the page.

Every job and dataset name is an SVG `<text>` element, so the browser's find, copy and screen
readers see the names. The script only adds behaviour to a page that is already drawn:

- click a node: its facets in the side panel (schema, column lineage, SQL, run states,
  symlinks, producers; for a split dataset, the other spellings and the reason);
- search box: matching nodes are marked, the rest dimmed, the first match scrolled into view;
- job filter: only that job (or STATEMENT SET parent) and what is upstream and downstream of it;
- collapse a namespace: its datasets become one node per layer, edges re-routed to it.

Text from events reaches the page only as escaped SVG text, as JSON inside a
`type="application/json"` script (with `<` escaped), and through `textContent` in the script:
never as markup. In the markup, control characters (a NUL byte, an escape sequence, a lone
surrogate) are written as visible escapes (`\\x00`), and a name longer than layout.MAX_LABEL is
drawn shortened; the node's `<title>` and the script's data keep it whole.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

from planlineage.printable import visible

from .layout import HEIGHT, Box, labels, layout, shown
from .model import LineageGraph

_ASSETS = Path(__file__).resolve().parent / "assets"


def _edge_path(a: Box, b: Box) -> str:
    x1, y1 = a.x + a.w, a.y + HEIGHT / 2
    x2, y2 = b.x, b.y + HEIGHT / 2
    bend = max(40.0, (x2 - x1) / 2)
    return f"M{x1:.1f},{y1:.1f} C{x1 + bend:.1f},{y1:.1f} {x2 - bend:.1f},{y2:.1f} {x2:.1f},{y2:.1f}"


def _details(graph: LineageGraph, box: Box, split_of: dict, by_key: dict) -> dict:
    if box.kind == "dataset":
        node = graph.datasets[box.key]
        detail = {
            "kind": "dataset",
            "namespace": node.namespace,
            "name": node.name,
            "producers": sorted(node.producers),
            "facets": node.facets,
        }
        if box.key in split_of:
            keys, reason = graph.splits[split_of[box.key]]
            detail["split"] = {
                "reason": reason,
                "others": [
                    {"namespace": k[0], "name": k[1], "id": by_key.get(("dataset", k))} for k in keys if k != box.key
                ],
            }
        return detail
    job = graph.jobs[box.key]
    return {
        "kind": "job",
        "namespace": job.namespace,
        "name": job.name,
        "producers": sorted(job.producers),
        "parent": list(job.parent) if job.parent else None,
        "runs": job.runs,
        "runsDropped": job.runs_dropped,
        "facets": job.facets,
    }


def _groups(graph: LineageGraph, by_key: dict[tuple, Box]) -> list[tuple[tuple[str, str], list[Box]]]:
    groups = []
    for parent, children in sorted(graph.children().items()):
        boxes = [by_key[("job", c)] for c in children if ("job", c) in by_key]
        if boxes:
            groups.append((parent, boxes))
    return groups


def render_svg(graph: LineageGraph, hidden: set | None = None) -> tuple[str, dict, list[str]]:
    """(svg markup, data for the script, namespaces of datasets as drawn); `hidden`:
    graph.group_only(), when known."""
    boxes, edges, width, height = layout(graph, hidden)
    by_key = {(b.kind, b.key): b for b in boxes}
    by_id = {b.id: b for b in boxes}
    ids = {k: b.id for k, b in by_key.items()}
    split_of = graph.split_of()
    parts = [
        f'<svg id="graph" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" role="group" aria-label="lineage graph">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrowhead"/></marker></defs>',
        '<g id="groups">',
    ]
    details: dict[str, dict] = {}
    for n, (parent, members) in enumerate(_groups(graph, by_key)):
        x0 = min(b.x for b in members) - 10
        y0 = min(b.y for b in members) - 24
        x1 = max(b.x + b.w for b in members) + 10
        y1 = max(b.y + HEIGHT for b in members) + 10
        gid = f"g{n}"
        job = graph.jobs.get(parent)
        details[gid] = {
            "kind": "job",
            "namespace": parent[0],
            "name": parent[1],
            "producers": sorted(job.producers) if job else [],
            "children": [m.key[1] for m in members],
            "runs": job.runs if job else [],
            "facets": job.facets if job else {},
        }
        parts.append(
            f'<g class="group node" id="{gid}" data-id="{gid}" data-kind="group" '
            f'data-children="{" ".join(m.id for m in members)}">'
            f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{x1 - x0:.1f}" height="{y1 - y0:.1f}" rx="8"/>'
            f'<text x="{x0 + 8:.1f}" y="{y0 + 15:.1f}" class="name">{escape(shown(parent[1]))}</text>'
            f"<title>STATEMENT SET {escape(visible(parent[1]))}: {len(members)} job(s)</title></g>"
        )
    parts.append('</g><g id="edges">')
    for a, b in edges:
        parts.append(
            f'<path class="edge" data-a="{a}" data-b="{b}" d="{_edge_path(by_id[a], by_id[b])}" '
            'marker-end="url(#arrow)"/>'
        )
    parts.append('</g><g id="nodes">')
    namespaces: dict[str, None] = {}
    for box in boxes:
        namespace, name = box.key
        classes = ["node", box.kind]
        if box.kind == "dataset":
            namespaces.setdefault(visible(namespace), None)
            if box.key in split_of:
                classes.append("split")
        name_line, sub = labels(graph, box.kind, box.key)
        ns_attr = escape(visible(namespace))
        details[box.id] = _details(graph, box, split_of, ids)
        parts.append(
            f'<g class="{" ".join(classes)}" id="{box.id}" data-id="{box.id}" data-kind="{box.kind}" '
            f'data-ns="{ns_attr}" data-layer="{box.layer}" data-x="{box.x:.1f}" data-y="{box.y:.1f}" '
            f'data-w="{box.w:.1f}" tabindex="0">'
            f'<rect x="{box.x:.1f}" y="{box.y:.1f}" width="{box.w:.1f}" height="{HEIGHT}" '
            f'rx="{4 if box.kind == "job" else 12}"/>'
            f'<text x="{box.x + 12:.1f}" y="{box.y + 15:.1f}" class="name">{escape(name_line)}</text>'
            f'<text x="{box.x + 12:.1f}" y="{box.y + 28:.1f}" class="sub">{escape(sub)}</text>'
            f"<title>{escape(visible(name))}\n{ns_attr}</title></g>"
        )
    parts.append('</g><g id="collapsed"></g></svg>')
    data = {
        "details": details,
        "edges": [[a, b] for a, b in edges],
        "jobs": sorted({k[1] for k in graph.jobs}),
        "groups": {g: d["children"] for g, d in details.items() if d.get("children")},
    }
    return "".join(parts), data, list(namespaces)


def _json_for_script(data: dict) -> str:
    return json.dumps(data, separators=(",", ":"), sort_keys=True, default=str).replace("<", "\\u003c")


def render_html(graph: LineageGraph, title: str = "planlineage lineage") -> str:
    hidden = graph.group_only()
    svg, data, namespaces = render_svg(graph, hidden)
    css = (_ASSETS / "page.css").read_text(encoding="utf-8")
    script = (_ASSETS / "page.js").read_text(encoding="utf-8")
    job_options = "".join(f'<option value="{escape(visible(j))}"></option>' for j in data["jobs"])
    ns_boxes = "".join(
        f'<label><input type="checkbox" class="collapse-ns" value="{escape(ns)}"> {escape(ns)}</label>'
        for ns in sorted(namespaces)
    )
    counts = f"{len(graph.jobs) - len(hidden)} jobs, {len(graph.datasets)} datasets, {len(graph.splits)} split(s)"
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(visible(title))}</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<style>{css}</style></head><body>"
        "<header><strong>planlineage</strong>"
        f'<span id="counts">{escape(counts)}</span>'
        '<input id="search" type="search" placeholder="search names" aria-label="search names">'
        '<input id="job-filter" list="job-names" placeholder="filter by job" aria-label="filter by job">'
        f'<datalist id="job-names">{job_options}</datalist>'
        '<button id="clear-filter" type="button">all jobs</button>'
        f'<details id="namespaces"><summary>collapse namespaces</summary>{ns_boxes}</details>'
        '<span class="legend"><span class="key job">job</span><span class="key dataset">dataset</span>'
        '<span class="key split">split</span><span class="key group">STATEMENT SET</span></span>'
        "</header>"
        f'<main><div id="canvas">{svg}</div>'
        '<aside id="details"><p class="hint">Click a job or dataset to see its facets.</p></aside></main>'
        f'<script id="graph-data" type="application/json">{_json_for_script(data)}</script>'
        f"<script>{script}</script></body></html>\n"
    )
