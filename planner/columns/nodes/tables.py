"""Tables: the columns a source scan produces (reshaped by pushed-down abilities) and the columns
a sink writes."""

from __future__ import annotations

from planlineage.planner.columns.algebra import (
    DIRECT,
    FILTER,
    IDENTITY,
    TRANSFORMATION,
    Field,
    Relation,
    Transformation,
    Unreadable,
    apply_step,
    field_at,
    indirect,
    union,
)
from planlineage.planner.columns.expression import Scope, expression
from planlineage.planner.columns.nodes.base import Node, handles
from planlineage.planner.columns.rowtypes import row_names
from planlineage.planner.walk import unquote_identifier


def table_columns(spec: dict, tables: dict) -> tuple[str, list[dict]]:
    table = spec.get("table") or {}
    identifier = table.get("identifier")
    if not isinstance(identifier, str):
        raise Unreadable("table identifier")
    name = unquote_identifier(identifier)
    described = (tables.get(name) or {}).get("columns")
    if isinstance(described, list):
        return name, described
    # Without the catalog's description, the plan's own schema (permanent tables only).
    columns = ((table.get("resolvedTable") or {}).get("schema") or {}).get("columns")
    if not isinstance(columns, list):
        raise Unreadable(f"columns of {name}")
    return name, [
        {
            "name": c.get("name"),
            "kind": str(c.get("kind", "physical")).lower(),
            "metadata_key": c.get("metadataKey") or c.get("name"),
        }
        for c in columns
    ]


def column_origin(table: str, column: dict) -> dict:
    description = None
    if column.get("kind") == "metadata":
        description = f"metadata key '{column.get('metadata_key') or column['name']}'"
    return {(table, column["name"]): frozenset({Transformation(DIRECT, "IDENTITY", description)})}


def table_fields(spec: dict, names: list[str] | None, tables: dict) -> Relation:
    """A source's produced row: its physical columns, reshaped by the abilities pushed into it."""
    table, columns = table_columns(spec, tables)
    fields = [Field(c["name"], column_origin(table, c)) for c in columns if c.get("kind") == "physical"]
    metadata = {c.get("metadata_key") or c["name"]: c for c in columns if c.get("kind") == "metadata"}
    rows: dict = {}
    for ability in spec.get("abilities") or []:
        fields, rows = _apply_ability(ability, fields, rows, table, metadata)
    if names is not None and len(names) != len(fields):
        # 1.18 does not serialise ReadingMetadata; the produced fields still carry column names.
        fields = _fields_by_name(names, table, columns)
    return Relation(fields, rows)


def _fields_by_name(names: list[str], table: str, columns: list[dict]) -> list[Field]:
    readable = {c["name"]: c for c in columns if c.get("kind") in ("physical", "metadata")}
    missing = [name for name in names if name not in readable]
    if missing:
        raise Unreadable(f"scan of {table}: output fields {missing} are not columns of the table")
    return [Field(name, column_origin(table, readable[name])) for name in names]


def _apply_ability(ability: dict, fields: list[Field], rows: dict, table: str, metadata: dict):
    kind = ability.get("type")
    if kind == "ProjectPushDown":
        projected = []
        for path in ability.get("projectedFields") or []:
            column = field_at(fields, path[0])
            # A nested path reads part of the column.
            origins = column.origins if len(path) == 1 else apply_step(column.origins, TRANSFORMATION)
            projected.append(Field(column.name, origins))
        return projected, rows
    if kind == "ReadingMetadata":
        added = []
        for key in ability.get("metadataKeys") or []:
            if key not in metadata:
                raise Unreadable(f"metadata key {key!r} of {table}")
            added.append(Field(metadata[key]["name"], column_origin(table, metadata[key])))
        return fields + added, rows
    if kind == "FilterPushDown":
        scope = Scope(fields)
        return fields, union(rows, indirect(FILTER, *(expression(p, scope) for p in ability.get("predicates") or [])))
    if kind == "PartitionPushDown":
        keys = {k for partition in ability.get("partitions") or [] for k in partition}
        return fields, union(rows, indirect(FILTER, *({(table, k): frozenset({IDENTITY})} for k in sorted(keys))))
    if kind in ("LimitPushDown", "WatermarkPushDown", "SourceWatermark"):
        return fields, rows
    raise Unreadable(f"source ability {kind!r}")


@handles("table-source-scan")
def _scan(n: Node) -> Relation:
    spec = n.get("scanTableSource")
    if not isinstance(spec, dict):
        raise Unreadable("scanTableSource")
    produced = table_fields(spec, n.names, n.tables)
    return Relation(n.named(produced.fields), produced.rows)


def sink_columns(n: Node) -> tuple[str, list[str]]:
    """The names of the sink's columns in the order its input row is written."""
    spec = n.get("dynamicTableSink") or {}
    table, columns = table_columns(spec, n.tables)
    names = [c["name"] for c in columns if c.get("kind") == "physical"]
    for ability in spec.get("abilities") or []:
        if ability.get("type") == "WritingMetadata":
            consumed = row_names(ability.get("consumedType"))
            if consumed is not None:
                names = consumed
            else:
                by_key = {c.get("metadata_key") or c["name"]: c["name"] for c in columns if c.get("kind") == "metadata"}
                names = names + [by_key[k] for k in ability.get("metadataKeys") or []]
    return table, names


def target_columns(n: Node, names: list[str]) -> list[str]:
    """INSERT INTO t (a, b): the other columns are not written (the plan feeds them NULL)."""
    targets = n.get("dynamicTableSink", "targetColumns")
    if not targets:
        return names
    return [names[path[0]] for path in targets if path and 0 <= path[0] < len(names)]
