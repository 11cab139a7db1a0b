"""The lineage graph: jobs and datasets of OpenLineage events (or of planlineage's recorded runs),
rendered as one self-contained HTML page or as Graphviz DOT.

    from planlineage.graph import build, render_html, render_dot
    graph = build(["gravitino_lineage.log"], state=False, job=None)   # doctor's splits highlighted
    Path("lineage.html").write_text(render_html(graph))

Modules: model (the graph), layout (layers, crossing reduction, coordinates), view (the page's data:
places, routed edges, states, column lineage), focus (a large estate's first picture: its busiest
part, and a search index of all), html (the page and its assets/), server (`planlineage ui`: live.py
reads what was appended, connections.py bounds the connections), dot (DOT, also for `extract
--format dot`).
"""

from __future__ import annotations

from collections.abc import Sequence

from .dot import lineage_to_graph, render_dot, script_dot
from .focus import MAX_NODES, drawn_nodes, page_data
from .html import render_html, render_shell
from .model import LineageGraph, add_event, add_splits, finish, from_events, restrict_to_job, restrict_to_namespace


def build(
    event_files: Sequence[str] = (),
    state: bool = False,
    job: str | None = None,
    rules: str | None = None,
    namespace: str | None = None,
    events: Sequence[dict] = (),
) -> LineageGraph:
    """The graph of these inputs with the doctor's splits, the events read as a stream; raises the
    doctor's UnreadableInput, and KeyError when `job` names no job (`namespace` no job or dataset).
    `events`: events made already from scripts or extract documents (doctor.inputs)."""
    from planlineage.doctor import diagnose

    graph = LineageGraph()
    report = diagnose(
        event_files, state=state, rules=rules, on_event=lambda event: add_event(graph, event), events=events
    )
    add_splits(finish(graph), report.splits)
    if namespace:
        graph = restrict_to_namespace(graph, namespace)
    return restrict_to_job(graph, job) if job else graph


__all__ = [
    "build",
    "drawn_nodes",
    "MAX_NODES",
    "page_data",
    "render_html",
    "render_shell",
    "render_dot",
    "script_dot",
    "lineage_to_graph",
    "LineageGraph",
    "from_events",
]
