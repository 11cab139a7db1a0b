"""``spark-conf`` / ``flink-conf``: add the official OpenLineage listener to a job's configuration.

Input and output are the same format: a JSON object, or Java-properties text (``key=value``,
``key: value`` as in ``flink-conf.yaml``/``config.yaml``, or ``key value`` as in
``spark-defaults.conf``).  A key the user set is never changed; new keys are appended (properties)
or added at the end of the object (JSON).  When nothing is added the input is returned byte for
byte.

Spark: ``spark.extraListeners=io.openlineage.spark.agent.OpenLineageSparkListener`` and the
``spark.openlineage.transport.*`` / ``spark.openlineage.namespace`` keys of openlineage-spark
(artifact ``io.openlineage:openlineage-spark_2.12`` or ``_2.13`` on the cluster).

Flink: only when ``lineage.flink-listener`` is true and the Flink version knows the option
``execution.job-status-changed-listeners`` (Flink 2.0 and later; ``DeploymentOptions`` in each
version's ``flink-dist`` jar, checked by a test), the listener factory of openlineage-flink and its
``openlineage.*`` transport keys.  A listener class the cluster lacks breaks job start-up, so
nothing is ever added unless the user turned the toggle on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping

from planlineage.emitter.transports.base import GRAVITINO_ENDPOINT, HTTP_ENDPOINT, HTTP_KINDS
from planlineage.settings import namespace_of

SPARK_LISTENER = "io.openlineage.spark.agent.OpenLineageSparkListener"
FLINK_LISTENER_OPTION = "execution.job-status-changed-listeners"
FLINK_LISTENER_FACTORY = "io.openlineage.flink.listener.OpenLineageJobStatusChangedListenerFactory"
#: The first Flink release whose configuration has ``execution.job-status-changed-listeners``.
FLINK_LISTENER_SINCE = (2, 0)

Values = Mapping[str, tuple[str | None, str]]
Warn = Callable[[str], None]


def _value(values: Values, key: str) -> str | None:
    return values.get(key, (None, "default"))[0]


def _transport(values: Values, warn: Warn) -> tuple[str, str, str | None] | None:
    """``(url, endpoint, token)`` a cluster can send to, or None (with one line of why)."""
    kind = (_value(values, "lineage.transport") or "gravitino").lower()
    address = _value(values, "lineage.address")
    if kind not in HTTP_KINDS or not address:
        warn(f"the {kind} lineage transport cannot be used by a cluster listener; nothing added")
        return None
    if kind == "gravitino":
        endpoint = "/" + GRAVITINO_ENDPOINT
    else:
        endpoint = "/" + (_value(values, "lineage.endpoint") or HTTP_ENDPOINT).lstrip("/")
    return address.rstrip("/"), endpoint, _value(values, "lineage.token") or None


def flink_knows_listener_option(version: str | None) -> bool:
    match = re.match(r"^\s*(\d+)\.(\d+)", version or "")
    if not match:
        return False
    return (int(match.group(1)), int(match.group(2))) >= FLINK_LISTENER_SINCE


def spark_entries(values: Values, existing: Mapping[str, str], warn: Warn) -> list[tuple[str, str]]:
    transport = _transport(values, warn)
    if transport is None:
        return []
    url, endpoint, token = transport
    entries: list[tuple[str, str]] = []
    listeners = existing.get("spark.extraListeners")
    if listeners is None:
        entries.append(("spark.extraListeners", SPARK_LISTENER))
    elif SPARK_LISTENER not in listeners:
        warn(
            "spark.extraListeners is set by the application and left as is: add "
            f"{SPARK_LISTENER} to it for Spark lineage"
        )
    if any(k.startswith("spark.openlineage.transport.") for k in existing):
        warn("the application sets spark.openlineage.transport.* itself; its transport is left as is")
    else:
        entries += [
            ("spark.openlineage.transport.type", "http"),
            ("spark.openlineage.transport.url", url),
            ("spark.openlineage.transport.endpoint", endpoint),
        ]
        if token:
            entries += [
                ("spark.openlineage.transport.auth.type", "api_key"),
                ("spark.openlineage.transport.auth.apiKey", token),
            ]
    entries.append(("spark.openlineage.namespace", namespace_of(values)))
    return entries


def flink_entries(
    values: Values, version: str | None, existing: Mapping[str, str], warn: Warn
) -> list[tuple[str, str]]:
    if (_value(values, "lineage.flink-listener") or "").strip().lower() not in ("1", "true", "yes", "on"):
        return []
    if not flink_knows_listener_option(version):
        warn(f"Flink {version} has no {FLINK_LISTENER_OPTION} (Flink 2.0 and later); no listener added")
        return []
    transport = _transport(values, warn)
    if transport is None:
        return []
    url, endpoint, token = transport
    entries: list[tuple[str, str]] = []
    listeners = existing.get(FLINK_LISTENER_OPTION)
    if listeners is None:
        entries.append((FLINK_LISTENER_OPTION, FLINK_LISTENER_FACTORY))
    elif FLINK_LISTENER_FACTORY not in listeners:
        warn(
            f"{FLINK_LISTENER_OPTION} is set by the application and left as is: add "
            f"{FLINK_LISTENER_FACTORY} to it for Flink lineage"
        )
    if any(k.startswith("openlineage.transport.") for k in existing):
        warn("the application sets openlineage.transport.* itself; its transport is left as is")
    else:
        entries += [
            ("openlineage.transport.type", "http"),
            ("openlineage.transport.url", url),
            ("openlineage.transport.endpoint", endpoint),
        ]
        if token:
            entries += [
                ("openlineage.transport.auth.type", "api_key"),
                ("openlineage.transport.auth.apiKey", token),
            ]
    entries.append(("openlineage.job.namespace", namespace_of(values)))
    return entries


# -- formats ----------------------------------------------------------------------------------


def _logical_lines(text: str) -> list[str]:
    """Java-properties logical lines (a line ending in an odd number of backslashes continues)."""
    lines: list[str] = []
    buffer = ""
    for raw in text.splitlines():
        line = raw.lstrip() if buffer else raw
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            buffer += line[:-1]
            continue
        lines.append(buffer + line)
        buffer = ""
    if buffer:
        lines.append(buffer)
    return lines


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(m.group(1), m.group(1)), text)


def parse_properties(text: str) -> tuple[dict[str, str], str | None]:
    """``(key -> value, separator style)``; style is ``=``, ``:`` or `` `` of the first entry."""
    found: dict[str, str] = {}
    style = None
    for line in _logical_lines(text):
        stripped = line.lstrip()
        if not stripped or stripped[0] in "#!":
            continue
        match = re.match(r"((?:\\.|[^\\=:\s])*)(\s*[=:]\s*|\s+)(.*)$", stripped)
        if not match:
            continue
        key = _unescape(match.group(1))
        if not key:
            continue
        separator = match.group(2).strip() or " "
        style = style or separator
        found[key] = _unescape(match.group(3).strip())
    return found, style


def yaml_keys(text: str) -> dict[str, str]:
    """Flattened keys of a block-mapping YAML (``config.yaml`` of Flink 2 may nest options)."""
    found: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith(("#", "- ")):
            continue
        match = re.match(r"^(\s*)([^\s#:][^:#]*?)\s*:(?:\s+(.*))?$", line)
        if not match:
            continue
        indent = len(match.group(1))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        key = ".".join([k for _, k in stack] + [match.group(2).strip().strip("'\"")])
        value = (match.group(3) or "").strip()
        if value:
            found[key] = value.strip("'\"")
        else:
            stack.append((indent, match.group(2).strip().strip("'\"")))
            found.setdefault(key, "")
    return found


_PLAIN = re.compile(r"^[A-Za-z0-9_./@+=-][A-Za-z0-9_./:@+=-]*$")


def _format_entry(key: str, value: str, style: str) -> str:
    if style == ":":
        shown = value if _PLAIN.match(value) and ": " not in value else json.dumps(value)
        return f"{key}: {shown}"
    escaped = value.replace("\\", "\\\\").replace("\n", "\\n")
    if style == " ":
        return f"{key} {escaped}"
    return f"{key}={escaped}"


def _json_indent(text: str) -> int | None:
    match = re.search(r"\{\s*\n([ \t]+)\"", text)
    if match:
        return len(match.group(1).replace("\t", "    "))
    return None


EntriesFn = Callable[[Values, Mapping[str, str], Warn], list[tuple[str, str]]]


def merge_text(text: str, entries_fn: EntriesFn, values: Values, warn: Warn, *, default_style: str = "=") -> str | None:
    """The merged text, or None when nothing is to be added (the caller keeps its input)."""
    newline = "\r\n" if "\r\n" in text else "\n"  # a CRLF file stays CRLF
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
        added = [(k, v) for k, v in entries_fn(values, existing, warn) if k not in data]
        if not added:
            return None
        data.update(added)
        indent = _json_indent(text)
        out = json.dumps(data, indent=indent, ensure_ascii=False).replace("\n", newline)
        return out + (newline if text.endswith("\n") else "")
    existing, style = parse_properties(text)
    if any(line[:1].isspace() for line in text.splitlines() if line.strip()):
        for key, value in yaml_keys(text).items():  # nested YAML: its flattened keys count too
            existing.setdefault(key, value)
    added = [(k, v) for k, v in entries_fn(values, existing, warn) if k not in existing]
    if not added:
        return None
    style = style or default_style
    lines = ["# OpenLineage listener, added by planlineage"] + [_format_entry(k, v, style) for k, v in added]
    prefix = text if (not text or text.endswith(("\n", "\r"))) else text + newline
    return prefix + newline.join(lines) + newline


def merge_bytes(data: bytes, entries_fn: EntriesFn, values: Values, *, warn: Warn, default_style: str = "=") -> bytes:
    """:func:`merge_text` over bytes; the input itself whenever nothing is added or it cannot be read."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        warn("the configuration is not UTF-8 text; left unchanged")
        return data
    bom = text.startswith("\ufeff")
    merged = merge_text(text[1:] if bom else text, entries_fn, values, warn, default_style=default_style)
    if merged is None:
        return data
    return (("\ufeff" if bom else "") + merged).encode("utf-8")
