"""Aggregates: group, window, group-window and OVER aggregates, their local/global/incremental
phases, and batch hash/sort aggregates.

An OVER aggregate's partition and order keys WINDOW its result columns only (it drops no row). The
hash bucket of a split DISTINCT is left out of the grouping: it is no grouping of the result.
"""

from __future__ import annotations

from planlineage.planner.columns.algebra import (
    DIRECT,
    FILTER,
    GROUP_BY,
    TRANSFORMATION,
    WINDOW,
    Field,
    Lineage,
    Relation,
    Transformation,
    Unreadable,
    apply_step,
    field_at,
    indirect,
    lineage_of,
    union,
)
from planlineage.planner.columns.expression import MASKING, call_name, inferred_if_stand_in
from planlineage.planner.columns.nodes.base import Node, field_indexes, handles, windowing_time


def _agg_calls(calls, agg_input: Relation, constants: list[Field] | None = None) -> list[Field]:
    fields = []
    for call in calls or []:
        args = call.get("argList") or []
        scope = agg_input.fields + (constants or [])
        step = inferred_if_stand_in(
            call_name(call), Transformation(DIRECT, "AGGREGATION", masking=call_name(call) in MASKING)
        )
        lineage = apply_step(lineage_of(scope, args), step)
        filter_arg = call.get("filterArg", -1)
        if isinstance(filter_arg, int) and filter_arg >= 0:
            # AGG(x) FILTER (WHERE c): c decides which rows this one aggregate sees.
            lineage = union(lineage, indirect(FILTER, field_at(scope, filter_arg).origins))
        fields.append(Field(call.get("name") or "", lineage))
    return fields


def _group_keys_rows(keys: list[Field]) -> dict:
    return indirect(GROUP_BY, *(k.origins for k in keys if not k.bucket))


def _keys(source: Relation, grouping) -> list[Field]:
    return [field_at(source.fields, i) for i in (grouping or [])]


def _accumulators(count: int, calls: list[Field], time: Lineage | None = None) -> list[Field]:
    """A first phase's partial results: which call each one belongs to is not in the plan."""
    everything = union(*(c.origins for c in calls), apply_step(time or {}, TRANSFORMATION))
    return [Field("", everything) for _ in range(count)]


@handles("group-aggregate", "python-group-aggregate")
def _group_aggregate(n: Node) -> Relation:
    source = n.input()
    keys = _keys(source, n.get("grouping"))
    return Relation(n.named(keys + _agg_calls(n.get("aggCalls"), source)), union(source.rows, _group_keys_rows(keys)))


@handles("local-group-aggregate")
def _local_aggregate(n: Node, time: Lineage | None = None) -> Relation:
    source = n.input()
    keys = _keys(source, n.get("grouping")) + _keys(source, n.get("auxGrouping"))
    if n.names is None or len(n.names) < len(keys):
        raise Unreadable("local aggregate output type")
    partial = _accumulators(len(n.names) - len(keys), _agg_calls(n.get("aggCalls"), source), time)
    return Relation(
        n.named(keys + partial), union(source.rows, _group_keys_rows(keys)), agg_input=source, window_time=time
    )


@handles("global-group-aggregate", "global-window-aggregate")
def _global_aggregate(n: Node) -> Relation:
    """The second phase: keys from its input, the calls over the first phase's input."""
    source = n.input()
    if source.agg_input is None:
        raise Unreadable("global aggregate without its local phase")
    keys = _keys(source, n.get("grouping")) + _keys(source, n.get("auxGrouping"))
    fields = keys + _agg_calls(n.get("aggCalls"), source.agg_input)
    rows = union(source.rows, _group_keys_rows(keys))
    return Relation(n.named(fields + _window_properties(n, source.window_time)), _with_window(rows, source.window_time))


