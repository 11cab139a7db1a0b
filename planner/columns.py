"""Column-level lineage from a CompiledPlan: for every sink column, the source columns behind it.

The plan is walked from the sources to the sinks. Every node's output is a `Relation`: one
`Field` per output column, each with the source columns (`table`, `column`) it derives from and
how (`Transformation`, OpenLineage's DIRECT/INDIRECT types), plus `rows`: the source columns that
decide which rows exist at all (join keys, filter conditions, grouping keys, sort keys, window
time attributes). The two are kept apart because the spec distinguishes them (the
`columnLineage` facet's `fields` and its dataset-wide `dataset` list); `SinkColumns.merged()`
gives the per-column ("legacy") form that repeats the row-level entries on every column, which
is what consumers that only read `fields` (Marquez) need.

Composition follows openlineage-java's `TransformationInfo.merge`: a DIRECT step keeps the
stronger of the two direct subtypes (AGGREGATION > TRANSFORMATION > IDENTITY) and leaves an
indirect dependency as it is; an INDIRECT step (a column used in a condition) turns everything the
column derives from into that indirect subtype.

Choices where the spec leaves room: CONDITIONAL (CASE/IF/COALESCE conditions) belongs to the one
column computed; an OVER aggregate's partition and order keys WINDOW its result columns only (it
drops no row), while a rank, deduplication or MATCH_RECOGNIZE partition/order WINDOWs the rows;
a CAST keeps IDENTITY only when the value is unchanged (nullability or time-attribute marker);
hashes and COUNT mask. Plans are read as they are: what the planner adds (AVG as SUM/COUNT with a
null guard, a batch DISTINCT as a second GROUP BY) shows; the hash bucket of a split DISTINCT is
the one planner artefact left out, because it is no grouping of the result.

Node kinds are read from the JSON of Flink 1.18-2.3 (`stream-exec-*`, `batch-exec-*`, version
suffix ignored). A node kind this module does not know, or a known one whose JSON it cannot read,
never yields a guessed edge: its output columns derive INDIRECT (no subtype) from every input
column, and a warning names the node kind.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field

from planlineage.planner.walk import embedded_tables, node_kind, plan_graph, unquote_identifier

DIRECT, INDIRECT = "DIRECT", "INDIRECT"


@dataclass(frozen=True)
class Transformation:
    type: str  # DIRECT | INDIRECT
    subtype: str | None  # None only for the conservative fallback of a node not understood
    description: str | None = None
    masking: bool = False


@dataclass(frozen=True)
class ColumnSource:
    table: str  # unquoted catalog.database.table, as planner.walk names it
    column: str
    transformations: tuple[Transformation, ...]


@dataclass
class SinkColumns:
    """One sink table's column lineage: per column, and what affects every row of it."""

    fields: dict[str, list[ColumnSource]]
    dataset: list[ColumnSource]

    def merged(self) -> dict[str, list[ColumnSource]]:
        """Per column, its own sources plus the dataset-wide ones (the spec's legacy form)."""
        rows = _from_sources(self.dataset)
        return {name: _sources(_union(_from_sources(sources), rows)) for name, sources in self.fields.items()}


IDENTITY = Transformation(DIRECT, "IDENTITY")
TRANSFORMATION = Transformation(DIRECT, "TRANSFORMATION")
AGGREGATION = Transformation(DIRECT, "AGGREGATION")
JOIN, FILTER, GROUP_BY, SORT, WINDOW, CONDITIONAL = (
    Transformation(INDIRECT, s) for s in ("JOIN", "FILTER", "GROUP_BY", "SORT", "WINDOW", "CONDITIONAL")
)

_DIRECT_STRENGTH = {"IDENTITY": 0, "TRANSFORMATION": 1, "AGGREGATION": 2}
_ORDER = [
    "IDENTITY",
    "TRANSFORMATION",
    "AGGREGATION",
    "JOIN",
    "GROUP_BY",
    "FILTER",
    "SORT",
    "WINDOW",
    "CONDITIONAL",
    None,
]
# Functions whose result hides the input value (the spec's examples: a hash, a count).
_MASKING = {"MD5", "SHA1", "SHA2", "SHA224", "SHA256", "SHA384", "SHA512", "COUNT", "APPROX_COUNT_DISTINCT"}
_AGGREGATE_FUNCTIONS = {
    "SUM",
    "SUM0",
    "COUNT",
    "AVG",
    "MIN",
    "MAX",
    "FIRST_VALUE",
    "LAST_VALUE",
    "LISTAGG",
    "COLLECT",
    "ARRAY_AGG",
    "STDDEV_POP",
    "STDDEV_SAMP",
    "VAR_POP",
    "VAR_SAMP",
    "APPROX_COUNT_DISTINCT",
    "JSON_ARRAYAGG",
    "JSON_OBJECTAGG",
}
# Match-recognize navigation returns a value of one row unchanged.
_VALUE_PASSING = {"FINAL", "RUNNING", "FIRST", "LAST", "PREV", "NEXT"}

Origin = tuple[str, str]
Lineage = Mapping[Origin, frozenset[Transformation]]


