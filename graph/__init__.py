"""The lineage graph: jobs and datasets of OpenLineage events (or of planlineage's recorded runs),
rendered as one self-contained HTML page or as Graphviz DOT.

    from planlineage.graph import build, render_html, render_dot
    graph = build(["gravitino_lineage.log"], state=False, job=None)   # doctor's splits highlighted
    Path("lineage.html").write_text(render_html(graph))

Modules: model (the graph), layout (layers, crossing reduction, coordinates), html (the page and
its assets/), dot (DOT, also for `extract --format dot`).
"""

from __future__ import annotations

from collections.abc import Sequence

from .dot import lineage_to_graph, render_dot, script_dot
from .html import render_html
from .model import LineageGraph, add_event, add_splits, finish, from_events, restrict_to_job


def build(
    event_files: Sequence[str] = (), state: bool = False, job: str | None = None, rules: str | None = None
) -> LineageGraph:
    """The graph of these inputs with the doctor's splits; raises the doctor's UnreadableInput,
    and KeyError when `job` names no job."""
    from planlineage.doctor import diagnose

    graph = LineageGraph()
    report = diagnose(event_files, state=state, rules=rules, on_event=lambda event: add_event(graph, event))
    add_splits(finish(graph), report.splits)
    return restrict_to_job(graph, job) if job else graph


__all__ = ["build", "render_html", "render_dot", "script_dot", "lineage_to_graph", "LineageGraph", "from_events"]
