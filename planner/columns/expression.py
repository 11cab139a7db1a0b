"""The expression (RexNode JSON) reader: the lineage of one expression's value.

CONDITIONAL (CASE/IF/COALESCE conditions) belongs to the one column computed; a CAST keeps
IDENTITY only when the value is unchanged (nullability or time-attribute marker); hashes and
COUNT mask.
"""

from __future__ import annotations

import re
from contextvars import ContextVar
from dataclasses import dataclass

from planlineage.planner.columns.algebra import (
    AGGREGATION,
    CONDITIONAL,
    DIRECT,
    TRANSFORMATION,
    Field,
    Origin,
    Transformation,
    Unreadable,
    apply_step,
    field_at,
    indirect,
    lineage_of,
    union,
)
from planlineage.planner.columns.rowtypes import plain_type

# Functions whose result hides the input value (the spec's examples: a hash, a count).
MASKING = {"MD5", "SHA1", "SHA2", "SHA224", "SHA256", "SHA384", "SHA512", "COUNT", "APPROX_COUNT_DISTINCT"}


AGGREGATE_FUNCTIONS = {
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
VALUE_PASSING = {"FINAL", "RUNNING", "FIRST", "LAST", "PREV", "NEXT"}


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
class Scope:
    """What a RexNode's references point at: the input fields, and for correlates the outer row."""

    fields: list[Field]
    correlated: list[Field] | None = None


def expression(rex, scope: Scope) -> dict[Origin, frozenset[Transformation]]:
    """The lineage of one RexNode's value."""
    if not isinstance(rex, dict):
        raise Unreadable(f"expression {rex!r}")
    kind = rex.get("kind")
    if kind in ("INPUT_REF", "PATTERN_INPUT_REF"):
        return dict(field_at(scope.fields, rex.get("inputIndex")).origins)
    if kind == "LITERAL":
        return {}
    if kind == "FIELD_ACCESS":
        return _field_access(rex, scope)
    if kind == "CORREL_VARIABLE":
        return apply_step(lineage_of(scope.correlated or [], range(len(scope.correlated or []))), TRANSFORMATION)
    if kind == "CALL":
        return _call(rex, scope)
    raise Unreadable(f"expression kind {kind!r}")


def _field_access(rex: dict, scope: Scope) -> dict[Origin, frozenset[Transformation]]:
    inner = rex.get("expr") or {}
    if inner.get("kind") == "CORREL_VARIABLE" and scope.correlated is not None:
        # A correlated reference names a column of the outer row: that column, unchanged.
        for candidate in scope.correlated:
            if candidate.name == rex.get("name"):
                return dict(candidate.origins)
        raise Unreadable(f"correlated field {rex.get('name')!r}")
    # A nested field is part of the column's value, not the value itself.
    return apply_step(expression(inner, scope), TRANSFORMATION)


def _call(rex: dict, scope: Scope) -> dict[Origin, frozenset[Transformation]]:
    name = call_name(rex)
    operands = rex.get("operands") or []
    if not isinstance(operands, list):
        raise Unreadable("call operands")
    values = [expression(o, scope) for o in operands]
    if name == "CASE":
        conditions = [v for i, v in enumerate(values) if i % 2 == 0 and i < len(values) - 1]
        results = [v for i, v in enumerate(values) if i % 2 == 1 or i == len(values) - 1]
        return union(*results, indirect(CONDITIONAL, *conditions))
    if name == "IF" and len(values) == 3:
        return union(values[1], values[2], indirect(CONDITIONAL, values[0]))
    if name in ("COALESCE", "IFNULL", "NVL") and values:
        # Each operand but the last is both a candidate value and the condition for the next.
        return union(*values, indirect(CONDITIONAL, *values[:-1]))
    if name in VALUE_PASSING and values:
        return dict(values[0])
    if name in ("CAST", "REINTERPRET") and len(operands) == 1:
        same = plain_type(operands[0].get("type")) == plain_type(rex.get("type")) is not None
        return dict(values[0]) if same else apply_step(values[0], TRANSFORMATION)
    step = AGGREGATION if name in AGGREGATE_FUNCTIONS else TRANSFORMATION
    if name in MASKING:
        step = Transformation(DIRECT, step.subtype, masking=True)
    return apply_step(union(*values), inferred_if_stand_in(name, step))