@dataclass(frozen=True)
class Field:
    name: str
    origins: Lineage
    # The hash bucket a split DISTINCT aggregation groups by in its first phase: an artefact of
    # the plan, not a grouping of the result (see _group_keys_rows).
    bucket: bool = False


@dataclass
class Relation:
    fields: list[Field]
    rows: Lineage = field(default_factory=dict)
    # A local (first-phase) aggregate's input and window time: its global phase reads them.
    agg_input: Relation | None = None
    window_time: Lineage | None = None

    def passed(self, extra_rows: Lineage | None = None, fields: list[Field] | None = None) -> Relation:
        return Relation(
            self.fields if fields is None else fields,
            _union(self.rows, extra_rows or {}),
            self.agg_input,
            self.window_time,
        )


class Unreadable(Exception):
    """The node's JSON is not what this module knows how to read."""


# --------------------------------------------------------------------------- lineage algebra


def _union(*lineages: Lineage) -> dict[Origin, frozenset[Transformation]]:
    result: dict[Origin, frozenset[Transformation]] = {}
    for lineage in lineages:
        for origin, transformations in lineage.items():
            result[origin] = _unmasked_wins(result.get(origin, frozenset()) | transformations)
    return result


def _unmasked_wins(transformations: frozenset[Transformation]) -> frozenset[Transformation]:
    """The same step reached both masked and unmasked (AVG = SUM / COUNT): the value is exposed."""
    exposed = {(t.type, t.subtype, t.description) for t in transformations if not t.masking}
    return frozenset(t for t in transformations if not (t.masking and (t.type, t.subtype, t.description) in exposed))


def _compose(inner: Transformation, step: Transformation) -> Transformation:
    if step.type == INDIRECT:
        # An indirect dependency never exposes the value, so it is never masking.
        return Transformation(INDIRECT, step.subtype, step.description or inner.description)
    if inner.type == INDIRECT:
        return inner
    subtype = max(inner.subtype, step.subtype, key=lambda s: _DIRECT_STRENGTH[s])
    # a step's own description (a stand-in function's "inferred") survives the composition
    return Transformation(DIRECT, subtype, inner.description or step.description, inner.masking or step.masking)


def _apply(lineage: Lineage, step: Transformation) -> dict[Origin, frozenset[Transformation]]:
    return {origin: frozenset(_compose(t, step) for t in ts) for origin, ts in lineage.items()}


def _indirect(step: Transformation, *lineages: Lineage) -> dict[Origin, frozenset[Transformation]]:
    return _apply(_union(*lineages), step)


def _of(fields: list[Field], indexes: Iterable[int]) -> dict[Origin, frozenset[Transformation]]:
    return _union(*(_at(fields, i).origins for i in indexes))


def _at(fields: list[Field], index) -> Field:
    if not isinstance(index, int) or not 0 <= index < len(fields):
        raise Unreadable(f"field index {index!r} out of range")
    return fields[index]


def _sort_key(t: Transformation):
    return (
        t.type != DIRECT,
        _ORDER.index(t.subtype) if t.subtype in _ORDER else len(_ORDER),
        t.description or "",
        t.masking,
    )


def _sources(lineage: Lineage) -> list[ColumnSource]:
    return [
        ColumnSource(table, column, tuple(sorted(lineage[(table, column)], key=_sort_key)))
        for table, column in sorted(lineage)
    ]


def _from_sources(sources: list[ColumnSource]) -> dict[Origin, frozenset[Transformation]]:
    return {(s.table, s.column): frozenset(s.transformations) for s in sources}


# --------------------------------------------------------------------------- types and names


def row_names(row_type) -> list[str] | None:
    """Field names of a serialised row type: `{"type": "ROW", "fields": [...]}` or `ROW<`a` T, ...>`."""
    if isinstance(row_type, dict):
        fields = row_type.get("fields")
        if isinstance(fields, list) and all(isinstance(f, dict) and "name" in f for f in fields):
            return [f["name"] for f in fields]
        return None
    if not isinstance(row_type, str) or not row_type.strip().upper().startswith("ROW<"):
        return None
    return _names_in_row_text(row_type.strip())


def _names_in_row_text(text: str) -> list[str]:
    names, depth, i, expect_name = [], 0, 0, False
    while i < len(text):
        c = text[i]
        if c in "`'":
            end, value = _quoted(text, i)
            if c == "`" and depth == 1 and expect_name:
                names.append(value)
                expect_name = False
            i = end
            continue
        if c in "<(":
            depth += 1
            expect_name = depth == 1
        elif c in ">)":
            depth -= 1
        elif c == "," and depth == 1:
            expect_name = True
        i += 1
    return names


def _quoted(text: str, start: int) -> tuple[int, str]:
    quote, i, value = text[start], start + 1, []
    while i < len(text):
        if text[i] == quote:
            if text.startswith(quote * 2, i):
                value.append(quote)
                i += 2
                continue
            return i + 1, "".join(value)
        value.append(text[i])
        i += 1
    return i, "".join(value)


