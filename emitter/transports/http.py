"""Any OpenLineage HTTP backend (Marquez ``api/v1/lineage``, a collector…), over httpx.

Mirrors openlineage-python's ``HttpTransport`` (``url`` + ``endpoint`` + bearer ``api_key``) but
answers an :class:`~planlineage.emitter.transports.base.Outcome` instead of raising, and keeps its
timeouts short and bounded.
"""

from __future__ import annotations

import os
import ssl
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC
from email.utils import parsedate_to_datetime
from typing import Any, ClassVar
from urllib.parse import urlsplit

import httpx

from planlineage.emitter.transports.base import (
    HTTP_ENDPOINT,
    Config,
    Delivered,
    Outcome,
    Rejected,
    RetryLater,
    Transport,
    payload_text,
    safe_address,
    scrub,
    server_message,
    short,
)
from planlineage.errors import TransportConfigError

RETRYABLE_STATUSES = frozenset({408, 425, 429})
#: The answers whose ``Retry-After`` speaks for the whole backend (RFC 9110 §10.2.3).
RETRY_AFTER_STATUSES = frozenset({429, 503})


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds from a ``Retry-After`` header: delay-seconds or an HTTP date; None when absent or
    not readable (a wish we cannot read is no wish)."""
    text = (value or "").strip()
    if not text:
        return None
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def classify(status: int) -> str:
    """``delivered`` for 2xx, ``retry`` for 408/425/429/5xx, ``rejected`` for the rest."""
    if 200 <= status < 300:
        return "delivered"
    if status in RETRYABLE_STATUSES or status >= 500:
        return "retry"
    return "rejected"


def _check_url(url: str) -> str:
    url = (url or "").strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TransportConfigError(f"not an http(s) address: {safe_address(url)}")
    return url.rstrip("/")


def _float(options: Mapping[str, Any], key: str, default: float) -> float:
    value = options.get(key)
    if value in (None, ""):
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise TransportConfigError(f"{key} must be a number of seconds") from None
    if number <= 0:
        raise TransportConfigError(f"{key} must be positive")
    return number


@dataclass(repr=False)
class HttpConfig(Config):
    url: str
    endpoint: str = HTTP_ENDPOINT
    token: str | None = field(default=None, repr=False)
    connect_timeout: float = 2.0
    timeout: float = 5.0
    accept: str = "application/json"
    trust_env: bool = True

    def __post_init__(self) -> None:
        self.url = _check_url(self.url)
        self.endpoint = (self.endpoint or "").strip().lstrip("/")

    @classmethod
    def from_dict(cls, options: Mapping[str, Any]) -> HttpConfig:
        url = options.get("url") or options.get("address")
        if not url:
            raise TransportConfigError("the http transport needs an address (url)")
        return cls(
            url=str(url),
            endpoint=str(options.get("endpoint") or HTTP_ENDPOINT),
            token=(options.get("token") or options.get("api_key")) or None,
            connect_timeout=_float(options, "connect_timeout", 2.0),
            timeout=_float(options, "timeout", 5.0),
        )

    def __repr__(self) -> str:  # no user info, no token
        return f"{type(self).__name__}(url={safe_address(self.url)!r}, endpoint={self.endpoint!r})"

    @property
    def target(self) -> str:
        return f"{self.url}/{self.endpoint}" if self.endpoint else self.url


_SSL_CONTEXTS: dict[tuple[bool, str | None, str | None], ssl.SSLContext] = {}
_SSL_LOCK = threading.Lock()


def ssl_context(trust_env: bool) -> ssl.SSLContext:
    """The process's verifying SSL context (one per CA environment httpx reads): httpx builds one
    per client, loading every CA certificate (38 ms measured), and each delivery pass opens a
    client: the compile service spent a quarter of its CPU there while adopting 300 apps."""
    key = (trust_env, os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
    with _SSL_LOCK:
        context = _SSL_CONTEXTS.get(key)
        if context is None:
            context = _SSL_CONTEXTS[key] = httpx.create_ssl_context(trust_env=trust_env)
        return context


class HttpTransport(Transport):
    kind: ClassVar[str] = "http"
    config_class: ClassVar[type[Config]] = HttpConfig
    backend: ClassVar[str] = "lineage backend"

    def __init__(self, config: HttpConfig) -> None:
        self.config = config
        self._client: httpx.Client | None = None

    def describe(self) -> str:
        return f"{self.kind} {safe_address(self.config.url)}"

    def headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": self.config.accept}
        if self.config.token:
            headers["Authorization"] = f"Bearer {self.config.token}"
        return headers

    def _timeout(self, limit: float | None) -> httpx.Timeout:
        read = self.config.timeout
        connect = self.config.connect_timeout
        if limit is not None:
            limit = max(limit, 0.05)
            read, connect = min(read, limit), min(connect, limit)
        return httpx.Timeout(read, connect=connect)

    @property
    def client(self) -> httpx.Client:
        if self._client is None:
            self._client = httpx.Client(
                follow_redirects=False, trust_env=self.config.trust_env, verify=ssl_context(self.config.trust_env)
            )
        return self._client

    def _say(self, text: str) -> str:
        return short(scrub(text, self.config.token))

    def send(self, payload: str | Mapping[str, Any], timeout: float | None = None) -> Outcome:
        where = safe_address(self.config.url)
        try:
            response = self.client.post(
                self.config.target,
                content=payload_text(payload).encode("utf-8"),
                headers=self.headers(),
                timeout=self._timeout(timeout),
            )
        except (httpx.ConnectTimeout, httpx.PoolTimeout):
            return RetryLater(f"{self.backend} at {where} unreachable: no connection in time")
        except httpx.TimeoutException:
            # The request may have arrived: the resend is a possible repeat of the same event.
            return RetryLater(f"{self.backend} at {where} did not answer in time", timed_out=True)
        except httpx.TransportError as error:
            detail = self._say(str(error)) or type(error).__name__
            return RetryLater(f"{self.backend} at {where} unreachable: {detail}")
        except Exception as error:  # never let a transport problem escape
            return RetryLater(f"{self.backend} at {where}: {type(error).__name__}")
        status = response.status_code
        verdict = classify(status)
        if verdict == "delivered":
            return Delivered(status)
        message = server_message(response.content, response.headers.get("content-type"))
        detail = f": {self._say(message)}" if message else ""
        if verdict == "retry":
            wait = retry_after(response.headers.get("retry-after")) if status in RETRY_AFTER_STATUSES else None
            return RetryLater(f"{self.backend} at {where} answered HTTP {status}{detail}", status, retry_after=wait)
        return Rejected(f"{self.backend} at {where} rejected the event (HTTP {status}){detail}", status)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
