"""The page's data: the graph laid out once in Python, as JSON the page script draws from.

The same data is embedded in the static page (`planlineage graph`) and served by `planlineage ui`
(`/api/graph`); the script places only the nodes inside the viewport in the DOM (each name an SVG
`<text>`), so a 5,000-job estate costs the browser only what is on screen.

- node ids are stable (a hash of kind, namespace and name): a URL `#node=...` keeps naming the same
  node when the served graph is rebuilt;
- a job's colour is the state of its last run (RUNNING, COMPLETE, FAIL, ABORT), a FAIL carries its
  error message;
- edges are routed: an edge spanning several layers crosses the layers between through a gap free
  of nodes and STATEMENT SET boxes, and a STATEMENT SET box is drawn per layer its jobs sit in, so
  no edge crosses a box it does not start or end in;
- column lineage: per dataset column, its input columns (dataset id, column, transformation).
"""

from __future__ import annotations

import bisect
import hashlib
from typing import Any

from planlineage.printable import visible

from .layout import HEIGHT, Box, labels, layout
from .model import LineageGraph, last_state

#: Event types drawn as a job's colour; START counts as RUNNING (the run has begun).
STATES = {"START": "RUNNING", "RUNNING": "RUNNING", "COMPLETE": "COMPLETE", "FAIL": "FAIL", "ABORT": "ABORT"}
STATE_NAMES = ("RUNNING", "COMPLETE", "FAIL", "ABORT")
#: How far a STATEMENT SET box reaches beyond its jobs (left/right, above for its label, below).
BOX_SIDE, BOX_TOP, BOX_BOTTOM = 8.0, 24.0, 10.0
#: Horizontal run of an edge outside a layer's column before it bends: clear of every box.
STUB = 14.0