def _plain_type(value) -> str | None:
    """A type without nullability and time-attribute markers, to tell a value-preserving CAST."""
    if isinstance(value, dict):
        root = {"TIMESTAMP_WITHOUT_TIME_ZONE": "TIMESTAMP", "TIMESTAMP_WITH_LOCAL_TIME_ZONE": "TIMESTAMP_LTZ"}.get(
            value.get("type")
        )
        if root and isinstance(value.get("precision"), int):
            return f"{root}({value['precision']})"
        return None
    if not isinstance(value, str):
        return None
    text = re.sub(r"\s*\*(ROWTIME|PROCTIME)\*", "", value).replace(" NOT NULL", "").strip()
    return re.sub(r"^TIMESTAMP\((\d+)\) WITH LOCAL TIME ZONE$", r"TIMESTAMP_LTZ(\1)", text)


# --------------------------------------------------------------------------- expressions


#: Functions compiled through a stand-in (planlineage.pipeline sets them per job): which columns a
#: call reads is known, what it computes is not, so its step is marked as inferred.
stand_in_functions: ContextVar[frozenset[str]] = ContextVar("stand_in_functions", default=frozenset())
INFERRED = "inferred: through a stand-in function (its class was not available)"


def inferred_if_stand_in(name: str, step: Transformation) -> Transformation:
    """The step of a call, marked as inferred when the called function is a stand-in."""
    if name.rsplit(".", 1)[-1].strip("`") not in stand_in_functions.get():
        return step
    return Transformation(step.type, step.subtype, description=INFERRED, masking=step.masking)


def call_name(call: dict) -> str:
    """`$SUM$1` / `$$SUM0$1` / systemName / catalogName -> `SUM`, `SUM0`, ..."""
    internal = call.get("internalName")
    if isinstance(internal, str):
        return re.sub(r"\$\d+$", "", internal).lstrip("$").upper()
    for key in ("systemName", "catalogName", "class"):
        if isinstance(call.get(key), str):
            return call[key].upper()
    return ""


@dataclass
class _Scope:
    """What a RexNode's references point at: the input fields, and for correlates the outer row."""

    fields: list[Field]
    correlated: list[Field] | None = None


def expression(rex, scope: _Scope) -> dict[Origin, frozenset[Transformation]]:
    """The lineage of one RexNode's value."""
    if not isinstance(rex, dict):
        raise Unreadable(f"expression {rex!r}")
    kind = rex.get("kind")
    if kind in ("INPUT_REF", "PATTERN_INPUT_REF"):
        return dict(_at(scope.fields, rex.get("inputIndex")).origins)
    if kind == "LITERAL":
        return {}
    if kind == "FIELD_ACCESS":
        return _field_access(rex, scope)
    if kind == "CORREL_VARIABLE":
        return _apply(_of(scope.correlated or [], range(len(scope.correlated or []))), TRANSFORMATION)
    if kind == "CALL":
        return _call(rex, scope)
    raise Unreadable(f"expression kind {kind!r}")


def _field_access(rex: dict, scope: _Scope) -> dict[Origin, frozenset[Transformation]]:
    inner = rex.get("expr") or {}
    if inner.get("kind") == "CORREL_VARIABLE" and scope.correlated is not None:
        # A correlated reference names a column of the outer row: that column, unchanged.
        for candidate in scope.correlated:
            if candidate.name == rex.get("name"):
                return dict(candidate.origins)
        raise Unreadable(f"correlated field {rex.get('name')!r}")
    # A nested field is part of the column's value, not the value itself.
    return _apply(expression(inner, scope), TRANSFORMATION)


def _call(rex: dict, scope: _Scope) -> dict[Origin, frozenset[Transformation]]:
    name = call_name(rex)
    operands = rex.get("operands") or []
    if not isinstance(operands, list):
        raise Unreadable("call operands")
    values = [expression(o, scope) for o in operands]
    if name == "CASE":
        conditions = [v for i, v in enumerate(values) if i % 2 == 0 and i < len(values) - 1]
        results = [v for i, v in enumerate(values) if i % 2 == 1 or i == len(values) - 1]
        return _union(*results, _indirect(CONDITIONAL, *conditions))
    if name == "IF" and len(values) == 3:
        return _union(values[1], values[2], _indirect(CONDITIONAL, values[0]))
    if name in ("COALESCE", "IFNULL", "NVL") and values:
        # Each operand but the last is both a candidate value and the condition for the next.
        return _union(*values, _indirect(CONDITIONAL, *values[:-1]))
    if name in _VALUE_PASSING and values:
        return dict(values[0])
    if name in ("CAST", "REINTERPRET") and len(operands) == 1:
        same = _plain_type(operands[0].get("type")) == _plain_type(rex.get("type")) is not None
        return dict(values[0]) if same else _apply(values[0], TRANSFORMATION)
    step = AGGREGATION if name in _AGGREGATE_FUNCTIONS else TRANSFORMATION
    if name in _MASKING:
        step = Transformation(DIRECT, step.subtype, masking=True)
    return _apply(_union(*values), inferred_if_stand_in(name, step))


# --------------------------------------------------------------------------- nodes


