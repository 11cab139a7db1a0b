"""OpenLineage's own configuration, found as openlineage-python 1.54 finds it (``client.py``).

People configure OpenLineage once for every producer on a machine; planlineage reads the same
sources, in the library's order, after its own ``lineage.*`` settings (which win where set):

1. ``OPENLINEAGE_DISABLED=true`` (the library's spelling: ``true`` in any case) silences everything;
2. a YAML file: ``$OPENLINEAGE_CONFIG``, else ``./openlineage.yml``, else
   ``~/.openlineage/openlineage.yml`` (the first that is a readable file);
3. ``OPENLINEAGE__*`` variables: ``__`` nests, names are lower-cased, a value that parses as JSON
   is that JSON (``OPENLINEAGE__TRANSPORT__CONFIG='{"bootstrap.servers": "…"}'``); merged under
   the file (on a key both give, the file wins, nested mappings merge);
4. ``OPENLINEAGE_URL`` (+ ``OPENLINEAGE_API_KEY``, ``OPENLINEAGE_ENDPOINT``): the http transport,
   when 2 and 3 name no transport ``type``; with a ``composite`` transport it is added as the child
   ``default_http``, as the library aliases it.

With planlineage's settings (``key -> (value, origin)``) it says what is in force:
:func:`overlay` lays this configuration over them, :func:`is_configured` whether lineage is on,
:func:`namespace_of` the job namespace.

Standard library only (PyYAML is imported when a file is there): the settings are read by every
lifecycle command.  Nothing here logs or raises: a file that cannot be read counts as absent and
is said in :attr:`Found.problems`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, NamedTuple

from planlineage.emitter.transport_kinds import FACTORY, FACTORY_KEY, HTTP_KINDS

DISABLED_ENV = "OPENLINEAGE_DISABLED"
CONFIG_ENV = "OPENLINEAGE_CONFIG"
URL_ENV = "OPENLINEAGE_URL"
API_KEY_ENV = "OPENLINEAGE_API_KEY"
ENDPOINT_ENV = "OPENLINEAGE_ENDPOINT"
NAMESPACE_ENV = "OPENLINEAGE_NAMESPACE"
PREFIX = "OPENLINEAGE__"
FILE_NAME = "openlineage.yml"
DEFAULT_ENDPOINT = "api/v1/lineage"
#: openlineage-python's name for the http child OPENLINEAGE_URL adds to a composite transport.
DEFAULT_HTTP_CHILD = "default_http"

#: The origin ``settings list`` gives a transport from the variables (a file's is ``openlineage.yml: <path>``).
ENV_ORIGIN = "OPENLINEAGE__TRANSPORT__*"
URL_ORIGIN = "OPENLINEAGE_URL"
FILE_ORIGIN = FILE_NAME + ": "
#: The origin of ``lineage.transport`` while OPENLINEAGE_DISABLED silences everything.
DISABLED_ORIGIN = DISABLED_ENV + "=true"
ORIGINS = (ENV_ORIGIN, URL_ORIGIN, FILE_ORIGIN)


class Found(NamedTuple):
    """The transport OpenLineage's configuration names (its options as the library reads them),
    where its ``type`` came from, and what could not be read on the way."""

    transport: dict[str, Any]
    origin: str
    problems: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        return str(self.transport.get("type") or "")


def disabled(environ: Mapping[str, str]) -> bool:
    """``OPENLINEAGE_DISABLED`` as the library reads it: only ``true`` (any case, blanks around)."""
    return (environ.get(DISABLED_ENV) or "").strip().lower() == "true"


def is_openlineage_origin(origin: str) -> bool:
    return origin.startswith(ORIGINS)


def namespace(environ: Mapping[str, str]) -> str | None:
    """``OPENLINEAGE_NAMESPACE``: the job namespace the Python integrations (Airflow, dbt, Prefect)
    use when their own setting is not made."""
    value = (environ.get(NAMESPACE_ENV) or "").strip()
    return value or None


def _home(environ: Mapping[str, str]) -> str:
    return environ.get("HOME") or os.path.expanduser("~")


def config_path(environ: Mapping[str, str], cwd: str | None = None) -> str | None:
    """The file the library would read: the first candidate that is a readable file."""
    candidates = (
        environ.get(CONFIG_ENV),
        os.path.join(cwd or os.getcwd(), FILE_NAME),
        os.path.join(_home(environ), ".openlineage", FILE_NAME),
    )
    for path in candidates:
        try:
            if path and os.path.isfile(path) and os.access(path, os.R_OK):
                return os.path.abspath(path)
        except (OSError, ValueError):
            continue
    return None


_FILE_MEMO: dict[str, tuple[tuple[int, int, int], dict[str, Any], str | None]] = {}


def file_mark(path: str | None) -> tuple[int, int, int] | None:
    """What changes when the file is written: a long-running process compares it."""
    if not path:
        return None
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_ino, stat.st_mtime_ns, stat.st_size)


def read_file(path: str) -> tuple[dict[str, Any], str | None]:
    """The file's mapping and a problem (or None); read again only when the file changed."""
    mark = file_mark(path)
    memo = _FILE_MEMO.get(path)
    if mark is not None and memo is not None and memo[0] == mark:
        return memo[1], memo[2]
    problem = None
    try:
        import yaml  # only when there is a file to read

        with open(path, encoding="utf-8") as handle:
            content = yaml.safe_load(handle)
        if content is None:
            content, problem = {}, f"the OpenLineage configuration {path} is empty"
        elif not isinstance(content, dict):
            content, problem = {}, f"the OpenLineage configuration {path} is not a YAML mapping; it is not used"
    except Exception as error:  # the library, too, reads an unreadable file as no configuration
        content, problem = (
            {},
            f"cannot read the OpenLineage configuration {path}: {type(error).__name__}; it is not used",
        )
    if mark is not None:
        _FILE_MEMO[path] = (mark, content, problem)
    return content, problem


