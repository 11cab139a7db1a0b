"""A left-to-right layered layout of the lineage graph, in Python (no layout engine in the page).

1. Layers: networkx topological generations of the condensation (a job that reads and writes the
   same dataset makes a cycle; its strongly connected part shares a layer).
2. Order within a layer: barycenter sweeps (down then up, a few times), the usual crossing
   reduction of Sugiyama-style layouts; STATEMENT SET siblings are then kept next to each other,
   so their parent's box encloses them and little else.
3. Coordinates: a layer is as wide as its longest label (names longer than MAX_LABEL characters
   are drawn shortened around an ellipsis), rows are of fixed height.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from planlineage.printable import shorten, visible

from .model import LineageGraph

ROW = 46  # vertical distance between nodes of a layer
HEIGHT = 34  # node box height: the name, and the namespace below it
LAYER_GAP = 90  # horizontal gap between layers
CHAR = 7.3  # glyph width of the 12px monospace name font
SMALL_CHAR = 6.1  # glyph width of the 10px monospace namespace font
PAD = 16
TOP = 40.0  # room above the first row for a STATEMENT SET box's label
GROUP_GAP = 26.0  # extra room where a STATEMENT SET box starts or ends within a layer
SWEEPS = 4
#: Characters of a name drawn in a node: a 10,000-character name must not make the page 70,000 px wide.
MAX_LABEL = 80


@dataclass
class Box:
    id: str
    kind: str  # "job" | "dataset"
    key: tuple[str, str]
    layer: int
    x: float = 0.0
    y: float = 0.0
    w: float = 0.0
    h: float = HEIGHT


def shown(text: str) -> str:
    """Text of an event as drawn: control characters escaped, at most MAX_LABEL characters."""
    return shorten(visible(text), MAX_LABEL)


def labels(graph: LineageGraph, kind: str, key: tuple[str, str]) -> tuple[str, str]:
    """(name line, second line) of a node as drawn: a dataset's namespace, a job's namespace and
    producers; each line shortened to MAX_LABEL characters (the node's title holds it whole)."""
    namespace, name = key
    if kind == "dataset":
        return shown(name), shown(namespace)
    from planlineage.doctor.explain import producer_kind

    producers = ", ".join(sorted({producer_kind(p) for p in graph.jobs[key].producers if p})) or "unknown producer"
    return shown(name), shown(namespace if producers == namespace else f"{namespace} · {producers}")


def label_width(name: str, sub: str) -> float:
    return max(90.0, len(name) * CHAR + 2 * PAD, len(sub) * SMALL_CHAR + 2 * PAD)


def build_digraph(graph: LineageGraph, hidden: set | None = None) -> nx.DiGraph:
    hidden = graph.group_only() if hidden is None else hidden
    g = nx.DiGraph()
    for key in graph.datasets:
        g.add_node(("dataset", key))
    for key, job in graph.jobs.items():
        if key in hidden:
            continue
        g.add_node(("job", key))
        for d in sorted(job.inputs):
            g.add_edge(("dataset", d), ("job", key))
        for d in sorted(job.outputs):
            g.add_edge(("job", key), ("dataset", d))
    return g


def _layers(g: nx.DiGraph) -> dict:
    condensed = nx.condensation(g)
    layer_of = {}
    for i, generation in enumerate(nx.topological_generations(condensed)):
        for scc in generation:
            for node in condensed.nodes[scc]["members"]:
                layer_of[node] = i
    # pull sources (datasets read by one job only) right next to their reader
    for node in g.nodes:
        succ = list(g.successors(node))
        if not list(g.predecessors(node)) and succ:
            layer_of[node] = max(layer_of[node], min(layer_of[s] for s in succ) - 1)
    return layer_of


def _order(g: nx.DiGraph, layers: list[list], group_of: dict) -> None:
    pos = {n: i for layer in layers for i, n in enumerate(layer)}

    def sweep(neighbours) -> None:
        for layer in layers:
            bary = {}
            for n in layer:
                ns = [pos[m] for m in neighbours(n) if m in pos]
                bary[n] = sum(ns) / len(ns) if ns else pos[n]
            layer.sort(key=lambda n: bary[n])
            for i, n in enumerate(layer):
                pos[n] = i

    for _ in range(SWEEPS):
        sweep(g.predecessors)
        layers.reverse()
        sweep(g.successors)
        layers.reverse()
    for layer in layers:  # siblings of one parent stay together, at their mean position
        mean: dict = {}
        for n in layer:
            mean.setdefault(group_of.get(n, n), []).append(pos[n])

        def key(n, mean=mean):
            group = group_of.get(n, n)
            return (sum(mean[group]) / len(mean[group]), repr(group), pos[n])  # repr: one group, one run

        layer.sort(key=key)
        for i, n in enumerate(layer):
            pos[n] = i


def layout(graph: LineageGraph, hidden: set | None = None) -> tuple[list[Box], list[tuple[str, str]], float, float]:
    """(boxes, edges as (id, id), width, height); `hidden`: graph.group_only(), when known."""
    g = build_digraph(graph, hidden)
    if not g.nodes:
        return [], [], 0.0, 0.0
    layer_of = _layers(g)
    count = max(layer_of.values()) + 1
    layers: list[list] = [[] for _ in range(count)]
    for node in sorted(g.nodes, key=lambda n: (n[0], n[1])):
        layers[layer_of[node]].append(node)
    group_of = {("job", k): ("group", j.parent) for k, j in graph.jobs.items() if j.parent is not None}
    _order(g, layers, group_of)

    ids = {}
    boxes: list[Box] = []
    x = 20.0
    height = 0.0
    for i, layer in enumerate(layers):
        widths = [label_width(*labels(graph, node[0], node[1])) for node in layer]
        widest = max(widths, default=0.0)
        y = TOP
        previous = None
        for row, (node, w) in enumerate(zip(layer, widths)):
            group = group_of.get(node)
            if row and group != previous:
                y += GROUP_GAP  # room for a STATEMENT SET box's border and label
            box = Box(f"n{len(boxes)}", node[0], node[1], i, x, y, w)
            ids[node] = box.id
            boxes.append(box)
            height = max(height, box.y + HEIGHT + 20)
            y += ROW
            previous = group
        x += widest + LAYER_GAP
    edges = [(ids[a], ids[b]) for a, b in g.edges]
    return boxes, edges, x, height