@dataclass
class _Node:
    node: dict
    kind: str  # e.g. stream-exec-calc (version suffix removed)
    inputs: list[Relation]
    names: list[str] | None  # output field names, None when the output type cannot be read
    tables: dict

    @property
    def op(self) -> str:
        return re.sub(r"^(stream|batch)-exec-", "", self.kind)

    def input(self, index: int = 0) -> Relation:
        if index >= len(self.inputs):
            raise Unreadable(f"input {index}")
        return self.inputs[index]

    def get(self, *path, default=None):
        value = self.node
        for key in path:
            if not isinstance(value, dict) or key not in value:
                return default
            value = value[key]
        return value

    def name(self, index: int) -> str:
        return self.names[index] if self.names and index < len(self.names) else ""

    def named(self, fields: list[Field]) -> list[Field]:
        return [Field(self.name(i), f.origins, f.bucket) for i, f in enumerate(fields)]


def _indexes(spec) -> list[int]:
    """Field indexes of a partition/sort spec: `{"fields": [0, 1]}` or `{"fields": [{"index": 0}]}`."""
    if spec is None:
        return []
    if isinstance(spec, dict):
        spec = spec.get("fields", [])
    if not isinstance(spec, list):
        raise Unreadable("field list")
    return [f["index"] if isinstance(f, dict) else f for f in spec]


def _pass_through(n: _Node) -> Relation:
    return n.input().passed(fields=n.named(n.input().fields))


def _calc(n: _Node) -> Relation:
    source = n.input()
    scope = _Scope(source.fields)
    fields = [Field(n.name(i), expression(p, scope), _is_bucket(p)) for i, p in enumerate(n.get("projection") or [])]
    condition = n.get("condition")
    rows = _indirect(FILTER, expression(condition, scope)) if condition else {}
    return source.passed(rows, fields)


def _is_bucket(rex) -> bool:
    """`MOD(HASH_CODE(x), n)`: the bucket Flink's split-distinct rewrite adds as a group key."""
    if not (isinstance(rex, dict) and rex.get("kind") == "CALL" and call_name(rex) == "MOD"):
        return False
    first = (rex.get("operands") or [{}])[0]
    return isinstance(first, dict) and first.get("kind") == "CALL" and call_name(first) == "HASH_CODE"


def _filtering(key: str) -> Callable[[_Node], Relation]:
    """A pass-through node that may carry a pushed-down condition (changelog-normalize)."""

    def handle(n: _Node) -> Relation:
        condition = n.get(key)
        rows = _indirect(FILTER, expression(condition, _Scope(n.input().fields))) if condition else {}
        return n.input().passed(rows, n.named(n.input().fields))

    return handle


def _sort(n: _Node) -> Relation:
    source = n.input()
    keys = _indexes(n.get("orderBy") or n.get("sortSpec") or n.get("sortFields"))
    return source.passed(_indirect(SORT, _of(source.fields, keys)), n.named(source.fields))


def _rank(n: _Node) -> Relation:
    """Top-N by partition and order (rank, window-rank, sort-limit, limit): which rows survive."""
    source = n.input()
    partition = _indexes(n.get("partition") or n.get("partitionSpec") or n.get("partitionFields"))
    order = _indexes(n.get("orderBy") or n.get("sortSpec") or n.get("sortFields"))
    windowing = _window_time(n.get("windowing"), source.fields) if n.get("windowing") else {}
    # A rank over partition/order keys is a window function (ROW_NUMBER() OVER ...); a plain
    # ORDER BY ... LIMIT (no partition, sort-limit) sorts.
    step = SORT if n.op in ("sort-limit", "limit") else WINDOW
    influence = _indirect(step, _of(source.fields, partition + order), windowing)
    fields = list(source.fields)
    if n.get("outputRowNumber"):
        fields.append(Field("", influence))
    return source.passed(influence, n.named(fields))


def _deduplicate(n: _Node) -> Relation:
    """ROW_NUMBER() ... = 1 by a time attribute: the partition keys and the time decide the row."""
    source = n.input()
    keys = _indexes(n.get("uniqueKeys") or n.get("partitionKeys") or [])
    time: list[int] = []
    if isinstance(n.get("orderKey"), int):
        time = [n.get("orderKey")]
    elif n.get("isRowtime"):
        time = _rowtime_indexes(n.node.get("outputType"))
    windowing = _window_time(n.get("windowing"), source.fields) if n.get("windowing") else {}
    return source.passed(_indirect(WINDOW, _of(source.fields, keys + time), windowing), n.named(source.fields))


def _rowtime_indexes(row_type) -> list[int]:
    fields = row_type.get("fields", []) if isinstance(row_type, dict) else []
    return [i for i, f in enumerate(fields) if "ROWTIME" in str(f.get("fieldType"))]


def _union_node(n: _Node) -> Relation:
    if not n.inputs or len({len(r.fields) for r in n.inputs}) != 1:
        raise Unreadable("union inputs of different widths")
    width = len(n.inputs[0].fields)
    fields = [Field(n.name(i), _union(*(r.fields[i].origins for r in n.inputs))) for i in range(width)]
    return Relation(fields, _union(*(r.rows for r in n.inputs)))


def _values(n: _Node) -> Relation:
    tuples = n.get("tuples") or []
    width = len(tuples[0]) if tuples else len(n.names or [])
    return Relation([Field(n.name(i), {}) for i in range(width)])


