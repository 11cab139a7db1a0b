"""What every transport shares: its config type, its outcome types, secret-free messages.

``Transport.send`` never raises: it answers one of three outcomes.

* :class:`Delivered` — the backend took the event; remove it from the outbox.
* :class:`RetryLater` — nothing is known to be wrong with the event (429, 5xx, timeout,
  connection refused…); keep it and try again later, in order.
* :class:`Rejected` — the backend refused this event for a reason that retrying will not fix
  (400/401/403/406…); keep it aside with the reason, do not retry it forever.

No message built here ever contains a configured secret: the token is scrubbed from anything
that came back from a server, and addresses are printed as ``scheme://host:port`` only.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar
from urllib.parse import urlsplit

from planlineage.emitter.transport_kinds import GRAVITINO_ENDPOINT, HTTP_ENDPOINT, HTTP_KINDS  # noqa: F401

MAX_REASON_CHARS = 300


@dataclass(frozen=True)
class Delivered:
    status: int | None = None


@dataclass(frozen=True)
class RetryLater:
    reason: str
    status: int | None = None
    #: The request went out but no answer came in time: the server may have taken the event, so
    #: the resend is a possible repeat (same payload, same identifying fields).
    timed_out: bool = False
    #: Seconds the backend asked to be left alone for (``Retry-After`` of a 429 or 503), if it did.
    retry_after: float | None = None


@dataclass(frozen=True)
class Rejected:
    reason: str
    status: int | None = None


Outcome = Delivered | RetryLater | Rejected


class Config(ABC):
    """Base of every transport's config type; ``from_dict`` builds it from plain options."""

    @classmethod
    @abstractmethod
    def from_dict(cls, options: Mapping[str, Any]) -> Config:
        """The config from plain options; TransportConfigError when they do not fit."""


class Transport(ABC):
    kind: ClassVar[str]
    config_class: ClassVar[type[Config]]

    @abstractmethod
    def send(self, payload: str | Mapping[str, Any], timeout: float | None = None) -> Outcome:
        """Send one serialized RunEvent; never raises."""

    def describe(self) -> str:
        """Where events go, secret-free, for one log line."""
        return self.kind

    def close(self) -> None:  # noqa: B027 - optional hook: most transports hold nothing to release
        pass

    def __enter__(self) -> Transport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def payload_text(payload: str | Mapping[str, Any]) -> str:
    if isinstance(payload, str):
        return payload
    return json.dumps(payload, sort_keys=True)


def safe_address(url: str) -> str:
    """``scheme://host:port`` of an address: no user info, path, query or fragment."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or "?"
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme or 'http'}://{host}{port}"
    except ValueError:
        return "<invalid address>"


def scrub(text: str, *secrets: str | None) -> str:
    """Remove known secret values, then apply the project's redaction when it is installed."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "******")
    try:
        from planlineage.registry import secrets as redaction  # lazy: another engineer's module
    except ImportError:
        return text
    known = {f"token{i}": secret for i, secret in enumerate(secrets) if secret}
    try:
        return redaction.redact_text(text, known)
    except Exception:  # redaction must never make a lineage problem worse
        return text


def short(text: str, limit: int = MAX_REASON_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def server_message(body: bytes, content_type: str | None) -> str | None:
    """The ``message`` field of a JSON error body (Gravitino's ErrorResponse), if any."""
    if not body:
        return None
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    if isinstance(data, dict):
        message = data.get("message") or data.get("error")
        if isinstance(message, str) and message.strip():
            return message
    return None
