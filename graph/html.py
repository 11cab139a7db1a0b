"""The lineage page: one HTML shell, inline CSS and script, no network fetch, no library.

`render_html(graph)` embeds the page's data (view.view) as JSON: the static page of
`planlineage graph`. `render_shell()` is the same page without data, served by `planlineage ui`:
its script fetches `api/graph` and polls it. The script draws the graph from the data (layout
computed in Python), placing only the nodes inside the viewport in the DOM; every job, dataset
and column name drawn is SVG `<text>` (the browser's find, screen readers and tests see it).

Text from events reaches the page only as JSON inside a `type="application/json"` script (with
`<` escaped) or from the JSON endpoint, and through `textContent` in the script: never as markup.
Control characters are shown as visible escapes and a name longer than layout.MAX_LABEL is drawn
shortened; the node's `<title>` and the panel keep it whole.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from planlineage.printable import visible

from .model import LineageGraph
from .view import STATE_NAMES, view

_ASSETS = Path(__file__).resolve().parent / "assets"
#: Every colour the page draws besides the run states has its key (tests/graph/test_ui.py
#: collects the colours drawn and finds each in the legend): (class, text, tooltip).
LEGEND = (
    ("no-state", "no run state", "a job no run state was read for"),
    ("dataset", "dataset", "a dataset"),
    ("split", "split", "a dataset named differently elsewhere (see the doctor)"),
    ("group", "STATEMENT SET", "the jobs of one STATEMENT SET"),
    ("agg", "namespace", "a collapsed namespace's datasets"),
    ("pick", "selected / search hit", "the selected node, or a search hit"),
    ("col", "column lineage", "the selected column and its upstream columns"),
    ("dim", "not a hit", "not matching the search"),
)


def _json_for_script(data: dict) -> str:
    return json.dumps(data, separators=(",", ":"), sort_keys=True, default=str).replace("<", "\\u003c")


def view_json(data: dict[str, Any]) -> bytes:
    """The JSON endpoint's body."""
    return json.dumps(data, separators=(",", ":"), default=str).encode("utf-8")


def _page(title: str, body_data: str, api: str | None) -> str:
    css = (_ASSETS / "page.css").read_text(encoding="utf-8")
    script = (_ASSETS / "page.js").read_text(encoding="utf-8")
    legend = "".join(f'<span class="key state-{s}" title="last run: {s}">{s}</span>' for s in STATE_NAMES)
    legend += "".join(f'<span class="key {cls}" title="{why}">{text}</span>' for cls, text, why in LEGEND)
    depth = "".join(f'<option value="{n}">{n} hop{"s" if n > 1 else ""}</option>' for n in (1, 2, 3, 4, 6, 8, 12))
    api_attr = f' data-api="{escape(api)}"' if api else ""
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(visible(title))}</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<style>{css}</style></head><body{api_attr}>"
        "<header><strong>planlineage</strong>"
        '<span id="counts"></span><span id="focus" class="hint"></span><span id="live" class="hint"></span>'
        '<input id="search" type="search" placeholder="search names" aria-label="search names">'
        '<input id="job-filter" list="job-names" placeholder="filter by job" aria-label="filter by job">'
        '<datalist id="job-names"></datalist>'
        '<button id="clear-filter" type="button">all jobs</button>'
        '<label class="depth">depth <select id="depth" aria-label="depth around the selected node">'
        f'<option value="0">all</option>{depth}</select></label>'
        '<span class="zoom"><button id="zoom-out" type="button" aria-label="zoom out">−</button>'
        '<button id="fit" type="button">fit</button>'
        '<button id="zoom-in" type="button" aria-label="zoom in">+</button></span>'
        '<details id="namespaces"><summary>collapse namespaces</summary><div id="ns-list"></div></details>'
        f'<span class="legend" id="legend">{legend}</span>'
        "</header>"
        '<main id="main"><div id="canvas"><svg id="graph" xmlns="http://www.w3.org/2000/svg" role="group" '
        'aria-label="lineage graph"><defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" '
        'markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'class="arrowhead"/></marker></defs><g id="viewport"><g id="overview"></g><g id="groups"></g>'
        '<g id="edges"></g><g id="nodes"></g><g id="collapsed"></g><g id="columns"></g></g></svg>'
        '<div id="mode" class="hint"></div><div id="found" hidden></div></div>'
        '<div id="resizer" role="separator" aria-orientation="vertical" aria-label="resize the facets panel" '
        'tabindex="0"></div>'
        '<aside id="panel"><button id="panel-toggle" type="button" aria-expanded="true" '
        'aria-label="collapse the facets panel">⟩</button>'
        '<div id="details"><p class="hint">Click a job or dataset to see its facets.</p></div></aside></main>'
        f"{body_data}<script>{script}</script></body></html>\n"
    )


def render_html(graph: LineageGraph, title: str = "planlineage lineage", data: dict[str, Any] | None = None) -> str:
    """The static page: the data embedded (`data`: focus.page_data's, else the whole graph's)."""
    embedded = _json_for_script(view(graph) if data is None else data)
    return _page(title, f'<script id="graph-data" type="application/json">{embedded}</script>', None)


def render_shell(title: str = "planlineage lineage", api: str = "api/graph") -> str:
    """The served page: no data of its own, the script fetches `api` and polls it."""
    return _page(title, "", api)