def _expand(n: _Node) -> Relation:
    source = n.input()
    scope = _Scope(source.fields)
    projects = n.get("projects") or []
    if not projects or len({len(p) for p in projects}) != 1:
        raise Unreadable("expand projects")
    fields = [Field(n.name(i), _union(*(expression(p[i], scope) for p in projects))) for i in range(len(projects[0]))]
    return source.passed(fields=fields)


# ---- joins


def _join_rows(left: Relation, right: Relation, left_keys, right_keys, condition) -> dict:
    both = left.fields + right.fields
    keys = _union(_of(left.fields, left_keys), _of(right.fields, right_keys))
    on = expression(condition, _Scope(both)) if condition else {}
    return _union(left.rows, right.rows, _indirect(JOIN, keys, on))


def _join_output(join_type, left: Relation, right: Relation) -> list[Field]:
    # SEMI and ANTI joins (IN / EXISTS subqueries) only emit the left row.
    return list(left.fields) if join_type in ("SEMI", "ANTI") else left.fields + right.fields


def _join(n: _Node) -> Relation:
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
    windows = _union(
        *(_window_time(n.get(w), r.fields) for w, r in (("leftWindowing", left), ("rightWindowing", right)) if n.get(w))
    )
    rows = _union(rows, _indirect(WINDOW, windows))
    return Relation(n.named(_join_output(spec.get("joinType"), left, right)), rows)


def _nested_loop_join(n: _Node) -> Relation:
    left, right = n.input(0), n.input(1)
    rows = _join_rows(left, right, [], [], n.get("condition"))
    return Relation(n.named(_join_output(n.get("joinType"), left, right)), rows)


def _lookup_join(n: _Node) -> Relation:
    """The dimension table is read inside the node: its fields come from its own table spec."""
    source = n.input()
    temporal = n.get("temporalTable") or {}
    spec = temporal.get("lookupTableSource")
    if not isinstance(spec, dict):
        raise Unreadable("temporalTable.lookupTableSource")
    dim = _table_fields(spec, row_names(temporal.get("outputType")), n.tables)
    dim_scope = _Scope(dim.fields)
    keys = n.get("lookupKeys") or {}
    key_lineage = []
    for dim_index, key in keys.items():
        key_lineage.append(_at(dim.fields, int(dim_index)).origins)
        if key.get("type") == "FieldRef":
            key_lineage.append(_at(source.fields, key.get("index")).origins)
    projection = n.get("projectionOnTemporalTable")
    dim_fields = [Field("", expression(p, dim_scope)) for p in projection] if projection else dim.fields
    dim_filter = expression(n.get("filterOnTemporalTable"), dim_scope) if n.get("filterOnTemporalTable") else {}
    condition = n.get("joinCondition")
    on = expression(condition, _Scope(source.fields + dim_fields)) if condition else {}
    pre = n.get("preFilterCondition")
    pre_filter = expression(pre, _Scope(source.fields)) if pre else {}
    rows = _union(source.rows, dim.rows, _indirect(JOIN, *key_lineage, dim_filter, on, pre_filter))
    return Relation(n.named(source.fields + dim_fields), rows)


def _correlate(n: _Node) -> Relation:
    """A table function per row (UNNEST, UDTF): its columns derive from the call's operands."""
    source = n.input()
    call = n.get("functionCall")
    produced = _apply(expression(call, _Scope(source.fields, correlated=source.fields)), TRANSFORMATION)
    width = len(n.names or []) - len(source.fields)
    if n.names is None or width < 0:
        raise Unreadable("correlate output type")
    function_fields = [Field("", produced) for _ in range(width)]
    condition = n.get("condition")
    rows = _indirect(FILTER, expression(condition, _Scope(function_fields))) if condition else {}
    return source.passed(rows, n.named(source.fields + function_fields))


# ---- aggregates


def _agg_calls(calls, agg_input: Relation, constants: list[Field] | None = None) -> list[Field]:
    fields = []
    for call in calls or []:
        args = call.get("argList") or []
        scope = agg_input.fields + (constants or [])
        step = inferred_if_stand_in(
            call_name(call), Transformation(DIRECT, "AGGREGATION", masking=call_name(call) in _MASKING)
        )
        lineage = _apply(_of(scope, args), step)
        filter_arg = call.get("filterArg", -1)
        if isinstance(filter_arg, int) and filter_arg >= 0:
            # AGG(x) FILTER (WHERE c): c decides which rows this one aggregate sees.
            lineage = _union(lineage, _indirect(FILTER, _at(scope, filter_arg).origins))
        fields.append(Field(call.get("name") or "", lineage))
    return fields


def _group_keys_rows(keys: list[Field]) -> dict:
    return _indirect(GROUP_BY, *(k.origins for k in keys if not k.bucket))


def _keys(source: Relation, grouping) -> list[Field]:
    return [_at(source.fields, i) for i in (grouping or [])]


def _accumulators(count: int, calls: list[Field], time: Lineage | None = None) -> list[Field]:
    """A first phase's partial results: which call each one belongs to is not in the plan."""
    everything = _union(*(c.origins for c in calls), _apply(time or {}, TRANSFORMATION))
    return [Field("", everything) for _ in range(count)]


