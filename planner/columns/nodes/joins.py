"""Joins: regular, semi/anti, interval, temporal, window, nested-loop and lookup joins."""

from __future__ import annotations

from planlineage.planner.columns.algebra import (
    JOIN,
    WINDOW,
    Field,
    Relation,
    Unreadable,
    field_at,
    indirect,
    lineage_of,
    union,
)
from planlineage.planner.columns.expression import Scope, expression
from planlineage.planner.columns.nodes.base import Node, handles, windowing_time
from planlineage.planner.columns.nodes.tables import table_fields
from planlineage.planner.columns.rowtypes import row_names


def _join_rows(left: Relation, right: Relation, left_keys, right_keys, condition) -> dict:
    both = left.fields + right.fields
    keys = union(lineage_of(left.fields, left_keys), lineage_of(right.fields, right_keys))
    on = expression(condition, Scope(both)) if condition else {}
    return union(left.rows, right.rows, indirect(JOIN, keys, on))


def _join_output(join_type, left: Relation, right: Relation) -> list[Field]:
    # SEMI and ANTI joins (IN / EXISTS subqueries) only emit the left row.
    return list(left.fields) if join_type in ("SEMI", "ANTI") else left.fields + right.fields


@handles("join", "interval-join", "temporal-join", "window-join")
def _join(n: Node) -> Relation:
    """Regular, interval, temporal and window joins share `joinSpec`; time attributes join too."""
    left, right = n.input(0), n.input(1)
    spec = n.get("joinSpec") or n.get("intervalJoinSpec", "joinSpec") or {}
    if not spec:
        raise Unreadable("joinSpec")
    left_keys, right_keys = list(spec.get("leftKeys") or []), list(spec.get("rightKeys") or [])
    bounds = n.get("intervalJoinSpec", "windowBounds") or {}
    for key, side in (
        ("leftTimeIndex", left_keys),
        ("rightTimeIndex", right_keys),
        ("leftTimeAttributeIndex", left_keys),
        ("rightTimeAttributeIndex", right_keys),
    ):
        index = bounds.get(key, n.get(key))
        if isinstance(index, int) and index >= 0:
            side.append(index)
    rows = _join_rows(left, right, left_keys, right_keys, spec.get("nonEquiCondition"))
    windows = union(
        *(
            windowing_time(n.get(w), r.fields)
            for w, r in (("leftWindowing", left), ("rightWindowing", right))
            if n.get(w)
        )
    )
    rows = union(rows, indirect(WINDOW, windows))
    return Relation(n.named(_join_output(spec.get("joinType"), left, right)), rows)


@handles("nested-loop-join")
def _nested_loop_join(n: Node) -> Relation:
    left, right = n.input(0), n.input(1)
    rows = _join_rows(left, right, [], [], n.get("condition"))
    return Relation(n.named(_join_output(n.get("joinType"), left, right)), rows)


@handles("lookup-join")
def _lookup_join(n: Node) -> Relation:
    """The dimension table is read inside the node: its fields come from its own table spec."""
    source = n.input()
    temporal = n.get("temporalTable") or {}
    spec = temporal.get("lookupTableSource")
    if not isinstance(spec, dict):
        raise Unreadable("temporalTable.lookupTableSource")
    dim = table_fields(spec, row_names(temporal.get("outputType")), n.tables)
    dim_scope = Scope(dim.fields)
    keys = n.get("lookupKeys") or {}
    key_lineage = []
    for dim_index, key in keys.items():
        key_lineage.append(field_at(dim.fields, int(dim_index)).origins)
        if key.get("type") == "FieldRef":
            key_lineage.append(field_at(source.fields, key.get("index")).origins)
    projection = n.get("projectionOnTemporalTable")
    dim_fields = [Field("", expression(p, dim_scope)) for p in projection] if projection else dim.fields
    dim_filter = expression(n.get("filterOnTemporalTable"), dim_scope) if n.get("filterOnTemporalTable") else {}
    condition = n.get("joinCondition")
    on = expression(condition, Scope(source.fields + dim_fields)) if condition else {}
    pre = n.get("preFilterCondition")
    pre_filter = expression(pre, Scope(source.fields)) if pre else {}
    rows = union(source.rows, dim.rows, indirect(JOIN, *key_lineage, dim_filter, on, pre_filter))
    return Relation(n.named(source.fields + dim_fields), rows)
