"""``spark-conf`` / ``flink-conf``: add the official OpenLineage listener to a job's configuration.

Input and output are the same format: a JSON object, Flink's YAML ``config.yaml`` (nested or
flat keys, read with a real YAML parser) or Spark's Java-properties text (``key=value``,
``key: value`` or ``key value`` as in ``spark-defaults.conf``), see
:mod:`planlineage.listener_conf.syntax`.  A key the user set is never changed; new keys are
appended after the user's text, which is kept byte for byte, in its own syntax and line ends
(YAML, properties) or added at the end of the object (JSON).  When nothing is added the input is
returned byte for byte.

Spark: ``spark.extraListeners=io.openlineage.spark.agent.OpenLineageSparkListener`` and the
``spark.openlineage.transport.*`` / ``spark.openlineage.namespace`` keys of openlineage-spark
(artifact ``io.openlineage:openlineage-spark_2.12`` or ``_2.13`` on the cluster).

Flink: only when ``lineage.flink-listener`` is true and the Flink version knows the option
``execution.job-status-changed-listeners`` (Flink 2.0 and later; ``DeploymentOptions`` in each
version's ``flink-dist`` jar, checked by a test), the listener factory of openlineage-flink and its
``openlineage.*`` transport keys.  A listener class the cluster lacks breaks job start-up, so
nothing is ever added unless the user turned the toggle on.

The transport: planlineage's own (gravitino or http at ``lineage.address``), or, when the active
transport comes from OpenLineage's configuration (``openlineage.yml``, ``OPENLINEAGE__*``,
``OPENLINEAGE_URL``) and is ``http`` or ``kafka``, that one mirrored in the keys the Java client
reads (:mod:`planlineage.listener_conf.mirror`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from planlineage import openlineage_config
from planlineage.emitter.transports.base import GRAVITINO_ENDPOINT, HTTP_ENDPOINT, HTTP_KINDS
from planlineage.listener_conf import mirror
from planlineage.listener_conf import syntax as conf_syntax
from planlineage.listener_conf.syntax import parse_properties, yaml_keys  # noqa: F401 - the readers, re-exported

if TYPE_CHECKING:
    from planlineage.config import Config

SPARK_LISTENER = "io.openlineage.spark.agent.OpenLineageSparkListener"
FLINK_LISTENER_OPTION = "execution.job-status-changed-listeners"
FLINK_LISTENER_FACTORY = "io.openlineage.flink.listener.OpenLineageJobStatusChangedListenerFactory"
#: The first Flink release whose configuration has ``execution.job-status-changed-listeners``.
FLINK_LISTENER_SINCE = (2, 0)

Warn = Callable[[str], None]


def _transport(config: Config, warn: Warn) -> list[tuple[str, str]] | None:
    """The ``transport.*`` entries (without their prefix) of where a cluster can send, or None
    (with one line of why)."""
    kind, origin = config.transport, config.transport_origin
    if openlineage_config.is_openlineage_origin(origin):
        options = json.loads(config.openlineage_transport or "{}")
        entries = mirror.java_transport(options)
        if entries is None:
            warn(f"the {kind} transport ({origin}) cannot be used by a cluster listener; nothing added")
        return entries
    address = config.address
    if kind not in HTTP_KINDS or not address:
        warn(f"the {kind} lineage transport cannot be used by a cluster listener; nothing added")
        return None
    if kind == "gravitino":
        endpoint = "/" + GRAVITINO_ENDPOINT
    else:
        endpoint = "/" + (config.endpoint or HTTP_ENDPOINT).lstrip("/")
    entries = [("type", "http"), ("url", address.rstrip("/")), ("endpoint", endpoint)]
    token = config.token
    if token:
        entries += [("auth.type", "api_key"), ("auth.apiKey", token)]
    return entries


def flink_knows_listener_option(version: str | None) -> bool:
    match = re.match(r"^\s*(\d+)\.(\d+)", version or "")
    if not match:
        return False
    return (int(match.group(1)), int(match.group(2))) >= FLINK_LISTENER_SINCE


@dataclass(frozen=True)
class Listener:
    """One engine's OpenLineage listener: the option naming it and where its own settings live."""

    engine: str
    option: str  # the engine option listing listener classes
    listener: str  # the class (or factory) of the OpenLineage integration
    prefix: str  # the integration's settings: <prefix>transport.*, <prefix><namespace_key>
    namespace_key: str


SPARK = Listener("Spark", "spark.extraListeners", SPARK_LISTENER, "spark.openlineage.", "namespace")
FLINK = Listener("Flink", FLINK_LISTENER_OPTION, FLINK_LISTENER_FACTORY, "openlineage.", "job.namespace")


