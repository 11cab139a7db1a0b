"""Lineage settings: a small file of their own, overridable from the environment.

Stored in ``$PLANLINEAGE_HOME/settings.json`` (written atomically, 0600), apart from the event
store: a corrupt event store never turns lineage off or loses the address and token.  A
settings file that cannot be read is moved aside (``settings.json.corrupt-<time>``) and said on
stderr by every later command until that copy is removed.  Stores of version 1 kept settings in
``state.db``; they are read from there until the first ``settings set`` moves them here.

With a shared store (PostgreSQL, :mod:`planlineage.store`) the settings live in the store's
``settings`` table instead, so a setting made on one node is seen by every node; the node's file
then holds only what is per node: ``lineage.store``, the store URL itself (environment
``PLANLINEAGE_STORE``), whose password is masked in every output.

Precedence: environment (``PLANLINEAGE_`` + key upper-cased, ``.``/``-`` → ``_``, e.g.
``PLANLINEAGE_LINEAGE_ADDRESS``) > stored value > default.  Reading never creates the store.

OpenLineage's own configuration (:mod:`planlineage.openlineage_config`) comes after these: its
transport is used when these name none; ``OPENLINEAGE_DISABLED=true`` silences everything.

``configured()`` is the one switch of the promise "nothing until configured": it is true only
when an address is set (gravitino/http transports), or a file transport with its file, or another
kind was chosen explicitly, or OpenLineage's configuration names a transport (never when disabled).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from planlineage import home, lazylog, openlineage_config
from planlineage.clock import utc_now
from planlineage.config import Config, from_listing
from planlineage.emitter.transport_kinds import BUILTIN, HTTP_ENDPOINT, check_kind
from planlineage.errors import Damaged, SealError, SettingError, StoreError, StoreUrlError, WrongKey
from planlineage.known_settings import REQUEUE_KEYS, SETTINGS, SETTINGS_FILE, Setting

log = lazylog.getLogger(__name__)  # logging loads only when something is logged

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def env_name(key: str) -> str:
    if key == "lineage.store":
        from planlineage.store import url as store_url  # store URLs are parsed only where one is set

        return store_url.ENV_NAME
    return "PLANLINEAGE_" + key.upper().replace(".", "_").replace("-", "_")


def is_local(key: str) -> bool:
    setting = SETTINGS.get(key)
    return setting is not None and setting.local


def _check_key(key: str) -> Setting:
    setting = SETTINGS.get(key)
    if setting is None:
        raise SettingError(f"unknown setting {key!r} (known: {', '.join(SETTINGS)})")
    return setting


def normalize(key: str, value: str) -> str:
    """The value as stored, or :class:`SettingError`."""
    setting = _check_key(key)
    value = str(value).strip()
    if setting.boolean:
        lowered = value.lower()
        if lowered not in _TRUE | _FALSE:
            raise SettingError(f"{key} must be true or false")
        return "true" if lowered in _TRUE else "false"
    if setting.number:
        try:
            if float(value) < 0:
                raise ValueError(value)
        except ValueError:
            raise SettingError(f"{key} must be a number (0 or more)") from None
    if setting.choices:
        value = value.lower()
        if value not in setting.choices:
            raise SettingError(f"{key} must be one of {', '.join(setting.choices)}")
    if key in ("lineage.transport", "lineage.transport-options"):
        try:
            return check_kind(value) if key == "lineage.transport" else openlineage_config.check_options(value)
        except ValueError as error:
            raise SettingError(f"{key}: {error}") from None
    if key == "lineage.store":
        from planlineage.store import url as store_url

        try:
            return store_url.normalize(value)
        except StoreUrlError as error:
            raise SettingError(f"lineage.store: {error}") from None
    if key == "lineage.ui-token" and 0 < len(value) < 16:  # graph.server.MIN_TOKEN: guessed in a few tries
        raise SettingError(
            "lineage.ui-token needs at least 16 characters: set a longer one, or unset it for a generated one"
        )
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
        from planlineage.emitter.transports.base import safe_address

        return safe_address(url)  # without it, print no more than scheme://host:port
    return redact_url(url)


def masked(key: str, value: str | None) -> str:
    """A value safe to print: a secret is never printed back in full."""
    if value is None or value == "":
        return "(unset)"
    if key in ("lineage.transport-options", openlineage_config.TRANSPORT_KEY):
        return openlineage_config.masked_text(value)  # the options are shown, their secrets are not
    setting = SETTINGS.get(key)
    if (setting is not None and setting.secret) or "token" in key or "password" in key:
        return value[:4] + "…" if len(value) >= 12 else "…"
    if key in ("lineage.address",):
        return _redact_url(value)
    if key == "lineage.store":
        from planlineage.store import url as store_url

        return store_url.masked(value)
    return value


class Settings:
    """The lineage settings over one store (``environ`` defaults to ``os.environ``).

    Without ``store``, the node's configured store is opened on first use, so ``lineage.store``
    can be read and changed even when the store it names cannot be used.
    """

    def __init__(self, store=None, environ: Mapping[str, str] | None = None):
        self._store = store
        self.environ = os.environ if environ is None else environ
        self.problems: list[str] = []  # what the user should know (a sealed value unreadable here)
        self._read: tuple[tuple[int, int, int] | None, dict[str, str]] | None = None  # (file's mark, values)
        self._config: tuple[tuple, Config] | None = None  # (what it was read from, the settings)

    @property
    def store(self):
        if self._store is None:
            from planlineage.store import open_store

            self._store = open_store(self.environ)
        return self._store

    @property
    def home(self) -> Path:
        return self._store.home if self._store is not None else home.home_dir(self.environ)

    @property
    def path(self) -> Path:
        return self.home / SETTINGS_FILE

    def _shared(self) -> bool:
        return bool(getattr(self.store, "shared", False))

    def stored(self) -> dict[str, str]:
        """The stored values (never creates anything): the node's file, or with a shared store
        the store's settings plus the node's own keys from its file."""
        values = self._file_values()
        if not self._shared():
            return values
        shared = self.store.read(
            lambda c: {r["key"]: r["value"] for r in c.execute("SELECT key, value FROM settings")}, default={}
        )
        return {
            **{k: v for k, v in self._unsealed(shared).items() if k in SETTINGS and not is_local(k)},
            **{k: v for k, v in values.items() if is_local(k)},
        }

    def _unsealed(self, shared: Mapping[str, str]) -> dict[str, str]:
        """The shared values with secret ones unsealed (planlineage.sealed); one that cannot be
        opened on this node is left out and said once (``self.problems``, the log)."""
        from planlineage import sealed

        opened = dict(shared)
        for name, value in shared.items():
            # only a secret setting is ever sealed: any other value is taken as it stands
            if name not in SETTINGS or not SETTINGS[name].secret or not sealed.is_sealed(value):
                continue
            try:
                keys = sealed.load_keys(self.home, self.environ)
                if not keys:
                    raise WrongKey(f"{name} in the shared store is sealed and this node has no store key")
                opened[name] = sealed.unseal(name, value, keys)
                if sealed.needs_reseal(value, keys):
                    self._reseal(name, value, sealed.seal(name, opened[name], keys[0]))
            except SealError as error:
                del opened[name]
                if isinstance(error, Damaged):
                    message = f"{error}; until then {name} is not used"
                else:
                    message = (
                        f"{error}: copy {sealed.key_path(self.home)} from the node where it was set (0600), "
                        f"or set {sealed.ENV_NAME}; until then {name} is not used"
                    )
                if message not in self.problems:
                    self.problems.append(message)
                    log.warning("planlineage: %s", message)
        return opened

    def _reseal(self, name: str, was: str, value: str) -> None:
        """A value sealed by an earlier release, or with a key that is no longer the current one,
        sealed again with the current key, only if nobody changed it meanwhile (a node with the
        key reads it first: the rotation completes as nodes read their settings)."""

        def swap(conn) -> None:
            conn.execute(
                "UPDATE settings SET value = ?, updated = ? WHERE key = ? AND value = ?", (value, utc_now(), name, was)
            )

        try:
            self.store.write(swap)
        except StoreError:
            pass  # read-only or busy: the next read reseals it

    def _file_values(self) -> dict[str, str]:
        """The file's values, read again only when the file changed (:meth:`_file_mark`), or a
        version-1 store's while there is no file: a compile asks for five settings, and each read
        of the legacy table opened the store."""
        try:
            mark = self._file_mark()
        except OSError as error:
            raise SettingError(f"cannot read {self.path}: {error.strerror or error}") from None
        if self._read is not None and self._read[0] == mark:
            return dict(self._read[1])
        values = self._read_file()
        self._read = (mark, values)
        return dict(values)

    def _file_mark(self) -> tuple[int, int, int] | None:
        """What changes whenever the settings file is written (it is replaced whole: a new inode);
        None when there is none."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return None
        return (stat.st_ino, stat.st_mtime_ns, stat.st_size)

    def _read_file(self) -> dict[str, str]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return self._legacy()
        except OSError as error:
            raise SettingError(f"cannot read {self.path}: {error.strerror or error}") from None
        try:
            values = json.loads(data.decode("utf-8"))["settings"]
            if not isinstance(values, dict):
                raise ValueError("not an object")
            return {str(k): str(v) for k, v in values.items() if k in SETTINGS}
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            self._quarantine()
            return {}

    def _quarantine(self) -> None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        moved = self.path.with_name(f"{SETTINGS_FILE}.corrupt-{stamp}")
        try:
            self.path.rename(moved)
        except OSError:
            moved = self.path  # read-only home: it stays where it is, and is said again next time
        message = (
            f"the settings file {self.path} could not be read and was moved aside as {moved.name}: "
            "lineage is off until you set lineage.address again (settings set); delete that copy to "
            "silence this message"
        )
        log.warning("planlineage: %s", message)
        home.mark_said(message)
        if moved != self.path:
            home.add_notice(message, moved, self.path.parent)

    def _legacy(self) -> dict[str, str]:
        """Settings a version-1 store kept in ``state.db`` (read-only, no file created)."""
        if self._store is None and not (self.home / "state.db").exists():
            return {}  # nothing to read: the (maybe unusable) configured store is not even opened
        if self._shared() or not self.store.exists():
            return {}

        def read(conn: sqlite3.Connection) -> dict[str, str]:
            if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'settings'").fetchone():
                return {}
            return {
                r["key"]: r["value"] for r in conn.execute("SELECT key, value FROM settings") if r["key"] in SETTINGS
            }

        try:
            return self.store.read(read, default={})
        except Exception:  # an unreadable old store holds no settings we could use
            return {}

    def _save(self, values: Mapping[str, str]) -> None:
        home.write_private_json(self.path, {"version": 1, "settings": dict(sorted(values.items()))})
        if not self._shared() and self.store.exists():  # settings of a version-1 store live here now: drop the old copy
            try:
                self.store.write(
                    lambda c: (
                        c.execute("DELETE FROM settings")
                        if c.execute("SELECT 1 FROM sqlite_master WHERE name = 'settings'").fetchone()
                        else None
                    )
                )
            except Exception:
                pass

    def source(self, key: str, _stored: Mapping[str, str] | None = None) -> tuple[str | None, str]:
        """``(value, origin)``: origin ``env``, ``store``, ``local`` (the node's own keys) or ``default``."""
        setting = _check_key(key)
        env_value = self.environ.get(env_name(key))
        if env_value is not None and env_value.strip() != "":
            try:
                return normalize(key, env_value), "env"
            except SettingError:
                return env_value.strip(), "env"
        if _stored is None:
            _stored = self._file_values() if is_local(key) else self.stored()
        if key in _stored:
            return _stored[key], "local" if is_local(key) else "store"
        return setting.default, "default"

    def get(self, key: str) -> str | None:
        return self.source(key)[0]

    def set(self, key: str, value: str) -> str:
        value = normalize(key, value)
        if self._shared_key(key):
            self._set_shared(key, value)
            if key in REQUEUE_KEYS:
                self._requeue_access()
            return value
        values = self._file_values()
        if value == "":
            values.pop(key, None)
        else:
            values[key] = value
        self._save(values)
        if key in REQUEUE_KEYS:
            self._requeue_access()
        return value

    def unset(self, key: str) -> None:
        _check_key(key)
        if self._shared_key(key):
            self._set_shared(key, "")
            return
        values = self._file_values()
        if key in values:
            del values[key]
            self._save(values)

    def _shared_key(self, key: str) -> bool:
        """Whether ``key`` is kept in the shared store (rather than the node's file)."""
        return not is_local(key) and self._shared()

    def _set_shared(self, key: str, value: str) -> None:
        if value and SETTINGS[key].secret:  # sealed at rest with a key kept apart (planlineage.sealed)
            from planlineage import sealed

            try:
                secret = sealed.load_key(self.home, self.environ)
            except SealError as error:
                raise SettingError(str(error)) from None
            if secret is None:
                self._refuse_a_second_key(key)
                secret = sealed.create_key(self.home)
                self.problems.append(
                    f"{key} is stored sealed in the shared store with the new key {sealed.key_path(self.home)}: "
                    f"copy that file (0600) to every node, or set {sealed.ENV_NAME} to its text"
                )
            value = sealed.seal(key, value, secret)

        def store_it(conn) -> None:
            if value == "":
                conn.execute("DELETE FROM settings WHERE key = ?", (key,))
            else:
                conn.execute(
                    "INSERT INTO settings (key, value, updated) VALUES (?, ?, ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated = excluded.updated",
                    (key, value, utc_now()),
                )

        self.store.write(store_it)

    def _refuse_a_second_key(self, key: str) -> None:
        """A node without the store key must not make a new one while the shared store already
        holds a value sealed with another node's key: the value it seals would be readable on
        this node only, and every other node would lose it."""
        from planlineage import sealed

        shared = self.store.read(
            lambda c: {r["key"]: r["value"] for r in c.execute("SELECT key, value FROM settings")}, default={}
        )
        held = sorted(n for n, v in shared.items() if n in SETTINGS and SETTINGS[n].secret and sealed.is_sealed(v))
        if held:
            raise SettingError(
                f"the shared store already holds {', '.join(held)} sealed with the store key of another node, "
                f"and this node has none: copy {sealed.key_path(self.home)} from a node where it was set "
                f"(0600), or set {sealed.ENV_NAME} to its text, then set {key} again "
                f"(to start over with a new key instead: `planlineage settings unset {held[0]}` first)"
            )

    def _requeue_access(self) -> None:
        """Events parked for a 401/403 get another chance with the new address or token."""
        from planlineage.emitter import outbox

        outbox.requeue_access(self.store)

    def version(self) -> tuple:
        """What changes whenever a stored setting changes (the settings file, the shared store's
        ``settings`` rows): a long-running process compares it to re-read its settings."""
        try:
            local = self._file_mark()
        except OSError:
            local = None
        openlineage = openlineage_config.mark(self.environ)  # openlineage.yml and OPENLINEAGE_* too
        if not self._shared():
            return (local, openlineage)
        import hashlib

        rows = self.store.read(
            lambda c: sorted((r["key"], r["value"]) for r in c.execute("SELECT key, value FROM settings")), default=[]
        )
        return (local, openlineage, hashlib.sha256(json.dumps(rows).encode("utf-8")).hexdigest())

    def list(self, keys: Iterable[str] | None = None) -> dict[str, tuple[str | None, str]]:
        """Every known key → ``(value, origin)``, raw (:func:`masked` to print), with OpenLineage's
        configuration over them (:func:`openlineage_config.overlay`)."""
        stored = self.stored()
        own = {k: self.source(k, stored) for k in SETTINGS}
        values, problems = openlineage_config.overlay(own, self.environ)
        for problem in problems:
            if problem not in self.problems:
                self.problems.append(problem)
                log.warning("planlineage: %s", problem)
        return {k: values[k] for k in keys} if keys else values

    def values(self) -> dict[str, str | None]:
        """Every known key -> its effective value."""
        return {k: v for k, (v, _) in self.list().items()}

    def list_masked(self) -> dict[str, tuple[str, str]]:
        return {k: (masked(k, v), origin) for k, (v, origin) in self.list().items()}

    # -- derived ---------------------------------------------------------------------------

    def config(self) -> Config:
        """Every setting, typed and validated (:mod:`planlineage.config`): read it once per
        command, and again in a long-running process when :meth:`version` changes."""
        read_from = (self.version(), sorted((k, v) for k, v in self.environ.items() if k.startswith("PLANLINEAGE_")))
        if self._config is None or self._config[0] != read_from:
            self._config = (read_from, from_listing(self.list()))
        return self._config[1]

    def configured(self) -> bool:
        return self.config().configured

    def ui_token(self) -> str | None:  # a node's own key: read without opening the state store
        return self.get("lineage.ui-token")

    def transport_options(self) -> tuple[str, dict[str, Any]]:
        """``(kind, options)`` for :func:`planlineage.emitter.transports.create_transport`; in the
        library's own options for a kind planlineage does not build itself or one from
        OpenLineage's configuration (:func:`openlineage_config.library_options`)."""
        config = self.config()
        kind = config.transport
        if kind not in BUILTIN or openlineage_config.is_openlineage_origin(config.transport_origin):
            return openlineage_config.library_options(config.listing, self.environ)
        if kind in ("gravitino", "http"):  # one name for the server, whatever the transport
            endpoint = {"endpoint": config.endpoint or HTTP_ENDPOINT} if kind == "http" else {}
            return kind, {"address": config.address, **endpoint, "token": config.token}
        if kind == "file":
            return kind, {"path": config.file}
        return kind, {}