def node_id(kind: str, key: tuple[str, str]) -> str:
    digest = hashlib.blake2b("\0".join((kind, *key)).encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()
    return ("n" if kind != "group" else "g") + digest


def summary(graph: LineageGraph) -> str:
    """The counts the page header and `planlineage graph`'s stderr both print."""
    jobs = len(graph.jobs) - len(graph.group_only())
    return f"{jobs} job(s), {len(graph.datasets)} dataset(s), {len(graph.splits)} split(s)"


def _curve(x1: float, y1: float, x2: float, y2: float) -> str:
    bend = max(20.0, (x2 - x1) / 2)
    return f"C{x1 + bend:.1f},{y1:.1f} {x2 - bend:.1f},{y2:.1f} {x2:.1f},{y2:.1f}"


class _Columns:
    """Per layer: where its column starts and ends, and the y intervals free of nodes and boxes."""

    def __init__(self, boxes: list[Box], segments: list[tuple[int, float, float, float, float]]) -> None:
        self.start: dict[int, float] = {}
        self.end: dict[int, float] = {}
        taken: dict[int, list[tuple[float, float]]] = {}
        for b in boxes:
            self.start[b.layer] = min(self.start.get(b.layer, b.x), b.x)
            self.end[b.layer] = max(self.end.get(b.layer, b.x + b.w), b.x + b.w)
            taken.setdefault(b.layer, []).append((b.y, b.y + HEIGHT))
        for layer, _x, y, _w, h in segments:
            taken.setdefault(layer, []).append((y, y + h))
        self.free: dict[int, list[tuple[float, float]]] = {}
        for layer, spans in taken.items():
            spans.sort()
            free = [(-1e9, spans[0][0] - 4)]
            reach = spans[0][1]
            for lo, hi in spans[1:]:
                if lo - reach >= 8:
                    free.append((reach + 4, lo - 4))
                reach = max(reach, hi)
            free.append((reach + 4, 1e9))
            self.free[layer] = free

    def through(self, layer: int, want: float) -> float:
        """The y nearest `want` at which an edge crosses this layer's column touching nothing."""
        free = self.free[layer]
        i = bisect.bisect_right([lo for lo, _ in free], want) - 1
        best, distance = want, float("inf")
        for lo, hi in free[max(0, i - 1) : i + 2]:
            y = min(max(want, lo), hi)
            if abs(y - want) < distance:
                best, distance = y, abs(y - want)
        return best


def _route(a: Box, b: Box, columns: _Columns) -> tuple[str, list[float]]:
    """(SVG path, bounding box [x0, y0, x1, y1]) of the edge a -> b."""
    x1, y1 = a.x + a.w, a.y + HEIGHT / 2
    x2, y2 = b.x, b.y + HEIGHT / 2
    if b.layer <= a.layer:  # a cycle within one layer (a job reading and writing one dataset)
        bend = max(40.0, abs(x2 - x1) / 2)
        path = f"M{x1:.1f},{y1:.1f} C{x1 + bend:.1f},{y1:.1f} {x2 - bend:.1f},{y2:.1f} {x2:.1f},{y2:.1f}"
        return path, [min(x1, x2) - bend, min(y1, y2), max(x1, x2) + bend, max(y1, y2)]
    cx, cy = columns.end[a.layer] + STUB, y1
    parts = [f"M{x1:.1f},{y1:.1f} H{cx:.1f}"]
    ys = [y1, y2]
    span = b.layer - a.layer
    for layer in range(a.layer + 1, b.layer):
        want = y1 + (y2 - y1) * (layer - a.layer) / span
        y = columns.through(layer, want)
        ys.append(y)
        x_in = columns.start[layer] - STUB
        parts.append(_curve(cx, cy, x_in, y))
        cx, cy = columns.end[layer] + STUB, y
        parts.append(f"H{cx:.1f}")
    x_in = x2 - STUB
    parts.append(_curve(cx, cy, x_in, y2))
    parts.append(f"H{x2:.1f}")
    return " ".join(parts), [x1, min(ys), x2, max(ys)]


def _group_segments(graph: LineageGraph, by_key: dict) -> list[dict[str, Any]]:
    """One entry per STATEMENT SET: its box drawn once per layer its jobs sit in."""
    groups = []
    for parent, children in sorted(graph.children().items()):
        members = [by_key[("job", c)] for c in children if ("job", c) in by_key]
        if not members:
            continue
        per_layer: dict[int, list[Box]] = {}
        for m in members:
            per_layer.setdefault(m.layer, []).append(m)
        segments = []
        for layer, boxes in sorted(per_layer.items()):
            x0 = min(b.x for b in boxes) - BOX_SIDE
            y0 = min(b.y for b in boxes) - BOX_TOP
            x1 = max(b.x + b.w for b in boxes) + BOX_SIDE
            y1 = max(b.y for b in boxes) + HEIGHT + BOX_BOTTOM
            segments.append((layer, round(x0, 1), round(y0, 1), round(x1 - x0, 1), round(y1 - y0, 1)))
        groups.append({"key": parent, "members": members, "segments": segments})
    return groups


def _state(graph: LineageGraph, key: tuple[str, str]) -> tuple[str, str]:
    last = last_state(graph.jobs[key])
    if last is None:
        return "", ""
    state = STATES.get(last["eventType"], "")
    return state, (last.get("error", "") if state == "FAIL" else "")


def _columns_of(facets: dict[str, Any]) -> list[str]:
    names: dict[str, None] = {}
    schema = facets.get("schema")
    if isinstance(schema, dict) and isinstance(schema.get("fields"), list):
        for f in schema["fields"]:
            if isinstance(f, dict) and f.get("name"):
                names.setdefault(str(f["name"]), None)
    lineage = facets.get("columnLineage")
    if isinstance(lineage, dict) and isinstance(lineage.get("fields"), dict):
        for name in lineage["fields"]:
            names.setdefault(str(name), None)
    return list(names)


def how(transformations: Any) -> str:
    """A column edge's label: its transformations as TYPE/SUBTYPE, comma separated."""
    if not isinstance(transformations, list):
        return ""
    return ", ".join(
        "/".join(str(t[k]) for k in ("type", "subtype") if t.get(k)) for t in transformations if isinstance(t, dict)
    )


def _column_lineage(graph: LineageGraph, ids: dict) -> dict[str, dict[str, list]]:
    """dataset id -> column -> [[input dataset id or None, namespace, name, column, how], ...]."""
    result: dict[str, dict[str, list]] = {}
    for key, node in graph.datasets.items():
        lineage = node.facets.get("columnLineage")
        if not isinstance(lineage, dict) or not isinstance(lineage.get("fields"), dict):
            continue
        own: dict[str, list] = {}
        for column, spec in lineage["fields"].items():
            inputs = spec.get("inputFields") if isinstance(spec, dict) else None
            rows = []
            for item in inputs or []:
                if not isinstance(item, dict) or not item.get("field"):
                    continue
                source = (str(item.get("namespace") or ""), str(item.get("name") or ""))
                label = how(item.get("transformations")) or how(spec.get("transformations"))
                rows.append([ids.get(("dataset", source)), source[0], source[1], str(item["field"]), label])
            if rows:
                own[str(column)] = rows
        if own and ("dataset", key) in ids:
            result[ids[("dataset", key)]] = own
    return result


def _details(graph: LineageGraph, box: Box, split_of: dict, ids: dict) -> dict[str, Any]:
    if box.kind == "dataset":
        node = graph.datasets[box.key]
        detail: dict[str, Any] = {
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
                    {"namespace": k[0], "name": k[1], "id": ids.get(("dataset", k))} for k in keys if k != box.key
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


def view(graph: LineageGraph) -> dict[str, Any]:
    """The page's data (JSON-ready): nodes with their place, routed edges, STATEMENT SET boxes,
    each node's facets, column lineage, counts."""
    hidden = graph.group_only()
    boxes, edges, width, height = layout(graph, hidden)
    by_key = {(b.kind, b.key): b for b in boxes}
    ids = {k: node_id(k[0], k[1]) for k in by_key}
    box_id = {id(b): ids[(b.kind, b.key)] for b in boxes}
    by_layout_id = {b.id: b for b in boxes}
    split_of = graph.split_of()
    groups = _group_segments(graph, by_key)
    columns = _Columns(boxes, [s for g in groups for s in g["segments"]])
    group_of: dict[str, str] = {}
    out_groups = []
    details: dict[str, dict] = {}
    for g in groups:
        parent = g["key"]
        gid = node_id("group", parent)
        job = graph.jobs.get(parent)
        children = [box_id[id(m)] for m in g["members"]]
        for c in children:
            group_of[c] = gid
        boxes_drawn = [s[1:] for s in g["segments"]]
        out_groups.append({"id": gid, "name": parent[1], "ns": parent[0], "children": children, "boxes": boxes_drawn})
        details[gid] = {
            "kind": "job",
            "namespace": parent[0],
            "name": parent[1],
            "producers": sorted(job.producers) if job else [],
            "children": [m.key[1] for m in g["members"]],
            "runs": job.runs if job else [],
            "facets": job.facets if job else {},
        }
    nodes = []
    namespaces: dict[str, None] = {}
    for b in boxes:
        nid = box_id[id(b)]
        name_line, sub = labels(graph, b.kind, b.key)
        node: dict[str, Any] = {
            "id": nid,
            "kind": b.kind,
            "name": b.key[1],
            "ns": b.key[0],
            "label": name_line,
            "sub": sub,
            "x": round(b.x, 1),
            "y": round(b.y, 1),
            "w": round(b.w, 1),
            "layer": b.layer,
        }
        if b.kind == "job":
            state, error = _state(graph, b.key)
            if state:
                node["state"] = state
            if error:
                node["error"] = error
            if nid in group_of:
                node["group"] = group_of[nid]
        else:
            namespaces.setdefault(visible(b.key[0]), None)
            if b.key in split_of:
                node["split"] = True
            cols = _columns_of(graph.datasets[b.key].facets)
            if cols:
                node["columns"] = cols
        nodes.append(node)
        details[nid] = _details(graph, b, split_of, ids)
    routed = []
    for source, target in edges:
        start, end = by_layout_id[source], by_layout_id[target]
        path, bbox = _route(start, end, columns)
        routed.append([box_id[id(start)], box_id[id(end)], path, [round(v, 1) for v in bbox]])
    return {
        "counts": summary(graph),
        "width": round(width, 1),
        "height": round(height, 1),
        "nodes": nodes,
        "edges": routed,
        "groups": out_groups,
        "details": details,
        "columns": _column_lineage(graph, ids),
        "jobs": sorted({k[1] for k in graph.jobs}),
        "namespaces": sorted(namespaces),
        "states": list(STATE_NAMES),
    }
