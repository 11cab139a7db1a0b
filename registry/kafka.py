"""Kafka and Upsert Kafka tables -> one dataset per topic.

Ported from openlineage-flink: `integration/flink/flink2/.../KafkaTableLineageDatasetIdentifierVisitor`
(Flink 2) and `integration/flink/shared/.../utils/KafkaUtils` (Flink 1): namespace `kafka://` + the
first entry of `properties.bootstrap.servers` exactly as written (split on ',' or, when there is
none, on ';'), name the topic. No trimming, no lower-casing, no default port.

Where the OpenLineage visitor would emit the raw `topic` option as one name ("a;b"), we follow
naming.md and Flink's own reading of the option: a list, one dataset per topic, parsed the way
Flink's StructuredOptionsSplitter parses list options (';'-separated, quotes allowed, unquoted
items trimmed). `topic-pattern` names topics only the broker knows: no dataset, a warning.
"""

from __future__ import annotations

from collections.abc import Mapping

from .javauri import java_split
from .rule_result import MissingOption, RuleResult, require


def flink_list(value: str, delimiter: str = ";") -> list[str]:
    """Flink's StructuredOptionsSplitter.splitEscaped (list-typed options such as `topic`)."""
    tokens: list[tuple[str, str]] = []  # (kind, text); kind in quoted/unquoted/delim
    i, n = 0, len(value)
    while i < n:
        c = value[i]
        if c in "'\"":
            buf, j = [], i + 1
            while True:
                if j >= n:
                    raise ValueError("quoting was not closed properly")
                if value[j] == c:
                    if j + 1 < n and value[j + 1] == c:
                        buf.append(c)
                        j += 2
                        continue
                    break
                buf.append(value[j])
                j += 1
            tokens.append(("quoted", "".join(buf)))
            i = j + 1
        elif c == delimiter:
            tokens.append(("delim", c))
            i += 1
        elif c.isspace():
            i += 1
        else:
            j = i
            while j < n and value[j] != delimiter:
                if value[j] in "'\"":
                    raise ValueError(f"illegal quoting at position {j}")
                j += 1
            tokens.append(("unquoted", value[i:j].strip()))
            i = j
    items: list[str] = []
    for k, (kind, text) in enumerate(tokens):
        following = tokens[k + 1][0] if k + 1 < len(tokens) else None
        if kind == "quoted":
            if following not in (None, "delim"):
                raise ValueError("illegal quoting")
            items.append(text)
        elif kind == "unquoted":
            items.append(text)
        elif following == "delim":
            items.append("")
    return items


def first_bootstrap_server(servers: str) -> str:
    if "," in servers:
        parts = java_split(servers, ",")
    elif ";" in servers:
        parts = java_split(servers, ";")
    else:
        parts = [servers]
    return parts[0] if parts else ""


def rule(options: Mapping[str, str], connector: str) -> RuleResult:
    servers = require(options, connector, "properties.bootstrap.servers")
    if not options.get("topic"):
        pattern = options.get("topic-pattern")
        if pattern:
            return RuleResult(
                warnings=[
                    f"connector '{connector}' reads 'topic-pattern' = '{pattern}', whose topics "
                    "cannot be known offline; no dataset"
                ]
            )
        raise MissingOption(connector, "topic")
    first = first_bootstrap_server(servers)
    if not first:
        return RuleResult(warnings=[f"connector '{connector}' has an empty first bootstrap server; no dataset"])
    try:
        topics = flink_list(options["topic"])
    except ValueError as exc:
        return RuleResult(warnings=[f"connector '{connector}' option 'topic' is not a valid list ({exc}); no dataset"])
    namespace = "kafka://" + first
    seen: list[str] = []
    for topic in topics:
        if topic and topic not in seen:
            seen.append(topic)
    if not seen:
        raise MissingOption(connector, "topic")
    return RuleResult(datasets=[(namespace, topic) for topic in seen])
