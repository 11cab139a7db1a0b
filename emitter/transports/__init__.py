"""Where events go: one module per transport, each with its config type, and a factory by name.

Modelled on openlineage-python's transports (``kind`` + ``config_class`` + a factory), but every
``send`` answers :data:`Outcome` (:class:`Delivered` / :class:`RetryLater` / :class:`Rejected`)
instead of raising, so the outbox can decide what to keep.
"""

from __future__ import annotations

from typing import Any, Mapping

from planlineage.emitter.transports.base import (
    Config,
    Delivered,
    Outcome,
    Rejected,
    RetryLater,
    Transport,
    TransportConfigError,
)
from planlineage.emitter.transports.console import ConsoleConfig, ConsoleTransport
from planlineage.emitter.transports.file import FileConfig, FileTransport
from planlineage.emitter.transports.gravitino import GravitinoConfig, GravitinoTransport
from planlineage.emitter.transports.http import HttpConfig, HttpTransport

TRANSPORTS: dict[str, type[Transport]] = {
    GravitinoTransport.kind: GravitinoTransport,
    HttpTransport.kind: HttpTransport,
    FileTransport.kind: FileTransport,
    ConsoleTransport.kind: ConsoleTransport,
}


def register_transport(kind: str, transport_class: type[Transport]) -> None:
    TRANSPORTS[kind] = transport_class


def create_transport(kind: str, options: Mapping[str, Any] | Config | None = None) -> Transport:
    """Build the transport named ``kind`` from a config object or plain options.

    Raises :class:`TransportConfigError` (a secret-free message) when it cannot.
    """
    transport_class = TRANSPORTS.get((kind or "").strip().lower())
    if transport_class is None:
        known = ", ".join(sorted(TRANSPORTS))
        raise TransportConfigError(f"unknown transport {kind!r} (known: {known})")
    config = options
    if not isinstance(config, Config):
        config = transport_class.config_class.from_dict(dict(options or {}))
    elif not isinstance(config, transport_class.config_class):
        raise TransportConfigError(f"{type(config).__name__} does not configure {kind}")
    return transport_class(config)  # type: ignore[call-arg]


__all__ = [
    "TRANSPORTS",
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
