"""The walk: every node from the sources to the sinks, each read by its handler.

A node kind no handler knows, or a known one whose JSON the handler cannot read, never yields a
guessed edge: its output columns derive INDIRECT (no subtype) from every input column, and a
warning names the node kind.
"""

from __future__ import annotations

from planlineage.planner.columns.algebra import (
    INDIRECT,
    Field,
    Relation,
    SinkColumns,
    Transformation,
    Unreadable,
    indirect,
    to_sources,
    union,
)
from planlineage.planner.columns.nodes import HANDLERS, Node
from planlineage.planner.columns.nodes.tables import column_origin, sink_columns, table_columns, target_columns
from planlineage.planner.columns.rowtypes import row_names
from planlineage.planner.walk import embedded_tables, node_kind, plan_graph, topological_order


def fallback(n: Node, reason: str, warnings: list[str]) -> Relation:
    """Not understood: every output column derives INDIRECT from every input column."""
    warnings.append(
        f"column lineage: node kind '{n.kind}' (node {n.node.get('id')}) is not understood ({reason}); "
        "its columns are reported as derived INDIRECT from every input column"
    )
    unknown = Transformation(INDIRECT, None, f"not analysed: {n.kind}")
    read = [f.origins for r in n.inputs for f in r.fields] + [r.rows for r in n.inputs] + _embedded_columns(n)
    everything = indirect(unknown, *read)
    width = len(n.names) if n.names is not None else max((len(r.fields) for r in n.inputs), default=0)
    return Relation([Field(n.name(i), everything) for i in range(width)], everything)


def _embedded_columns(n: Node) -> list[dict]:
    """Every column of a table the node reads by itself (a lookup-like node has no edge to it)."""
    found = []
    for table in embedded_tables(n.node):
        try:
            name, columns = table_columns({"table": table}, n.tables)
        except Unreadable:
            continue
        found += [column_origin(name, c) for c in columns if c.get("kind") in ("physical", "metadata")]
    return found


def _evaluate(n: Node, warnings: list[str]) -> Relation:
    handler = HANDLERS.get(n.op) if n.kind.startswith(("stream-exec-", "batch-exec-")) else None
    if handler is None:
        return fallback(n, "unknown node kind", warnings)
    try:
        relation = handler(n)
    # A shape a handler did not expect (a key renamed in a later Flink, a list where a dict was)
    # must end in the conservative answer, never in a crash or a half-read node.
    except (Unreadable, KeyError, TypeError, ValueError, IndexError, AttributeError) as error:
        return fallback(n, str(error) or type(error).__name__, warnings)
    if n.names is not None and len(relation.fields) != len(n.names):
        return fallback(n, f"{len(relation.fields)} columns computed for {len(n.names)} output fields", warnings)
    return relation


def column_lineage(plan: dict, tables: dict) -> tuple[dict[str, SinkColumns], list[str]]:
    """Per sink table (unquoted identifier, as planner.walk names it), its column lineage.

    `tables` is the compile server's catalog description (`{"cat.db.t": {"columns": [...]}}`).
    Returns the lineage and warnings (one per node that fell back to the conservative answer).
    """
    graph = plan_graph(plan)
    inputs: dict[int, list[int]] = {}
    for edge in plan.get("edges", []):
        inputs.setdefault(edge["target"], []).append(edge["source"])
    relations: dict[int, Relation] = {}
    warnings: list[str] = []
    per_sink: dict[str, tuple[dict, dict]] = {}
    for node_id in topological_order(graph):
        node = graph.nodes[node_id]["node"]
        n = Node(
            node,
            node_kind(node),
            [relations[i] for i in inputs.get(node_id, [])],
            row_names(node.get("outputType")),
            tables,
        )
        if node.get("dynamicTableSink"):
            _collect_sink(n, per_sink, warnings)
            continue
        relations[node_id] = _evaluate(n, warnings)
    result = {
        table: SinkColumns({c: to_sources(lineage) for c, lineage in columns.items()}, to_sources(rows))
        for table, (columns, rows) in per_sink.items()
    }
    return result, list(dict.fromkeys(warnings))


def _collect_sink(n: Node, per_sink: dict, warnings: list[str]) -> None:
    """Positional: the sink's input row is written into the sink's columns in order."""
    try:
        table, names = sink_columns(n)
    except Unreadable as error:
        warnings.append(f"column lineage: the columns of sink node {n.node.get('id')} cannot be named ({error})")
        return
    source = n.input() if n.inputs else Relation([])
    if len(source.fields) != len(names):
        everything = fallback(n, f"{len(source.fields)} input fields for {len(names)} sink columns", warnings).rows
        source = Relation([Field(name, everything) for name in names], everything)
    written = set(target_columns(n, names))
    columns, rows = per_sink.setdefault(table, ({}, {}))
    for name, column in zip(names, source.fields):
        if name in written:
            columns[name] = union(columns.get(name, {}), column.origins)
    rows.update(union(rows, source.rows))
