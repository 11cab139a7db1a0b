"""The lineage algebra: what a column derives from, and how lineage composes step by step.

Every node's output is a `Relation`: one `Field` per output column, each with the source columns
(`table`, `column`) it derives from and how (`Transformation`, OpenLineage's DIRECT/INDIRECT
types), plus `rows`: the source columns that decide which rows exist at all (join keys, filter
conditions, grouping keys, sort keys, window time attributes).

Composition follows openlineage-java's `TransformationInfo.merge`: a DIRECT step keeps the
stronger of the two direct subtypes (AGGREGATION > TRANSFORMATION > IDENTITY) and leaves an
indirect dependency as it is; an INDIRECT step (a column used in a condition) turns everything the
column derives from into that indirect subtype.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

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
        rows = from_sources(self.dataset)
        return {name: to_sources(union(from_sources(sources), rows)) for name, sources in self.fields.items()}


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
            union(self.rows, extra_rows or {}),
            self.agg_input,
            self.window_time,
        )


class Unreadable(Exception):
    """The node's JSON is not what this module knows how to read."""


def union(*lineages: Lineage) -> dict[Origin, frozenset[Transformation]]:
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


def apply_step(lineage: Lineage, step: Transformation) -> dict[Origin, frozenset[Transformation]]:
    return {origin: frozenset(_compose(t, step) for t in ts) for origin, ts in lineage.items()}


def indirect(step: Transformation, *lineages: Lineage) -> dict[Origin, frozenset[Transformation]]:
    return apply_step(union(*lineages), step)


def lineage_of(fields: list[Field], indexes: Iterable[Any]) -> dict[Origin, frozenset[Transformation]]:
    return union(*(field_at(fields, i).origins for i in indexes))


def field_at(fields: list[Field], index) -> Field:
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


def to_sources(lineage: Lineage) -> list[ColumnSource]:
    return [
        ColumnSource(table, column, tuple(sorted(lineage[(table, column)], key=_sort_key)))
        for table, column in sorted(lineage)
    ]


def from_sources(sources: list[ColumnSource]) -> dict[Origin, frozenset[Transformation]]:
    return {(s.table, s.column): frozenset(s.transformations) for s in sources}
