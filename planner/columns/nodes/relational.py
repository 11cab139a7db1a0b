"""Row-shaping nodes: calc, pass-through, sorts and ranks, deduplication, union, values, expand,
correlate and MATCH_RECOGNIZE.

A rank, deduplication or MATCH_RECOGNIZE partition/order WINDOWs the rows.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from planlineage.planner.columns.algebra import (
    FILTER,
    SORT,
    TRANSFORMATION,
    WINDOW,
    Field,
    Relation,
    Unreadable,
    apply_step,
    field_at,
    indirect,
    lineage_of,
    union,
)
from planlineage.planner.columns.expression import Scope, call_name, expression
from planlineage.planner.columns.nodes.base import Node, field_indexes, handles, windowing_time


@handles("exchange", "watermark-assigner", "mini-batch-assigner", "drop-update-before")
def _pass_through(n: Node) -> Relation:
    return n.input().passed(fields=n.named(n.input().fields))


@handles("calc", "python-calc", "async-calc", "python-async-calc")
def _calc(n: Node) -> Relation:
    source = n.input()
    scope = Scope(source.fields)
    fields = [Field(n.name(i), expression(p, scope), _is_bucket(p)) for i, p in enumerate(n.get("projection") or [])]
    condition = n.get("condition")
    rows = indirect(FILTER, expression(condition, scope)) if condition else {}
    return source.passed(rows, fields)


def _is_bucket(rex) -> bool:
    """`MOD(HASH_CODE(x), n)`: the bucket Flink's split-distinct rewrite adds as a group key."""
    if not (isinstance(rex, dict) and rex.get("kind") == "CALL" and call_name(rex) == "MOD"):
        return False
    first = (rex.get("operands") or [{}])[0]
    return isinstance(first, dict) and first.get("kind") == "CALL" and call_name(first) == "HASH_CODE"


def _filtering(key: str) -> Callable[[Node], Relation]:
    """A pass-through node that may carry a pushed-down condition (changelog-normalize)."""

    def handle(n: Node) -> Relation:
        condition = n.get(key)
        rows = indirect(FILTER, expression(condition, Scope(n.input().fields))) if condition else {}
        return n.input().passed(rows, n.named(n.input().fields))

    return handle


@handles("sort", "temporal-sort")
def _sort(n: Node) -> Relation:
    source = n.input()
    spec = n.get("orderBy") or n.get("sortSpec") or n.get("sortFields")
    keys = field_indexes(spec) if spec is not None else _described_sort_keys(n)
    return source.passed(indirect(SORT, lineage_of(source.fields, keys)), n.named(source.fields))


_SORT_KEYS = re.compile(r"^Sort\(orderBy=\[(?P<keys>[^\]]*)\]\)$")


def _described_sort_keys(n: Node) -> list[int]:
    """The sort keys of a Flink 1.15-1.17 streaming Sort, which is written without them: named in
    its description (`Sort(orderBy=[country ASC, total DESC])`), each one of its field names."""
    found = _SORT_KEYS.match(str(n.get("description") or ""))
    names = n.names or []
    keys = [key.rsplit(" ", 1)[0] for key in found.group("keys").split(", ")] if found else []
    if not keys or any(names.count(key) != 1 for key in keys):
        raise Unreadable("sort keys")
    return [names.index(key) for key in keys]


@handles("rank", "window-rank", "sort-limit", "limit")
def _rank(n: Node) -> Relation:
    """Top-N by partition and order (rank, window-rank, sort-limit, limit): which rows survive."""
    source = n.input()
    partition = field_indexes(n.get("partition") or n.get("partitionSpec") or n.get("partitionFields"))
    order = field_indexes(n.get("orderBy") or n.get("sortSpec") or n.get("sortFields"))
    windowing = windowing_time(n.get("windowing"), source.fields) if n.get("windowing") else {}
    # A rank over partition/order keys is a window function (ROW_NUMBER() OVER ...); a plain
    # ORDER BY ... LIMIT (no partition, sort-limit) sorts.
    step = SORT if n.op in ("sort-limit", "limit") else WINDOW
    influence = indirect(step, lineage_of(source.fields, partition + order), windowing)
    fields = list(source.fields)
    if n.get("outputRowNumber"):
        fields.append(Field("", influence))
    return source.passed(influence, n.named(fields))


