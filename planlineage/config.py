"""The lineage settings as one typed, validated value, read once per command (or per change of the
settings, in a long-running process) by :meth:`planlineage.settings.Settings.config`.

Every module outside the settings modules reads a setting here, by attribute, never by its key
(tests/test_layout.py keeps it so): the key, its default and how its text is read (a number, a
boolean, a choice) are said once, in :mod:`planlineage.known_settings` and below.

Immutable ``NamedTuple``\\ s rather than dataclasses: ``submit`` builds one on every job
submission, and :mod:`dataclasses` loads :mod:`inspect` (tests/cli/test_lazy_imports.py).  The
``repr`` never shows a secret: only whether a token is set.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import NamedTuple

from planlineage import openlineage_config
from planlineage.known_settings import SETTINGS

Listing = Mapping[str, tuple[str | None, str]]  # Settings.list(): key -> (value, origin)

_TRUE = ("1", "true", "yes", "on")
#: Default cap of the SQL facet (``lineage.sql-max-bytes``): every event of a run carries it.
SQL_FACET_MAX_BYTES = 256 * 1024
#: What ``lineage.flink-runs`` may be: a Flink 2.x job's run is the listener's, planlineage's own, or either.
FLINK_RUNS_MODES = SETTINGS["lineage.flink-runs"].choices
#: Default cap of a script (``lineage.script-max-bytes``): see :mod:`planlineage.script_size`.
SCRIPT_MAX_BYTES = 4 * 1024 * 1024


def _number(text: str | None, default: float) -> float:
    """A setting's number (its text as stored or from the environment), ``default`` when unset or
    not a number."""
    try:
        return float(text or default)
    except ValueError:
        return default


def _default(key: str) -> float:
    return float(SETTINGS[key].default or 0)


class Limits(NamedTuple):
    """The sizes, rates and retries the settings bound (each read as its reader always read it)."""

    sql_max_bytes: int = SQL_FACET_MAX_BYTES  # the SQL facet's cap
    script_max_bytes: int = SCRIPT_MAX_BYTES  # larger scripts are not compiled
    compile_planners: int = 0  # planner JVMs of the compile service; 0: max(1, cores - 1)
    history_rate: float = 20.0  # watch --history: runs replayed per second at most
    history_max_runs: int = 1000  # watch --history: runs replayed per invocation
    history_threads: int = 0  # watch --history: scripts compiled at once; 0: the cores
    retry_backoff: float = 2.0  # seconds before a refused event is sent again (doubles)
    retry_attempts: int = 10  # attempts before a refused event is parked
    retry_max_age: float = 86400.0  # seconds of refusals before an event is parked
    gateway_session_retention: float = 86400.0  # gateway: seconds an unused session's statements are kept

    @classmethod
    def read(cls, value) -> Limits:
        """From ``value(key)`` (a setting's text, or None)."""

        def positive(key: str) -> float:  # 0, negative or unreadable: the default
            number = _number(value(key), _default(key))
            return number if number > 0 else _default(key)

        def at_least_zero(key: str) -> float:  # the outbox's retries: 0 is a value
            number = _number(value(key), _default(key))
            return number if number >= 0 else _default(key)

        script = int(_number(value("lineage.script-max-bytes"), 0))
        planners = int(_number(value("lineage.compile-planners"), 0))
        threads = _number(value("lineage.history-threads"), 0)
        return cls(
            sql_max_bytes=int(_number(value("lineage.sql-max-bytes"), SQL_FACET_MAX_BYTES)),
            script_max_bytes=script if script > 0 else SCRIPT_MAX_BYTES,
            compile_planners=max(planners, 0),
            history_rate=positive("lineage.history-rate"),
            history_max_runs=int(positive("lineage.history-max-runs")),
            history_threads=int(threads) if threads > 0 else 0,
            retry_backoff=at_least_zero("lineage.retry-backoff"),
            retry_attempts=max(1, int(at_least_zero("lineage.retry-attempts"))),
            retry_max_age=at_least_zero("lineage.retry-max-age"),
            gateway_session_retention=positive("lineage.gateway-session-retention"),
        )

    def history_threads_or_cores(self) -> int:
        return self.history_threads or int(os.cpu_count() or 1)


class Config(NamedTuple):
    """The effective lineage settings (planlineage's own, with OpenLineage's configuration over
    them: :func:`planlineage.openlineage_config.overlay`)."""

    configured: bool  # the one switch of "nothing until configured"
    transport: str  # the kind events go by: gravitino, http, file, console, or one openlineage-python builds
    transport_origin: str  # where the kind came from: default, store, env, or OpenLineage's configuration
    address: str | None  # the lineage server (gravitino and http alike), validated when set
    token: str | None  # the bearer token, unsealed (planlineage.sealed): never printed
    endpoint: str | None  # the http transport's endpoint path (None: its default)
    file: str | None  # the file transport's file
    openlineage_transport: str | None  # OpenLineage's configuration's transport (JSON) when it is the one used
    namespace: str  # the OpenLineage job namespace (lineage.namespace, else the metalake)
    metalake: str | None
    profile: str  # the naming profile
    rules: str | None  # a naming rules file
    flink_listener: bool  # inject openlineage-flink's listener (flink-conf)
    flink_runs: str  # auto, coexist or own
    platform_job_names: bool  # watch: streampark.<app> / dinky.<task>
    store: str | None  # this node's state store URL (None: SQLite under the home)
    ui_token: str | None  # the token `planlineage ui` requires beyond loopback: never printed
    limits: Limits
    listing: Listing  # every key -> (value, origin), for the settings modules' own helpers

    def __repr__(self) -> str:  # the secrets are said to be set, never shown
        shown = {name: value for name, value in zip(self._fields, self, strict=True) if name not in _HIDDEN}
        shown.update({name: "(set)" if getattr(self, name) else None for name in _SECRET_FIELDS})
        return f"Config({', '.join(f'{name}={value!r}' for name, value in shown.items())})"

    def why_off(self) -> str:
        """Why lineage is off, and what turns it on, in one clause."""
        return openlineage_config.not_configured(self.listing)

    def target(self) -> str:
        """Where events go, secret-free, for one line."""
        return openlineage_config.describe_target(self.listing)


_SECRET_FIELDS = ("token", "ui_token")
_HIDDEN = (*_SECRET_FIELDS, "listing", "openlineage_transport")  # the options may hold a password


def from_listing(listing: Listing) -> Config:
    """The typed settings from ``Settings.list()`` (what the environment and the store say, with
    OpenLineage's configuration over them)."""

    def value(key: str) -> str | None:
        return listing[key][0] if key in listing else SETTINGS[key].default

    def flag(key: str) -> bool:
        return (value(key) or "").strip().lower() in _TRUE

    kind, origin = listing["lineage.transport"]
    return Config(
        configured=openlineage_config.is_configured(listing),
        transport=kind or "gravitino",
        transport_origin=origin,
        address=(value("lineage.address") or None),
        token=value("lineage.token") or None,
        endpoint=value("lineage.endpoint") or None,
        file=value("lineage.file") or None,
        openlineage_transport=value(openlineage_config.TRANSPORT_KEY)
        if openlineage_config.TRANSPORT_KEY in listing
        else None,
        namespace=openlineage_config.namespace_of(listing),
        metalake=value("lineage.metalake") or None,
        profile=value("lineage.profile") or "openlineage",
        rules=value("lineage.rules") or None,
        flink_listener=flag("lineage.flink-listener"),
        flink_runs=(value("lineage.flink-runs") or "auto").strip().lower(),
        platform_job_names=flag("lineage.platform-job-names"),
        store=value("lineage.store") or None,
        ui_token=value("lineage.ui-token") or None,
        limits=Limits.read(value),
        listing=listing,
    )


def defaults() -> Config:
    """The settings as they are with nothing set anywhere (lineage off)."""
    return from_listing({key: (setting.default, "default") for key, setting in SETTINGS.items()})
