"""The backends a delivery pass sends to: one unnamed one for a transport, one per child of a
``composite``.

A composite's options follow openlineage-python's ``CompositeConfig``: ``transports`` is a list of
child configs (each with its ``type`` and an optional ``name``) or a mapping name → config;
``sort_transports`` orders the children by ``priority`` (highest first).  Unlike
openlineage-python's composite, nothing is sent "through" the composite: the outbox keeps one
delivery cursor per child (:mod:`.outbox_rows`), so every child gets every event, each at its
own pace, and ``continue_on_failure`` / ``continue_on_success`` have nothing left to decide.

A child's name is the name of its cursor and must stay the same across restarts: a child without
``name`` is named by its ``type``, and two children of one name are refused.  A child whose
config cannot be built is still a backend, one that cannot send (``error``): its events are kept
until its config is fixed, and the other children deliver meanwhile.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from planlineage.emitter.transport_kinds import check_kind
from planlineage.emitter.transports import Transport, create_transport
from planlineage.errors import TransportConfigError

log = logging.getLogger(__name__)

COMPOSITE = "composite"
_CHILD_ONLY = ("type", "name", "priority")  # what the composite reads; the rest configures the child


@dataclass
class Backend:
    """Where one delivery cursor of the outbox goes: ``name`` ('' for a single transport)."""

    name: str
    transport: Transport | None
    error: str | None = None  # why ``transport`` could not be built (secret-free)

    def describe(self) -> str:
        """The backend for one log line: its name and where it sends, no secret."""
        where = self.transport.describe() if self.transport is not None else "not built"
        return f"{self.name} ({where})" if self.name else where

    def close(self) -> None:
        if self.transport is not None:
            try:
                self.transport.close()
            except Exception as error:  # closing must never turn a delivery into a failure
                log.debug("planlineage: closing %s: %s", self.describe(), type(error).__name__)


def _children(transports: Any) -> list[dict[str, Any]]:
    if isinstance(transports, str):
        try:
            transports = json.loads(transports)
        except ValueError:
            raise TransportConfigError("composite transports must be a JSON list or object of transports") from None
    if isinstance(transports, Mapping):
        return [{**dict(config), "name": name} for name, config in transports.items() if config]
    if isinstance(transports, (list, tuple)) and all(isinstance(c, Mapping) for c in transports):
        return [dict(c) for c in transports]
    raise TransportConfigError("composite transports must be a list or a name -> config mapping of transports")


def _priority(child: Mapping[str, Any]) -> float:
    try:
        return float(child.get("priority") or 0)
    except (TypeError, ValueError):
        raise TransportConfigError(
            f"composite transport {child.get('name') or child.get('type')!r}: priority must be a number"
        ) from None


def _build(kind: str, options: Mapping[str, Any]) -> Transport | str:
    try:
        return create_transport(kind, options)
    except TransportConfigError as error:
        return str(error)
    except ImportError as error:  # a transport of an extra that is not installed
        return f"{error.name or 'a module it needs'} is not installed (pip install 'planlineage[{kind}]')"


def open_backends(kind: str, options: Mapping[str, Any] | None = None) -> list[Backend]:
    """The backends of a transport config: one unnamed for ``kind``, one per child of a composite.

    Raises :class:`TransportConfigError` when ``kind`` itself cannot be built, or a composite has
    no child, a child without a type, or two children of one name.
    """
    options = dict(options or {})
    if (kind or "").strip().lower() != COMPOSITE:
        return [Backend("", create_transport(kind, options))]
    children = _children(options.get("transports"))
    if not children:
        raise TransportConfigError("the composite transport has no transports: add at least one")
    if str(options.get("sort_transports", "")).lower() in ("true", "1", "yes"):
        children.sort(key=lambda c: -_priority(c))
    names: set[str] = set()
    backends: list[Backend] = []
    for index, child in enumerate(children, 1):
        if not str(child.get("type") or "").strip():
            raise TransportConfigError(f"composite transport {index} has no type (http, kafka, file…)")
        try:  # a name is lower-cased, a dotted class path (a user's own transport) kept as written
            child_kind = check_kind(str(child["type"]))
        except ValueError as error:
            raise TransportConfigError(f"composite transport {index}: {error}") from None
        if child_kind == COMPOSITE:
            raise TransportConfigError(f"composite transport {index} is a composite: list its transports instead")
        name = str(child.get("name") or child_kind).strip()
        if name in names:
            raise TransportConfigError(
                f"two composite transports are named {name!r}: give each its own name "
                "(the name keeps that backend's undelivered events)"
            )
        names.add(name)
        built = _build(child_kind, {k: v for k, v in child.items() if k not in _CHILD_ONLY})
        if isinstance(built, str):
            backends.append(Backend(name, None, f"transport {name!r} is not usable: {built}"))
        else:
            backends.append(Backend(name, built))
    return backends


def close_backends(backends: Iterable[Backend]) -> None:
    for backend in backends:
        backend.close()


@contextmanager
def opened(kind: str, options: Mapping[str, Any] | None = None) -> Iterator[list[Backend]]:
    """:func:`open_backends`, closed again on leaving (a child already built is closed too)."""
    backends = open_backends(kind, options)
    try:
        yield backends
    finally:
        close_backends(backends)