@handles("deduplicate", "window-deduplicate")
def _deduplicate(n: Node) -> Relation:
    """ROW_NUMBER() ... = 1 by a time attribute: the partition keys and the time decide the row."""
    source = n.input()
    keys = field_indexes(n.get("uniqueKeys") or n.get("partitionKeys") or [])
    time: list[int] = []
    if isinstance(n.get("orderKey"), int):
        time = [n.get("orderKey")]
    elif n.get("isRowtime"):
        time = _rowtime_indexes(n.node.get("outputType"))
    windowing = windowing_time(n.get("windowing"), source.fields) if n.get("windowing") else {}
    return source.passed(indirect(WINDOW, lineage_of(source.fields, keys + time), windowing), n.named(source.fields))


def _rowtime_indexes(row_type) -> list[int]:
    fields = row_type.get("fields", []) if isinstance(row_type, dict) else []
    return [i for i, f in enumerate(fields) if "ROWTIME" in str(f.get("fieldType"))]


@handles("union")
def _union_node(n: Node) -> Relation:
    if not n.inputs or len({len(r.fields) for r in n.inputs}) != 1:
        raise Unreadable("union inputs of different widths")
    width = len(n.inputs[0].fields)
    fields = [Field(n.name(i), union(*(r.fields[i].origins for r in n.inputs))) for i in range(width)]
    return Relation(fields, union(*(r.rows for r in n.inputs)))


@handles("values")
def _values(n: Node) -> Relation:
    tuples = n.get("tuples") or []
    width = len(tuples[0]) if tuples else len(n.names or [])
    return Relation([Field(n.name(i), {}) for i in range(width)])


@handles("expand")
def _expand(n: Node) -> Relation:
    source = n.input()
    scope = Scope(source.fields)
    projects = n.get("projects") or []
    if not projects or len({len(p) for p in projects}) != 1:
        raise Unreadable("expand projects")
    fields = [Field(n.name(i), union(*(expression(p[i], scope) for p in projects))) for i in range(len(projects[0]))]
    return source.passed(fields=fields)


@handles("correlate", "python-correlate", "async-correlate")
def _correlate(n: Node) -> Relation:
    """A table function per row (UNNEST, UDTF): its columns derive from the call's operands."""
    source = n.input()
    call = n.get("functionCall")
    produced = apply_step(expression(call, Scope(source.fields, correlated=source.fields)), TRANSFORMATION)
    width = len(n.names or []) - len(source.fields)
    if n.names is None or width < 0:
        raise Unreadable("correlate output type")
    function_fields = [Field("", produced) for _ in range(width)]
    condition = n.get("condition")
    rows = indirect(FILTER, expression(condition, Scope(function_fields))) if condition else {}
    return source.passed(rows, n.named(source.fields + function_fields))


@handles("match")
def _match(n: Node) -> Relation:
    """MATCH_RECOGNIZE: measures by name; PARTITION/ORDER BY window the rows, DEFINE filters them."""
    source = n.input()
    spec = n.get("matchSpec") or {}
    scope = Scope(source.fields)
    partition = field_indexes(spec.get("partition"))
    measures = spec.get("measures") or {}
    if n.names is None:
        raise Unreadable("match output type")
    fields = []
    input_names = [f.name for f in source.fields]
    for i, name in enumerate(n.names):
        if name in measures:
            fields.append(Field(name, expression(measures[name], scope)))
        elif not spec.get("allRows") and i < len(partition):
            fields.append(Field(name, field_at(source.fields, partition[i]).origins))
        elif spec.get("allRows") and name in input_names:
            fields.append(Field(name, source.fields[input_names.index(name)].origins))
        else:
            raise Unreadable(f"match output field {name!r}")
    order = field_indexes(spec.get("orderBy"))
    defines = [expression(d, scope) for d in (spec.get("patternDefinitions") or {}).values()]
    rows = union(
        source.rows, indirect(WINDOW, lineage_of(source.fields, partition + order)), indirect(FILTER, *defines)
    )
    return Relation(fields, rows)


_changelog_normalize = handles("changelog-normalize")(_filtering("filterCondition"))