@handles("incremental-group-aggregate")
def _incremental_aggregate(n: Node) -> Relation:
    """Split DISTINCT with mini-batch: the first phase's final step and the second's local step."""
    source = n.input()
    if source.agg_input is None:
        raise Unreadable("incremental aggregate without its local phase")
    partial_keys = _keys(source, n.get("partialAggGrouping"))
    partial = Relation(
        partial_keys + _agg_calls(n.get("partialOriginalAggCalls"), source.agg_input),
        union(source.rows, _group_keys_rows(partial_keys)),
    )
    keys = _keys(partial, n.get("finalAggGrouping"))
    if n.names is None or len(n.names) < len(keys):
        raise Unreadable("incremental aggregate output type")
    accumulators = _accumulators(len(n.names) - len(keys), partial.fields[len(partial_keys) :])
    return Relation(n.named(keys + accumulators), union(partial.rows, _group_keys_rows(keys)), agg_input=partial)


@handles("hash-aggregate", "sort-aggregate")
def _batch_aggregate(n: Node) -> Relation:
    if n.get("isMerge"):
        return _global_aggregate(n)
    if not n.get("isFinal", True):
        return _local_aggregate(n)
    source = n.input()
    keys = _keys(source, n.get("grouping")) + _keys(source, n.get("auxGrouping"))
    return Relation(n.named(keys + _agg_calls(n.get("aggCalls"), source)), union(source.rows, _group_keys_rows(keys)))


def _with_window(rows: Lineage, time: Lineage | None) -> dict:
    return union(rows, indirect(WINDOW, time or {}))


def _window_properties(n: Node, time: Lineage | None) -> list[Field]:
    """window_start/end/time (and the legacy w$start ...) are computed from the window's time."""
    properties = n.get("namedWindowProperties") or []
    if properties and time is None:
        raise Unreadable("window properties without a window")
    return [Field(p.get("name", ""), apply_step(time or {}, TRANSFORMATION)) for p in properties]


@handles("window-aggregate")
def _window_aggregate(n: Node) -> Relation:
    source = n.input()
    time = windowing_time(n.get("windowing"), source.fields)
    keys = _keys(source, n.get("grouping"))
    fields = keys + _agg_calls(n.get("aggCalls"), source) + _window_properties(n, time)
    return Relation(n.named(fields), _with_window(union(source.rows, _group_keys_rows(keys)), time))


@handles("local-window-aggregate")
def _local_window_aggregate(n: Node) -> Relation:
    return _local_aggregate(n, windowing_time(n.get("windowing"), n.input().fields))


@handles("group-window-aggregate", "python-group-window-aggregate")
def _group_window_aggregate(n: Node) -> Relation:
    """Legacy GROUP BY TUMBLE(ts, ...): the window names its time field by index."""
    source = n.input()
    time_index = n.get("window", "timeField", "fieldIndex")
    time = dict(field_at(source.fields, time_index).origins)
    keys = _keys(source, n.get("grouping"))
    fields = keys + _agg_calls(n.get("aggCalls"), source) + _window_properties(n, time)
    return Relation(n.named(fields), _with_window(union(source.rows, _group_keys_rows(keys)), time))


@handles("window-table-function")
def _window_table_function(n: Node) -> Relation:
    source = n.input()
    time = windowing_time(n.get("windowing"), source.fields)
    if n.names is None or len(n.names) < len(source.fields):
        raise Unreadable("window table function output type")
    added = [Field("", apply_step(time, TRANSFORMATION)) for _ in range(len(n.names) - len(source.fields))]
    return source.passed(indirect(WINDOW, time), n.named(source.fields + added))


@handles("over-aggregate", "python-over-aggregate")
def _over_aggregate(n: Node) -> Relation:
    """Input columns unchanged; each OVER result aggregates its arguments over its window."""
    source = n.input()
    spec = n.get("overSpec") or {}
    constants = [Field("", {}) for _ in spec.get("constants") or []]
    partition = lineage_of(source.fields, field_indexes(spec.get("partition")))
    results = []
    for group in spec.get("groups") or []:
        window = indirect(WINDOW, partition, lineage_of(source.fields, field_indexes(group.get("orderBy"))))
        for call in _agg_calls(group.get("aggCalls"), source, constants):
            results.append(Field(call.name, union(call.origins, window)))
    return source.passed(fields=n.named(source.fields + results))
