"""Where events go: one module per transport, each with its config type, and a factory by name.

Modelled on openlineage-python's transports (``kind`` + ``config_class`` + a factory), but every
``send`` answers :data:`Outcome` (:class:`Delivered` / :class:`RetryLater` / :class:`Rejected`)
instead of raising, so the outbox can decide what to keep.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, MutableMapping
from typing import Any

from planlineage.emitter.transport_kinds import BUILTIN as _BUILTIN
from planlineage.emitter.transport_kinds import TRANSPORT_KINDS
from planlineage.emitter.transports.base import (
    Config,
    Delivered,
    Outcome,
    Rejected,
    RetryLater,
    Transport,
    TransportConfigError,
)

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
    if name in _EXPORTS:
        module = importlib.import_module(_BUILTIN[_EXPORTS[name]][0])
        return getattr(module, name)
    raise AttributeError(name)


def transport_class(kind: str) -> type[Transport] | None:
    return TRANSPORTS.get((kind or "").strip().lower())


def register_transport(kind: str, transport_class: type[Transport]) -> None:
    TRANSPORTS[kind] = transport_class


def create_transport(kind: str, options: Mapping[str, Any] | Config | None = None) -> Transport:
    """Build the transport named ``kind`` from a config object or plain options.

    Raises :class:`TransportConfigError` (a secret-free message) when it cannot.
    """
    found = transport_class(kind)
    if found is None:
        known = ", ".join(sorted(TRANSPORTS))
        raise TransportConfigError(f"unknown transport {kind!r} (known: {known})")
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
    "Outcome",
    "Rejected",
    "RetryLater",
    "Transport",
    "TransportConfigError",
    "create_transport",
    "register_transport",
]