def _aliased(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables after the library's ``_alias_env_vars``: OPENLINEAGE_URL (with its key and
    endpoint) as a composite transport's ``default_http`` child, and as an ``async_http``
    transport's own url when that is the type."""
    variables = {k: v for k, v in environ.items() if k.startswith(PREFIX)}
    url = environ.get(URL_ENV)
    if not url:
        return variables
    child = f"{PREFIX}TRANSPORT__TRANSPORTS__{DEFAULT_HTTP_CHILD.upper()}"
    if any(k.startswith(child) for k in variables):
        return variables
    api_key, endpoint = environ.get(API_KEY_ENV), environ.get(ENDPOINT_ENV)
    auth = json.dumps({"type": "api_key", "apiKey": api_key}) if api_key else None
    variables[f"{child}__TYPE"] = "http"
    variables[f"{child}__URL"] = url
    if auth:
        variables[f"{child}__AUTH"] = auth
    if endpoint:
        variables[f"{child}__ENDPOINT"] = endpoint
    if variables.get(f"{PREFIX}TRANSPORT__TYPE") == "async_http":
        variables.setdefault(f"{PREFIX}TRANSPORT__URL", url)
        if auth:
            variables.setdefault(f"{PREFIX}TRANSPORT__AUTH", auth)
        if endpoint:
            variables.setdefault(f"{PREFIX}TRANSPORT__ENDPOINT", endpoint)
    return variables


def from_variables(environ: Mapping[str, str]) -> dict[str, Any]:
    """The ``OPENLINEAGE__*`` variables as one nested mapping, as the library builds it: sorted in
    reverse so that a shorter (outer) name is written last and wins over a nested one."""
    config: dict[str, Any] = {}
    for name, raw in sorted(_aliased(environ).items(), reverse=True):
        keys = [key.lower() for key in name[len(PREFIX) :].split("__")]
        try:
            value: Any = json.loads(raw)
        except ValueError:
            value = raw
        current = config
        for key in keys[:-1]:
            if not isinstance(current.get(key), dict):
                current[key] = {}
            current = current[key]
        current[keys[-1]] = value
    return config


