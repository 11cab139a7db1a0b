"""Where events go: one module per transport, each with its config type, and a factory by name.

Modelled on openlineage-python's transports (``kind`` + ``config_class`` + a factory), but every
``send`` answers :data:`Outcome` (:class:`Delivered` / :class:`RetryLater` / :class:`Rejected`)
instead of raising, so the outbox can decide what to keep.

A kind planlineage does not build itself (``kafka``, a dotted class path, ...), and any kind whose
options carry the marker ``factory: openlineage`` (a transport from OpenLineage's configuration),
is built by openlineage-python's own factory behind one adapter
(:mod:`planlineage.emitter.transports.openlineage`): a new kind needs configuration only.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, MutableMapping
from typing import Any

from planlineage.emitter.transport_kinds import BUILTIN as _BUILTIN
from planlineage.emitter.transport_kinds import FACTORY, FACTORY_KEY, TRANSPORT_KINDS
from planlineage.emitter.transports.base import (
    Config,
    Delivered,
    Outcome,
    Rejected,
    RetryLater,
    Transport,
)
from planlineage.errors import TransportConfigError

_EXPORTS = {
    "GravitinoConfig": "gravitino",
    "GravitinoTransport": "gravitino",
    "HttpConfig": "http",
    "HttpTransport": "http",
    "FileConfig": "file",
    "FileTransport": "file",
    "ConsoleConfig": "console",
    "ConsoleTransport": "console",
}
_ADAPTER = "planlineage.emitter.transports.openlineage"


class _Registry(MutableMapping):
    """kind -> transport class; the built-in ones are imported on first lookup."""

    def __init__(self) -> None:
        self._loaded: dict[str, type[Transport]] = {}

    def __getitem__(self, kind: str) -> type[Transport]:
        if kind not in self._loaded and kind in _BUILTIN:
            module, name = _BUILTIN[kind]
            self._loaded[kind] = getattr(importlib.import_module(module), name)
        return self._loaded[kind]

    def __setitem__(self, kind: str, transport: type[Transport]) -> None:
        self._loaded[kind] = transport

    def __delitem__(self, kind: str) -> None:
        del self._loaded[kind]

    def __iter__(self):
        return iter(dict.fromkeys([*_BUILTIN, *self._loaded]))

    def __len__(self) -> int:
        return len(set(_BUILTIN) | set(self._loaded))


TRANSPORTS: MutableMapping[str, type[Transport]] = _Registry()


def __getattr__(name: str):
    if name == "OpenLineageTransport":
        return importlib.import_module(_ADAPTER).OpenLineageTransport
    if name in _EXPORTS:
        module = importlib.import_module(_BUILTIN[_EXPORTS[name]][0])
        return getattr(module, name)
    raise AttributeError(name)


def transport_class(kind: str) -> type[Transport] | None:
    """The class planlineage builds ``kind`` with itself (built-in or registered), else None."""
    return TRANSPORTS.get((kind or "").strip().lower())


def register_transport(kind: str, transport_class: type[Transport]) -> None:
    TRANSPORTS[kind] = transport_class


def create_transport(kind: str, options: Mapping[str, Any] | Config | None = None) -> Transport:
    """Build the transport named ``kind`` from a config object or plain options: planlineage's own
    for its kinds, openlineage-python's factory for any other kind or options marked
    ``factory: openlineage``.

    Raises :class:`TransportConfigError` (a secret-free message) when it cannot.
    """
    found = transport_class(kind)
    library = isinstance(options, Mapping) and options.get(FACTORY_KEY) == FACTORY
    if library or (found is None and (kind or "").strip() and not isinstance(options, Config)):
        adapter = importlib.import_module(_ADAPTER).OpenLineageTransport
        return adapter.of((kind or "").strip(), options)
    if found is None:
        known = ", ".join(sorted(TRANSPORTS))
        raise TransportConfigError(f"unknown transport {kind!r} (known: {known}, or any openlineage-python kind)")
    config = options
    if not isinstance(options, Config):
        config = found.config_class.from_dict(dict(options or {}))
    elif not isinstance(config, found.config_class):
        raise TransportConfigError(f"{type(config).__name__} does not configure {kind}")
    return found(config)  # type: ignore[call-arg]


__all__ = [
    "TRANSPORTS",
    "TRANSPORT_KINDS",
    "Config",
    "ConsoleConfig",
    "ConsoleTransport",
    "Delivered",
    "FileConfig",
    "FileTransport",
    "GravitinoConfig",
    "GravitinoTransport",
    "HttpConfig",
    "HttpTransport",
    "OpenLineageTransport",
    "Outcome",
    "Rejected",
    "RetryLater",
    "Transport",
    "create_transport",
    "register_transport",
]