def _group_aggregate(n: _Node) -> Relation:
    source = n.input()
    keys = _keys(source, n.get("grouping"))
    return Relation(n.named(keys + _agg_calls(n.get("aggCalls"), source)), _union(source.rows, _group_keys_rows(keys)))


def _local_aggregate(n: _Node, time: Lineage | None = None) -> Relation:
    source = n.input()
    keys = _keys(source, n.get("grouping")) + _keys(source, n.get("auxGrouping"))
    if n.names is None or len(n.names) < len(keys):
        raise Unreadable("local aggregate output type")
    partial = _accumulators(len(n.names) - len(keys), _agg_calls(n.get("aggCalls"), source), time)
    return Relation(
        n.named(keys + partial), _union(source.rows, _group_keys_rows(keys)), agg_input=source, window_time=time
    )


def _global_aggregate(n: _Node) -> Relation:
    """The second phase: keys from its input, the calls over the first phase's input."""
    source = n.input()
    if source.agg_input is None:
        raise Unreadable("global aggregate without its local phase")
    keys = _keys(source, n.get("grouping")) + _keys(source, n.get("auxGrouping"))
    fields = keys + _agg_calls(n.get("aggCalls"), source.agg_input)
    rows = _union(source.rows, _group_keys_rows(keys))
    return Relation(n.named(fields + _window_properties(n, source.window_time)), _with_window(rows, source.window_time))


def _incremental_aggregate(n: _Node) -> Relation:
    """Split DISTINCT with mini-batch: the first phase's final step and the second's local step."""
    source = n.input()
    if source.agg_input is None:
        raise Unreadable("incremental aggregate without its local phase")
    partial_keys = _keys(source, n.get("partialAggGrouping"))
    partial = Relation(
        partial_keys + _agg_calls(n.get("partialOriginalAggCalls"), source.agg_input),
        _union(source.rows, _group_keys_rows(partial_keys)),
    )
    keys = _keys(partial, n.get("finalAggGrouping"))
    if n.names is None or len(n.names) < len(keys):
        raise Unreadable("incremental aggregate output type")
    accumulators = _accumulators(len(n.names) - len(keys), partial.fields[len(partial_keys) :])
    return Relation(n.named(keys + accumulators), _union(partial.rows, _group_keys_rows(keys)), agg_input=partial)


def _batch_aggregate(n: _Node) -> Relation:
    if n.get("isMerge"):
        return _global_aggregate(n)
    if not n.get("isFinal", True):
        return _local_aggregate(n)
    source = n.input()
    keys = _keys(source, n.get("grouping")) + _keys(source, n.get("auxGrouping"))
    return Relation(n.named(keys + _agg_calls(n.get("aggCalls"), source)), _union(source.rows, _group_keys_rows(keys)))


def _window_time(windowing, fields: list[Field]) -> dict:
    """The column(s) a window is computed from, per windowing strategy."""
    if not isinstance(windowing, dict):
        raise Unreadable("windowing")
    strategy = windowing.get("strategy")
    if strategy == "TimeAttribute":
        return dict(_at(fields, windowing.get("timeAttributeIndex")).origins)
    if strategy == "WindowAttached":
        return _of(fields, [windowing.get("windowStart"), windowing.get("windowEnd")])
    if strategy == "SliceAttached":
        return dict(_at(fields, windowing.get("sliceEnd")).origins)
    raise Unreadable(f"windowing strategy {strategy!r}")


def _with_window(rows: Lineage, time: Lineage | None) -> dict:
    return _union(rows, _indirect(WINDOW, time or {}))


def _window_properties(n: _Node, time: Lineage | None) -> list[Field]:
    """window_start/end/time (and the legacy w$start ...) are computed from the window's time."""
    properties = n.get("namedWindowProperties") or []
    if properties and time is None:
        raise Unreadable("window properties without a window")
    return [Field(p.get("name", ""), _apply(time or {}, TRANSFORMATION)) for p in properties]


def _window_aggregate(n: _Node) -> Relation:
    source = n.input()
    time = _window_time(n.get("windowing"), source.fields)
    keys = _keys(source, n.get("grouping"))
    fields = keys + _agg_calls(n.get("aggCalls"), source) + _window_properties(n, time)
    return Relation(n.named(fields), _with_window(_union(source.rows, _group_keys_rows(keys)), time))


def _local_window_aggregate(n: _Node) -> Relation:
    return _local_aggregate(n, _window_time(n.get("windowing"), n.input().fields))


def _group_window_aggregate(n: _Node) -> Relation:
    """Legacy GROUP BY TUMBLE(ts, ...): the window names its time field by index."""
    source = n.input()
    time_index = n.get("window", "timeField", "fieldIndex")
    time = dict(_at(source.fields, time_index).origins)
    keys = _keys(source, n.get("grouping"))
    fields = keys + _agg_calls(n.get("aggCalls"), source) + _window_properties(n, time)
    return Relation(n.named(fields), _with_window(_union(source.rows, _group_keys_rows(keys)), time))