def listener_entries(
    listener: Listener, config: Config, existing: Mapping[str, str], warn: Warn
) -> list[tuple[str, str]]:
    """The entries naming the listener, its transport and namespace, minus what the user set."""
    transport = _transport(config, warn)
    if transport is None:
        return []
    entries: list[tuple[str, str]] = []
    listeners = existing.get(listener.option)
    if listeners is None:
        entries.append((listener.option, listener.listener))
    elif listener.listener not in listeners:
        warn(
            f"{listener.option} is set by the application and left as is: add "
            f"{listener.listener} to it for {listener.engine} lineage"
        )
    transport_prefix = listener.prefix + "transport."
    if any(k.startswith(transport_prefix) for k in existing):
        warn(f"the application sets {transport_prefix}* itself; its transport is left as is")
    else:
        entries += [(transport_prefix + key, value) for key, value in transport]
    entries.append((listener.prefix + listener.namespace_key, config.namespace))
    return entries


def spark_entries(config: Config, existing: Mapping[str, str], warn: Warn) -> list[tuple[str, str]]:
    return listener_entries(SPARK, config, existing, warn)


def flink_entries(
    config: Config, version: str | None, existing: Mapping[str, str], warn: Warn
) -> list[tuple[str, str]]:
    if not config.flink_listener:
        return []
    if not flink_knows_listener_option(version):
        warn(f"Flink {version} has no {FLINK_LISTENER_OPTION} (Flink 2.0 and later); no listener added")
        return []
    return listener_entries(FLINK, config, existing, warn)


# -- formats ----------------------------------------------------------------------------------


def _json_indent(text: str) -> int | None:
    match = re.search(r"\{\s*\n([ \t]+)\"", text)
    if match:
        return len(match.group(1).replace("\t", "    "))
    return None


EntriesFn = Callable[["Config", Mapping[str, str], Warn], list[tuple[str, str]]]


def merge_text(
    text: str,
    entries_fn: EntriesFn,
    config: Config,
    warn: Warn,
    *,
    default_style: str = "=",
    syntax: str | None = None,
) -> str | None:
    """The merged text, or None when nothing is to be added (the caller keeps its input).

    A JSON object stays JSON. Otherwise `syntax` says how the text is read: ``"yaml"`` (Flink's
    ``config.yaml``) or ``"properties"`` (Spark's properties files); by default the one whose
    separator is `default_style` (``:`` for YAML, ``=`` or `` `` for properties).
    """
    syntax = syntax or ("yaml" if default_style == ":" else "properties")
    newline = "\r\n" if "\r\n" in text else "\n"  # a CRLF JSON file stays CRLF
    if text.lstrip().startswith(("{", "[")):
        try:
            data = json.loads(text)
        except ValueError:
            warn("the configuration is not valid JSON; left unchanged")
            return None
        if not isinstance(data, dict):
            warn("the configuration is not a JSON object; left unchanged")
            return None
        existing = {k: v if isinstance(v, str) else json.dumps(v) for k, v in data.items()}
        added = [(k, v) for k, v in entries_fn(config, existing, warn) if k not in data]
        if not added:
            return None
        data.update(added)
        indent = _json_indent(text)
        out = json.dumps(data, indent=indent, ensure_ascii=False).replace("\n", newline)
        return out + (newline if text.endswith("\n") else "")
    style: str | None
    try:
        if syntax == "yaml":
            existing, style = conf_syntax.yaml_keys(text), ":"
        else:
            existing, style = conf_syntax.parse_properties(text)
    except conf_syntax.SyntaxProblem as problem:
        warn(f"{problem}; left unchanged")
        return None
    added = [(k, v) for k, v in entries_fn(config, existing, warn) if k not in existing]
    if not added:
        return None
    style = style or default_style
    lines = ["# OpenLineage listener, added by planlineage"]
    for key, value in added:
        lines.append(
            conf_syntax.format_yaml(key, value) if syntax == "yaml" else conf_syntax.format_property(key, value, style)
        )
    end = conf_syntax.line_end(text)
    prefix = text if (not text or text.endswith(("\n", "\r"))) else text + end
    return prefix + end.join(lines) + end


def merge_bytes(
    data: bytes,
    entries_fn: EntriesFn,
    config: Config,
    *,
    warn: Warn,
    default_style: str = "=",
    syntax: str | None = None,
) -> bytes:
    """:func:`merge_text` over bytes; the input itself whenever nothing is added or it cannot be read."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        warn("the configuration is not UTF-8 text; left unchanged")
        return data
    bom = text.startswith("\ufeff")
    merged = merge_text(text[1:] if bom else text, entries_fn, config, warn, default_style=default_style, syntax=syntax)
    if merged is None:
        return data
    return (("\ufeff" if bom else "") + merged).encode("utf-8")
