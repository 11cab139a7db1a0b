"""Walks a CompiledPlan from each sink back to the tables that feed it, on a networkx graph.

A plan is `{flinkVersion, nodes, edges}`. Tables sit in sources (`scanTableSource.table`), in
sinks (`dynamicTableSink.table`) and inside other nodes: a lookup join embeds its dimension table
at `temporalTable.lookupTableSource.table`, with no edge to it. Rather than list node types, which
gain suffixes across versions (`_1`, `_2`) and new kinds, every object under a `table` key that
carries an `identifier` counts as a table the node reads — except a sink's own table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import networkx as nx

STAND_IN = "planlineage-standin"
ORIGINAL_CONNECTOR = "planlineage.connector"
CHANGELOG_MODE = "planlineage.changelog-mode"
SINK_CHANGES = "planlineage.sink-changes"  # a stood-in sink of a batch job planned in streaming mode


@dataclass
class TableUse:
    """One table as a plan node uses it."""

    identifier: str  # unquoted catalog.database.table
    plan_options: dict[str, str] | None  # None when the plan carries none (temporary tables)
    hint_options: dict[str, str] = field(default_factory=dict)  # OPTIONS hints read from the node
    node_type: str = ""


@dataclass
class SinkInputs:
    sink: TableUse
    inputs: list[TableUse]


def plan_graph(plan: dict) -> nx.DiGraph:
    """The plan as a directed graph: a node per plan node (its id; the node's JSON as attribute
    `node`, in plan order), an edge from each node to the nodes that read it.

    A node read twice (a self-join) is one edge. The independent INSERTs of a statement set are
    separate weakly connected components; INSERTs that share a source or a view share nodes.
    """
    graph = nx.DiGraph()
    graph.add_nodes_from((node["id"], {"node": node}) for node in plan.get("nodes", []))
    for edge in plan.get("edges", []):
        source, target = edge["source"], edge["target"]
        if source not in graph or target not in graph:
            raise ValueError(f"plan edge {source} -> {target} names a node the plan does not have")
        graph.add_edge(source, target)
    return graph


def topological_order(graph: nx.DiGraph) -> list[int]:
    """Inputs before the nodes that read them: generation by generation, plan order within one
    (networkx's topological sort walks the generations in the order nodes and edges were added)."""
    try:
        return list(nx.topological_sort(graph))
    except nx.NetworkXUnfeasible:
        raise ValueError("the plan's edges form a cycle") from None


def node_kind(node: dict) -> str:
    """`stream-exec-sink_2` -> `stream-exec-sink`: version suffixes do not change what a node is."""
    kind = re.sub(r"_\d+$", "", node.get("type", ""))
    if kind == "null_null" and str(node.get("description", "")).startswith("Sort("):
        # Flink 1.15-1.17 write their streaming Sort (a batch job re-planned in streaming mode)
        # without its type: the node's description is all that says what it is.
        return "stream-exec-sort"
    return kind


def sink_inputs(plan: dict) -> list[SinkInputs]:
    """Per sink table, the tables read upstream of it, in plan order, without duplicates.

    Two INSERTs into the same table are one sink with the union of their inputs; independent
    INSERTs of a statement set stay separate pairings.
    """
    graph = plan_graph(plan)
    nodes = graph.nodes
    by_sink: dict[str, SinkInputs] = {}
    tables_of: dict[object, list[dict]] = {}  # per node, read once: sinks of a statement set share their upstream nodes
    for node_id, node in nodes.data("node"):
        sink_table = (node.get("dynamicTableSink") or {}).get("table")
        if not sink_table:
            continue
        sink = _use(sink_table, node)
        entry = by_sink.setdefault(sink.identifier, SinkInputs(sink=sink, inputs=[]))
        # Upstream stays within the sink's own component: an independent INSERT of a statement
        # set reads none of another's tables.
        upstream = sorted(nx.ancestors(graph, node_id) | {node_id})
        for upstream_id in upstream:
            upstream_node = nodes[upstream_id]["node"]
            if upstream_id not in tables_of:
                tables_of[upstream_id] = embedded_tables(upstream_node)
            for table in tables_of[upstream_id]:
                use = _use(table, upstream_node)
                if not any(_same(use, seen) for seen in entry.inputs):
                    entry.inputs.append(use)
    return list(by_sink.values())


def embedded_tables(node: dict) -> list[dict]:
    """Every table a node reads: any `table` object with an identifier, the sink's own excepted."""
    found: list[dict] = []

    # Only containers are visited: most values are strings and numbers, and a call for each of
    # them cost more than the rest of the walk.
    def visit(value: dict | list, key: str | None) -> None:
        if isinstance(value, list):
            for item in value:
                if type(item) is dict or type(item) is list:
                    visit(item, key)
            return
        if key == "table" and isinstance(value.get("identifier"), str):
            found.append(value)
            return
        for child_key, child in value.items():
            if (type(child) is dict or type(child) is list) and child_key != "dynamicTableSink":
                visit(child, child_key)

    visit(node, None)
    return found


def _same(a: TableUse, b: TableUse) -> bool:
    return a.identifier == b.identifier and effective_options(a, {}) == effective_options(b, {})


def _use(table: dict, node: dict) -> TableUse:
    resolved = table.get("resolvedTable") or {}
    options = resolved.get("options")
    identifier = unquote_identifier(table["identifier"])
    return TableUse(
        identifier=identifier,
        plan_options=dict(options) if isinstance(options, dict) else None,
        hint_options=hint_options(node.get("description", ""), identifier),
        node_type=node_kind(node),
    )


def effective_options(use: TableUse, catalog_options: dict[str, str] | None) -> dict[str, str]:
    """The options the job really runs the table with: hints applied, stand-in undone.

    Permanent tables carry their options in the plan, temporary tables carry none (their options
    come from the catalog). Hints are applied from the node's description in both cases: 1.x plans
    do not merge a sink's hints into its options.
    """
    options = dict(use.plan_options if use.plan_options is not None else catalog_options or {})
    options.update(use.hint_options)
    if options.get("connector") == STAND_IN and ORIGINAL_CONNECTOR in options:
        options["connector"] = options[ORIGINAL_CONNECTOR]
    options.pop(ORIGINAL_CONNECTOR, None)
    options.pop(CHANGELOG_MODE, None)
    options.pop(SINK_CHANGES, None)
    return options


_SIMPLY_QUOTED = re.compile(r"`[^`]*`(?:\.`[^`]*`)*")
_QUOTED_PART = re.compile(r"`([^`]*)`")


def unquote_identifier(text: str) -> str:
    """`` `cat`.`db`.`t` `` -> `cat.db.t` (backticks doubled inside a name are one backtick)."""
    if _SIMPLY_QUOTED.fullmatch(text):  # what plans write, without doubled backticks: no scan
        return ".".join(_QUOTED_PART.findall(text))
    parts, current, quoted, i = [], [], False, 0
    while i < len(text):
        c = text[i]
        if c == "`":
            if quoted and text.startswith("``", i):
                current.append("`")
                i += 2
                continue
            quoted = not quoted
        elif c == "." and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(c)
        i += 1
    parts.append("".join(current))
    return ".".join(parts)


_HINTS = re.compile(r"OPTIONS(?: inheritPath:\[[^\]]*\])? options:\{")


def hint_options(description: str, identifier: str = "") -> dict[str, str]:
    """OPTIONS hints as a node's description prints them: `hints=[[[OPTIONS options:{k=v, k2=v2}]]]`.

    Java prints the map as `{k=v, k2=v2}`; a pair starts where `, ` is followed by a key and `=`,
    so values containing `, ` stay whole unless the text after it looks like another option key.
    """
    found: dict[str, str] = {}
    for match in _HINTS.finditer(description or ""):
        start = match.end()
        depth, end = 1, start
        while end < len(description) and depth:
            if description[end] == "{":
                depth += 1
            elif description[end] == "}":
                depth -= 1
            end += 1
        body = description[start : end - 1]
        pieces = re.split(r", (?=[A-Za-z0-9_.\-]+=)", body)
        for piece in pieces:
            key, sep, value = piece.partition("=")
            if sep:
                found[key] = value
    return found