def _window_table_function(n: _Node) -> Relation:
    source = n.input()
    time = _window_time(n.get("windowing"), source.fields)
    if n.names is None or len(n.names) < len(source.fields):
        raise Unreadable("window table function output type")
    added = [Field("", _apply(time, TRANSFORMATION)) for _ in range(len(n.names) - len(source.fields))]
    return source.passed(_indirect(WINDOW, time), n.named(source.fields + added))


def _over_aggregate(n: _Node) -> Relation:
    """Input columns unchanged; each OVER result aggregates its arguments over its window."""
    source = n.input()
    spec = n.get("overSpec") or {}
    constants = [Field("", {}) for _ in spec.get("constants") or []]
    partition = _of(source.fields, _indexes(spec.get("partition")))
    results = []
    for group in spec.get("groups") or []:
        window = _indirect(WINDOW, partition, _of(source.fields, _indexes(group.get("orderBy"))))
        for call in _agg_calls(group.get("aggCalls"), source, constants):
            results.append(Field(call.name, _union(call.origins, window)))
    return source.passed(fields=n.named(source.fields + results))


def _match(n: _Node) -> Relation:
    """MATCH_RECOGNIZE: measures by name; PARTITION/ORDER BY window the rows, DEFINE filters them."""
    source = n.input()
    spec = n.get("matchSpec") or {}
    scope = _Scope(source.fields)
    partition = _indexes(spec.get("partition"))
    measures = spec.get("measures") or {}
    if n.names is None:
        raise Unreadable("match output type")
    fields = []
    input_names = [f.name for f in source.fields]
    for i, name in enumerate(n.names):
        if name in measures:
            fields.append(Field(name, expression(measures[name], scope)))
        elif not spec.get("allRows") and i < len(partition):
            fields.append(Field(name, _at(source.fields, partition[i]).origins))
        elif spec.get("allRows") and name in input_names:
            fields.append(Field(name, source.fields[input_names.index(name)].origins))
        else:
            raise Unreadable(f"match output field {name!r}")
    order = _indexes(spec.get("orderBy"))
    defines = [expression(d, scope) for d in (spec.get("patternDefinitions") or {}).values()]
    rows = _union(source.rows, _indirect(WINDOW, _of(source.fields, partition + order)), _indirect(FILTER, *defines))
    return Relation(fields, rows)


# ---- sources


def _table_columns(spec: dict, tables: dict) -> tuple[str, list[dict]]:
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


def _column_lineage(table: str, column: dict) -> dict:
    description = None
    if column.get("kind") == "metadata":
        description = f"metadata key '{column.get('metadata_key') or column['name']}'"
    return {(table, column["name"]): frozenset({Transformation(DIRECT, "IDENTITY", description)})}


def _table_fields(spec: dict, names: list[str] | None, tables: dict) -> Relation:
    """A source's produced row: its physical columns, reshaped by the abilities pushed into it."""
    table, columns = _table_columns(spec, tables)
    fields = [Field(c["name"], _column_lineage(table, c)) for c in columns if c.get("kind") == "physical"]
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
    return [Field(name, _column_lineage(table, readable[name])) for name in names]


def _apply_ability(ability: dict, fields: list[Field], rows: dict, table: str, metadata: dict):
    kind = ability.get("type")
    if kind == "ProjectPushDown":
        projected = []
        for path in ability.get("projectedFields") or []:
            column = _at(fields, path[0])
            # A nested path reads part of the column.
            origins = column.origins if len(path) == 1 else _apply(column.origins, TRANSFORMATION)
            projected.append(Field(column.name, origins))
        return projected, rows
    if kind == "ReadingMetadata":
        added = []
        for key in ability.get("metadataKeys") or []:
            if key not in metadata:
                raise Unreadable(f"metadata key {key!r} of {table}")
            added.append(Field(metadata[key]["name"], _column_lineage(table, metadata[key])))
        return fields + added, rows
    if kind == "FilterPushDown":
        scope = _Scope(fields)
        return fields, _union(rows, _indirect(FILTER, *(expression(p, scope) for p in ability.get("predicates") or [])))
    if kind == "PartitionPushDown":
        keys = {k for partition in ability.get("partitions") or [] for k in partition}
        return fields, _union(rows, _indirect(FILTER, *({(table, k): frozenset({IDENTITY})} for k in sorted(keys))))
    if kind in ("LimitPushDown", "WatermarkPushDown", "SourceWatermark"):
        return fields, rows
    raise Unreadable(f"source ability {kind!r}")


def _scan(n: _Node) -> Relation:
    spec = n.get("scanTableSource")
    if not isinstance(spec, dict):
        raise Unreadable("scanTableSource")
    produced = _table_fields(spec, n.names, n.tables)
    return Relation(n.named(produced.fields), produced.rows)


# ---- sinks


def _sink_columns(n: _Node) -> tuple[str, list[str]]:
    """The names of the sink's columns in the order its input row is written."""
    spec = n.get("dynamicTableSink") or {}
    table, columns = _table_columns(spec, n.tables)
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


def _target_columns(n: _Node, names: list[str]) -> list[str]:
    """INSERT INTO t (a, b): the other columns are not written (the plan feeds them NULL)."""
    targets = n.get("dynamicTableSink", "targetColumns")
    if not targets:
        return names
    return [names[path[0]] for path in targets if path and 0 <= path[0] < len(names)]


