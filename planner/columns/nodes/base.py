"""What every node handler gets, and the registry that maps node kinds to handlers.

A handler is registered next to its code with `@handles("calc", "python-calc", ...)`: the node
kind without its `stream-exec-`/`batch-exec-` prefix and version suffix.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from planlineage.planner.columns.algebra import Field, Relation, Unreadable, field_at, lineage_of

Handler = Callable[["Node"], Relation]
#: node kind (e.g. `calc`) -> the handler that reads it; filled by the `nodes.*` modules.
HANDLERS: dict[str, Handler] = {}


H = TypeVar("H", bound=Callable[..., Relation])


def handles(*ops: str) -> Callable[[H], H]:
    """Registers the decorated handler for these node kinds (and leaves it as it is)."""

    def register(handler: H) -> H:
        for op in ops:
            if op in HANDLERS:
                raise ValueError(f"node kind {op!r} has two handlers")
            HANDLERS[op] = handler
        return handler

    return register


@dataclass
class Node:
    """One plan node as a handler sees it: its JSON, its kind, and the relations of its inputs."""

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


def field_indexes(spec) -> list[int]:
    """Field indexes of a partition/sort spec: `{"fields": [0, 1]}` or `{"fields": [{"index": 0}]}`."""
    if spec is None:
        return []
    if isinstance(spec, dict):
        spec = spec.get("fields", [])
    if not isinstance(spec, list):
        raise Unreadable("field list")
    return [f["index"] if isinstance(f, dict) else f for f in spec]


def windowing_time(windowing, fields: list[Field]) -> dict:
    """The column(s) a window is computed from, per windowing strategy."""
    if not isinstance(windowing, dict):
        raise Unreadable("windowing")
    strategy = windowing.get("strategy")
    if strategy == "TimeAttribute":
        return dict(field_at(fields, windowing.get("timeAttributeIndex")).origins)
    if strategy == "WindowAttached":
        return lineage_of(fields, [windowing.get("windowStart"), windowing.get("windowEnd")])
    if strategy == "SliceAttached":
        return dict(field_at(fields, windowing.get("sliceEnd")).origins)
    raise Unreadable(f"windowing strategy {strategy!r}")
