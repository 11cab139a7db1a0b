"""A first picture of a large estate: its busiest part, laid out on its own, and a search over all.

A page of 5,000 jobs (14,000 nodes) fitted to a screen is specks, and laying out 20,000 jobs takes
Python 20 s: past MAX_NODES drawn nodes, the page draws the part around the most connected job (the
job whose datasets the most other jobs read or write), grown hop by hop up to FOCUS_NODES nodes,
with the estate's counts and an index of every job and dataset name for the search. `planlineage
ui` answers `?around=ID` with the part around any node of the index, so a search reaches all of it;
the static page says which `planlineage graph --job` / `--namespace` draws another part.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from .model import DatasetKey, JobKey, LineageGraph
from .view import node_id, summary, view

#: Nodes a page draws whole (the page names them when at most its DETAIL_MAX are in view).
MAX_NODES = 5000
#: Nodes of the part drawn first when the estate is larger: readable fitted to a screen.
FOCUS_NODES = 100


def drawn_nodes(graph: LineageGraph) -> int:
    """The nodes a page draws: datasets, and jobs other than a STATEMENT SET drawn as a box."""
    return len(graph.datasets) + len(graph.jobs) - len(graph.group_only())


def _cached(graph: LineageGraph, name: str, make: Callable[[LineageGraph], Any]) -> Any:
    """Derived once per finished graph: `ui` asks for many parts of the same graph."""
    if name not in graph.cache:
        graph.cache[name] = make(graph)
    return graph.cache[name]


def _ids(graph: LineageGraph) -> dict[str, tuple[str, Any]]:
    ids = {node_id("dataset", k): ("dataset", k) for k in graph.datasets}
    ids.update({node_id("job", k): ("job", k) for k in graph.jobs})
    return ids


def _touching(graph: LineageGraph) -> dict[DatasetKey, list[JobKey]]:
    jobs_of: dict[DatasetKey, list[JobKey]] = {}
    for key, job in graph.jobs.items():
        for d in (*job.inputs, *job.outputs):
            jobs_of.setdefault(d, []).append(key)
    return jobs_of


def busiest_job(graph: LineageGraph, jobs_of: dict[DatasetKey, list[JobKey]]) -> JobKey | None:
    """The job whose datasets the most jobs touch (ties: the first name)."""
    best: tuple[int, tuple[str, str]] | None = None
    for key, job in graph.jobs.items():
        score = sum(len(jobs_of.get(d, ())) for d in (*job.inputs, *job.outputs))
        if score and (best is None or score > best[0] or (score == best[0] and key < best[1])):
            best = (score, key)
    return best[1] if best else None


def part_around(
    graph: LineageGraph, start: tuple[str, JobKey], budget: int, jobs_of: dict[DatasetKey, list[JobKey]]
) -> LineageGraph:
    """The nodes within the fewest hops of `start` (("job"|"dataset", key)), at most `budget` of
    them (a job comes with all its datasets), as a graph of their own."""
    jobs: set[JobKey] = set()
    datasets: set[DatasetKey] = set()
    frontier = [start]
    seen = {start}
    while frontier and len(jobs) + len(datasets) < budget:
        following: list[tuple[str, Any]] = []
        for kind, key in sorted(frontier):
            if len(jobs) + len(datasets) >= budget:
                break
            if kind == "job":
                job = graph.jobs[key]
                jobs.add(key)
                near = [("dataset", d) for d in sorted((*job.inputs, *job.outputs))]
                datasets.update(d for _, d in near)
            else:
                datasets.add(key)
                near = [("job", j) for j in sorted(jobs_of.get(key, ()))]
            for item in near:
                if item not in seen:
                    seen.add(item)
                    following.append(item)
        frontier = following
    part = LineageGraph()
    for key in jobs:
        job = graph.jobs[key]
        part.jobs[key] = replace(job, inputs=job.inputs & datasets, outputs=job.outputs & datasets)
        if job.parent is not None and job.parent in graph.jobs and job.parent not in part.jobs:
            parent = graph.jobs[job.parent]
            part.jobs[job.parent] = replace(parent, inputs=parent.inputs & datasets, outputs=parent.outputs & datasets)
    part.datasets = {k: graph.datasets[k] for k in datasets if k in graph.datasets}
    part.splits = [(keys, why) for keys, why in graph.splits if len([k for k in keys if k in part.datasets]) > 1]
    return part


def index(graph: LineageGraph) -> list[list[str]]:
    """[id, kind, namespace, name] of every job and dataset: what the page's search looks through."""
    return [[nid, kind, key[0], key[1]] for nid, (kind, key) in _cached(graph, "ids", _ids).items()]


def focus_graph(
    graph: LineageGraph, around: str | None = None, limit: int = MAX_NODES, budget: int = FOCUS_NODES
) -> tuple[LineageGraph, tuple[str, Any] | None]:
    """(what a page draws, the node it is centred on): the whole graph when it has at most `limit`
    nodes (and no `around` is asked), else the part around the node `around` (an id of `index`)
    or around the busiest job."""
    if drawn_nodes(graph) <= limit and around is None:
        return graph, None
    jobs_of = _cached(graph, "touching", _touching)
    start: tuple[str, Any] | None = None
    if around:
        start = _cached(graph, "ids", _ids).get(around)
        if start is not None and start[0] == "job" and start[1] in graph.group_only():
            start = ("job", graph.children()[start[1]][0])
    if start is None:
        busiest = _cached(graph, "busiest", lambda g: busiest_job(g, jobs_of))
        start = ("job", busiest) if busiest else ("dataset", min(graph.datasets)) if graph.datasets else None
    if start is None:
        return graph, None
    return part_around(graph, start, min(budget, limit), jobs_of), start


def page_data(
    graph: LineageGraph, around: str | None = None, limit: int = MAX_NODES, budget: int = FOCUS_NODES
) -> dict[str, Any]:
    """The page's data (view.view) of focus_graph's part; for a part, also the estate's counts,
    what is shown (`focus`) and the search `index` of every node."""
    part, start = focus_graph(graph, around, limit, budget)
    data = view(part)
    if start is None:
        return data
    shown, total = drawn_nodes(part), drawn_nodes(graph)
    what = "the part" if around else "the busiest part"
    data["focus"] = {
        "text": f"{shown} of {total} nodes: {what} around {start[0]} {start[1][1]}; search to draw another part",
        "around": node_id(*start),
        "shown": shown,
        "total": total,
    }
    data["counts"] = summary(graph)
    data["index"] = _cached(graph, "index", index)
    data["jobs"] = _cached(graph, "jobs", lambda g: sorted({k[1] for k in g.jobs}))
    return data