HANDLERS: dict[str, Callable[[_Node], Relation]] = {
    "table-source-scan": _scan,
    "calc": _calc,
    "python-calc": _calc,
    "async-calc": _calc,
    "python-async-calc": _calc,
    "exchange": _pass_through,
    "watermark-assigner": _pass_through,
    "mini-batch-assigner": _pass_through,
    "drop-update-before": _pass_through,
    "changelog-normalize": _filtering("filterCondition"),
    "sort": _sort,
    "temporal-sort": _sort,
    "rank": _rank,
    "window-rank": _rank,
    "sort-limit": _rank,
    "limit": _rank,
    "deduplicate": _deduplicate,
    "window-deduplicate": _deduplicate,
    "union": _union_node,
    "values": _values,
    "expand": _expand,
    "join": _join,
    "interval-join": _join,
    "temporal-join": _join,
    "window-join": _join,
    "nested-loop-join": _nested_loop_join,
    "lookup-join": _lookup_join,
    "correlate": _correlate,
    "python-correlate": _correlate,
    "async-correlate": _correlate,
    "group-aggregate": _group_aggregate,
    "python-group-aggregate": _group_aggregate,
    "local-group-aggregate": _local_aggregate,
    "global-group-aggregate": _global_aggregate,
    "incremental-group-aggregate": _incremental_aggregate,
    "hash-aggregate": _batch_aggregate,
    "sort-aggregate": _batch_aggregate,
    "window-aggregate": _window_aggregate,
    "local-window-aggregate": _local_window_aggregate,
    "global-window-aggregate": _global_aggregate,
    "group-window-aggregate": _group_window_aggregate,
    "python-group-window-aggregate": _group_window_aggregate,
    "window-table-function": _window_table_function,
    "over-aggregate": _over_aggregate,
    "python-over-aggregate": _over_aggregate,
    "match": _match,
}


def _fallback(n: _Node, reason: str, warnings: list[str]) -> Relation:
    """Not understood: every output column derives INDIRECT from every input column."""
    warnings.append(
        f"column lineage: node kind '{n.kind}' (node {n.node.get('id')}) is not understood ({reason}); "
        "its columns are reported as derived INDIRECT from every input column"
    )
    unknown = Transformation(INDIRECT, None, f"not analysed: {n.kind}")
    read = [f.origins for r in n.inputs for f in r.fields] + [r.rows for r in n.inputs] + _embedded_columns(n)
    everything = _indirect(unknown, *read)
    width = len(n.names) if n.names is not None else max((len(r.fields) for r in n.inputs), default=0)
    return Relation([Field(n.name(i), everything) for i in range(width)], everything)


def _embedded_columns(n: _Node) -> list[dict]:
    """Every column of a table the node reads by itself (a lookup-like node has no edge to it)."""
    found = []
    for table in embedded_tables(n.node):
        try:
            name, columns = _table_columns({"table": table}, n.tables)
        except Unreadable:
            continue
        found += [_column_lineage(name, c) for c in columns if c.get("kind") in ("physical", "metadata")]
    return found


def _evaluate(n: _Node, warnings: list[str]) -> Relation:
    handler = HANDLERS.get(n.op) if n.kind.startswith(("stream-exec-", "batch-exec-")) else None
    if handler is None:
        return _fallback(n, "unknown node kind", warnings)
    try:
        relation = handler(n)
    # A shape a handler did not expect (a key renamed in a later Flink, a list where a dict was)
    # must end in the conservative answer, never in a crash or a half-read node.
    except (Unreadable, KeyError, TypeError, ValueError, IndexError, AttributeError) as error:
        return _fallback(n, str(error) or type(error).__name__, warnings)
    if n.names is not None and len(relation.fields) != len(n.names):
        return _fallback(n, f"{len(relation.fields)} columns computed for {len(n.names)} output fields", warnings)
    return relation


# --------------------------------------------------------------------------- the walk


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
    for node_id in graph.topological_order():
        node = graph.nodes[node_id]
        n = _Node(
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
        table: SinkColumns({c: _sources(lineage) for c, lineage in columns.items()}, _sources(rows))
        for table, (columns, rows) in per_sink.items()
    }
    return result, list(dict.fromkeys(warnings))


def _collect_sink(n: _Node, per_sink: dict, warnings: list[str]) -> None:
    """Positional: the sink's input row is written into the sink's columns in order."""
    try:
        table, names = _sink_columns(n)
    except Unreadable as error:
        warnings.append(f"column lineage: the columns of sink node {n.node.get('id')} cannot be named ({error})")
        return
    source = n.input() if n.inputs else Relation([])
    if len(source.fields) != len(names):
        everything = _fallback(n, f"{len(source.fields)} input fields for {len(names)} sink columns", warnings).rows
        source = Relation([Field(name, everything) for name in names], everything)
    written = set(_target_columns(n, names))
    columns, rows = per_sink.setdefault(table, ({}, {}))
    for name, column in zip(names, source.fields):
        if name in written:
            columns[name] = _union(columns.get(name, {}), column.origins)
    rows.update(_union(rows, source.rows))
