"""Lineage settings: stored in the state store, overridable from the environment.

Precedence: environment (``PLANLINEAGE_`` + key upper-cased, ``.``/``-`` → ``_``, e.g.
``PLANLINEAGE_LINEAGE_ADDRESS``) > stored value > default.  Reading never creates the store.

``configured()`` is the one switch of the promise "nothing until configured": it is true only
when an address is set (gravitino/http transports), or a file transport with its file, or the
console transport was chosen explicitly.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from planlineage.emitter.store import Store, utc_now
from planlineage.emitter.transports.base import safe_address

TRANSPORT_KINDS = ("gravitino", "http", "file", "console")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class Setting:
    key: str
    default: str | None = None
    help: str = ""
    secret: bool = False
    choices: tuple[str, ...] = ()
    boolean: bool = False


SETTINGS: dict[str, Setting] = {
    s.key: s
    for s in (
        Setting("lineage.address", None, "lineage server, e.g. http://gravitino:8090"),
        Setting("lineage.token", None, "bearer token sent to the lineage server", secret=True),
        Setting("lineage.namespace", "planlineage", "OpenLineage job namespace"),
        Setting("lineage.flink-listener", "false", "inject the OpenLineage Flink listener", boolean=True),
        Setting("lineage.profile", None, "naming profile"),
        Setting("lineage.metalake", None, "Gravitino metalake (job namespace when none is set)"),
        Setting("lineage.rules", None, "path of a naming rules file"),
        Setting("lineage.transport", "gravitino", "where events go", choices=TRANSPORT_KINDS),
        Setting("lineage.endpoint", None, "endpoint path of the http transport (api/v1/lineage)"),
        Setting("lineage.file", None, "file the file transport appends events to"),
    )
}


class SettingError(ValueError):
    """An unknown key or an invalid value (message is secret-free)."""


def env_name(key: str) -> str:
    return "PLANLINEAGE_" + key.upper().replace(".", "_").replace("-", "_")


def _check_key(key: str) -> Setting:
    setting = SETTINGS.get(key)
    if setting is None:
        raise SettingError(f"unknown setting {key!r} (known: {', '.join(SETTINGS)})")
    return setting


def parse_bool(value: str | None) -> bool:
    return (value or "").strip().lower() in _TRUE


def normalize(key: str, value: str) -> str:
    """The value as stored, or :class:`SettingError`."""
    setting = _check_key(key)
    value = str(value).strip()
    if setting.boolean:
        lowered = value.lower()
        if lowered not in _TRUE | _FALSE:
            raise SettingError(f"{key} must be true or false")
        return "true" if lowered in _TRUE else "false"
    if setting.choices:
        value = value.lower()
        if value not in setting.choices:
            raise SettingError(f"{key} must be one of {', '.join(setting.choices)}")
    if key == "lineage.address" and value:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise SettingError("lineage.address must be an http(s) URL, e.g. http://gravitino:8090")
        value = value.rstrip("/")
    return value


def _redact_url(url: str) -> str:
    try:
        from planlineage.registry.secrets import redact_url  # lazy: another engineer's module
    except ImportError:
        return safe_address(url)  # without it, print no more than scheme://host:port
    return redact_url(url)


def masked(key: str, value: str | None) -> str:
    """A value safe to print: a secret is never printed back in full."""
    if value is None or value == "":
        return "(unset)"
    setting = SETTINGS.get(key)
    if (setting is not None and setting.secret) or "token" in key or "password" in key:
        return value[:4] + "…" if len(value) >= 12 else "…"
    if key in ("lineage.address",):
        return _redact_url(value)
    return value


def is_configured(values: Mapping[str, tuple[str | None, str]]) -> bool:
    """Whether lineage is on, from ``key -> (value, origin)`` (``Settings.list()``)."""
    kind_value, kind_origin = values["lineage.transport"]
    kind = (kind_value or "gravitino").lower()
    if kind in ("gravitino", "http"):
        return bool(values["lineage.address"][0])
    if kind == "file":
        return bool(values["lineage.file"][0])
    if kind == "console":
        return kind_origin != "default"
    return False


def namespace_of(values: Mapping[str, tuple[str | None, str]]) -> str:
    """The explicit ``lineage.namespace``; else the metalake (Gravitino with authorization
    reads ``job.namespace`` as the metalake); else ``planlineage``."""
    namespace, origin = values["lineage.namespace"]
    if origin != "default" and namespace:
        return namespace
    return values["lineage.metalake"][0] or namespace or "planlineage"


class Settings:
    """The lineage settings over one store (``environ`` defaults to ``os.environ``)."""

    def __init__(self, store: Store | None = None, environ: Mapping[str, str] | None = None):
        self.store = store if store is not None else Store()
        self.environ = os.environ if environ is None else environ

    def stored(self) -> dict[str, str]:
        return self.store.read(
            lambda c: {r["key"]: r["value"] for r in c.execute("SELECT key, value FROM settings")},
            default={},
        )

    def source(self, key: str, _stored: Mapping[str, str] | None = None) -> tuple[str | None, str]:
        """``(value, origin)`` with origin ``env``, ``store`` or ``default``."""
        setting = _check_key(key)
        env_value = self.environ.get(env_name(key))
        if env_value is not None and env_value.strip() != "":
            try:
                return normalize(key, env_value), "env"
            except SettingError:
                return env_value.strip(), "env"
        stored = self.stored() if _stored is None else _stored
        if key in stored:
            return stored[key], "store"
        return setting.default, "default"

    def get(self, key: str) -> str | None:
        return self.source(key)[0]

    def get_bool(self, key: str) -> bool:
        return parse_bool(self.get(key))

    def set(self, key: str, value: str) -> str:
        value = normalize(key, value)

        def store_it(conn):
            if value == "":
                conn.execute("DELETE FROM settings WHERE key = ?", (key,))
            else:
                conn.execute(
                    "INSERT INTO settings (key, value, updated) VALUES (?, ?, ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated = excluded.updated",
                    (key, value, utc_now()),
                )

        self.store.write(store_it)
        return value

    def unset(self, key: str) -> None:
        _check_key(key)
        if self.store.exists():
            self.store.write(lambda c: c.execute("DELETE FROM settings WHERE key = ?", (key,)))

    def list(self, keys: Iterable[str] | None = None) -> dict[str, tuple[str | None, str]]:
        """Every known key → ``(value, origin)``; values are raw (use :func:`masked` to print)."""
        stored = self.stored()
        return {k: self.source(k, stored) for k in (keys or SETTINGS)}

    def list_masked(self) -> dict[str, tuple[str, str]]:
        return {k: (masked(k, v), origin) for k, (v, origin) in self.list().items()}

    # -- derived ---------------------------------------------------------------------------

    def transport_kind(self) -> str:
        kind = (self.get("lineage.transport") or "gravitino").lower()
        return kind if kind in TRANSPORT_KINDS else "gravitino"

    def configured(self) -> bool:
        return is_configured(self.list())

    def job_namespace(self) -> str:
        return namespace_of(self.list())

    def transport_options(self) -> tuple[str, dict[str, Any]]:
        """``(kind, options)`` for :func:`planlineage.emitter.transports.create_transport`."""
        values = {k: v for k, (v, _) in self.list().items()}
        kind = self.transport_kind()
        if kind == "gravitino":
            return kind, {"address": values["lineage.address"], "token": values["lineage.token"]}
        if kind == "http":
            return kind, {
                "url": values["lineage.address"],
                "endpoint": values["lineage.endpoint"] or "api/v1/lineage",
                "token": values["lineage.token"],
            }
        if kind == "file":
            return kind, {"path": values["lineage.file"]}
        return kind, {}