def deep_merge(under: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` on top of ``under``; two mappings under one key merge, anything else is replaced."""
    merged = dict(under)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def url_transport(environ: Mapping[str, str]) -> dict[str, Any] | None:
    """The http transport of ``OPENLINEAGE_URL`` (+ ``OPENLINEAGE_API_KEY``, ``OPENLINEAGE_ENDPOINT``)."""
    url = environ.get(URL_ENV)
    if not url:
        return None
    transport: dict[str, Any] = {"type": "http", "url": url, "endpoint": environ.get(ENDPOINT_ENV, DEFAULT_ENDPOINT)}
    if api_key := environ.get(API_KEY_ENV):
        transport["auth"] = {"type": "api_key", "apiKey": api_key}
    return transport


def read(environ: Mapping[str, str], cwd: str | None = None) -> Found:
    """The transport OpenLineage's configuration names (an empty one, kind ``""``, when it names
    none or is disabled), with the problems met reading it."""
    if disabled(environ):
        return Found({}, "")
    problems: list[str] = []
    path = config_path(environ, cwd)
    from_file: dict[str, Any] = {}
    if path:
        content, problem = read_file(path)
        if problem:
            problems.append(problem)
        if isinstance(content.get("transport"), dict):
            from_file = content["transport"]
    variables = from_variables(environ).get("transport")
    from_env = variables if isinstance(variables, dict) else {}
    transport = deep_merge(from_env, from_file)
    if transport.get("type"):
        origin = FILE_ORIGIN + path if path and from_file.get("type") else ENV_ORIGIN
        return Found(transport, origin, tuple(problems))
    simple = url_transport(environ)
    if simple is not None:
        return Found(simple, URL_ORIGIN, tuple(problems))
    return Found({}, "", tuple(problems))


def mark(environ: Mapping[str, str], cwd: str | None = None) -> tuple:
    """What changes when OpenLineage's configuration may have: the file found and its mark, and
    the variables it reads."""
    path = config_path(environ, cwd)
    names = (DISABLED_ENV, URL_ENV, API_KEY_ENV, ENDPOINT_ENV, NAMESPACE_ENV, CONFIG_ENV)
    variables = sorted((k, v) for k, v in environ.items() if k.startswith(PREFIX) or k in names)
    return (path, file_mark(path), tuple(variables))


#: The key under which :meth:`planlineage.settings.Settings.list` gives the transport's options
#: (JSON) when OpenLineage's configuration names the active transport.
TRANSPORT_KEY = "openlineage.transport"

Values = Mapping[str, tuple[str | None, str]]


def is_configured(values: Values) -> bool:
    """Whether lineage is on, from ``key -> (value, origin)`` (``Settings.list()``): never while
    disabled; a transport from OpenLineage's configuration; else planlineage's own settings."""
    kind_value, kind_origin = values["lineage.transport"]
    if kind_origin == DISABLED_ORIGIN:
        return False  # OPENLINEAGE_DISABLED=true: nothing, whatever else is set
    if is_openlineage_origin(kind_origin):
        return True
    kind = kind_value or "gravitino"
    if kind in HTTP_KINDS:
        return bool(values["lineage.address"][0])
    if kind == "file":
        return bool(values["lineage.file"][0])
    return kind_origin != "default"  # console, or a kind openlineage-python builds, named explicitly


def not_configured(values: Values) -> str:
    """Why lineage is off, and what turns it on, in one clause (``values``: ``Settings.list()``)."""
    kind_value, kind_origin = values["lineage.transport"]
    if kind_origin == DISABLED_ORIGIN:
        return f"lineage is disabled by {DISABLED_ORIGIN} (unset it to report)"
    key, example = ("lineage.file", "/path/events.jsonl") if kind_value == "file" else ("lineage.address", "URL")
    return (
        f"lineage is not configured (no {key}): `planlineage settings set {key} {example}`, "
        f"or OpenLineage's own configuration ({URL_ENV}, {FILE_NAME}, OPENLINEAGE__TRANSPORT__*)"
    )


def describe_target(values: Values) -> str:
    """Where events go, secret-free, for one line (``lineage: …`` of ``watch --check``)."""
    kind_value, kind_origin = values["lineage.transport"]
    if is_openlineage_origin(kind_origin):
        return f"{kind_value} (from {kind_origin})"
    address = values["lineage.address"][0]
    if (kind_value or "gravitino") in HTTP_KINDS and address:
        from planlineage.emitter.transports.base import safe_address

        return f"{kind_value or 'gravitino'} {safe_address(address)}"
    return kind_value or "gravitino"


def namespace_of(values: Values) -> str:
    """The explicit ``lineage.namespace``; else the metalake (Gravitino with authorization
    reads ``job.namespace`` as the metalake); else ``planlineage``."""
    namespace, origin = values["lineage.namespace"]
    if origin != "default" and namespace:
        return namespace
    return values["lineage.metalake"][0] or namespace or "planlineage"


def overlay(values: Values, environ: Mapping[str, str], cwd: str | None = None):
    """``values`` (planlineage's own settings, ``key -> (value, origin)``) with what OpenLineage's
    configuration adds: ``lineage.transport``'s origin ``OPENLINEAGE_DISABLED=true`` when it is
    disabled; else ``OPENLINEAGE_NAMESPACE`` as ``lineage.namespace`` when neither that nor
    ``lineage.metalake`` is set; and, when planlineage's own settings name no transport, the
    configuration's transport as ``lineage.transport`` and its options under
    :data:`TRANSPORT_KEY`.  Also the problems met reading the file."""
    out = dict(values)
    if disabled(environ):
        out["lineage.transport"] = (out["lineage.transport"][0], DISABLED_ORIGIN)
        return out, ()
    job_namespace = namespace(environ)
    if job_namespace and out["lineage.namespace"][1] == "default" and not out["lineage.metalake"][0]:
        out["lineage.namespace"] = (job_namespace, NAMESPACE_ENV)
    if is_configured(out):  # planlineage's own settings win where set
        return out, ()
    found = read(environ, cwd)
    if not found.kind:
        return out, found.problems
    out["lineage.transport"] = (found.kind, found.origin)
    out[TRANSPORT_KEY] = (json.dumps(found.transport, sort_keys=True), found.origin)
    return out, found.problems


def check_options(text: str) -> str:
    """``lineage.transport-options`` as stored: a JSON object (ValueError otherwise)."""
    try:
        if not text or isinstance(json.loads(text), dict):
            return text
    except ValueError:
        pass
    raise ValueError('give a JSON object of the transport\'s options, e.g. {"topic": "lineage", "config": {...}}')


def library_options(values: Values, environ: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    """The active transport's ``(kind, options)`` in the library's options: one from OpenLineage's
    configuration (:func:`overlay` put it under :data:`TRANSPORT_KEY`); or a kind planlineage's
    ``lineage.transport`` names and does not build itself, whose options are OpenLineage's
    configuration of the same type with ``lineage.transport-options`` over it."""
    kind, origin = values["lineage.transport"]
    if is_openlineage_origin(origin):
        return as_options(json.loads(values[TRANSPORT_KEY][0] or "{}"))
    found = read(environ)
    base = found.transport if found.kind == kind else {}
    own = json.loads(values["lineage.transport-options"][0] or "{}")
    return as_options({**base, **own, "type": kind})


def as_options(transport: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """``(kind, options)`` for ``create_transport`` of a transport as the library configures it:
    built by the library's factory.  A ``composite`` transport's children (a list, or a mapping
    by name) become a list, each named (its ``name``, else its key, else its type) and in the
    same form as a single transport (two of one name are for the composite to refuse)."""
    kind = str(transport.get("type") or "")
    options: dict[str, Any] = {**transport, "type": kind, FACTORY_KEY: FACTORY}
    if kind == "composite":
        children = transport.get("transports") or []
        if isinstance(children, Mapping):
            children = [{**child, "name": name} for name, child in children.items() if child]
        named = []
        for child in children if isinstance(children, list) else []:
            child = dict(child) if isinstance(child, Mapping) else {}
            named.append(as_options({**child, "name": str(child.get("name") or child.get("type") or "")})[1])
        options["transports"] = named
    return kind, options


# -- secrets --------------------------------------------------------------------------------------


def _is_secret(key: str) -> bool:
    from planlineage.registry.secrets import is_secret_key  # lazy: loaded only to print or scrub

    return is_secret_key(key)


def masked(options: Any) -> Any:
    """``options`` safe to print: secret keys' values (api keys, tokens, passwords, Kafka's
    ``sasl.password``, ``sasl.jaas.config``, ...) masked, URL user info and secret parameters redacted."""
    from planlineage.registry.secrets import MASK, redact_url

    if isinstance(options, Mapping):
        return {
            key: (MASK if _is_secret(str(key)) and value not in (None, "") else masked(value))
            for key, value in options.items()
        }
    if isinstance(options, list | tuple):
        return [masked(value) for value in options]
    if isinstance(options, str) and ("@" in options or "=" in options):
        return redact_url(options)
    return options


def secrets(options: Any) -> list[str]:
    """Every secret string in ``options`` (nested), longest first: what a message must never show."""
    from planlineage.registry.secrets import secret_values

    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, Mapping):
            flat = {str(k): v for k, v in value.items() if isinstance(v, str)}
            found.update(secret_values(flat))
            for v in value.values():
                walk(v)
        elif isinstance(value, list | tuple):
            for v in value:
                walk(v)

    walk(options)
    return sorted(found, key=len, reverse=True)


def masked_text(text: str) -> str:
    """A JSON text of options, its secrets masked (text that is no JSON is not shown at all)."""
    try:
        return json.dumps(masked(json.loads(text)), sort_keys=True, ensure_ascii=False)
    except ValueError:
        return "…"
