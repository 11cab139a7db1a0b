"""A transport from OpenLineage's configuration, as the OpenLineage Java client of a cluster
listener reads it (``spark.openlineage.transport.*``, Flink's ``openlineage.transport.*``).

The Python library's options (openlineage.yml, ``OPENLINEAGE__TRANSPORT__*``, ``OPENLINEAGE_URL``)
and the Java client's differ in places; what is mapped (the Java names from the OpenLineage Java
client's transport documentation):

* ``http``: the target the library posts to (``urljoin(url, endpoint)``) split into ``url``
  (scheme and authority) and ``endpoint`` (path and query), so both clients post to the same URL;
  ``timeout`` (seconds) → ``timeoutInMillis``; ``auth`` (``api_key``: ``apiKey``, whichever of the
  library's spellings was used; another provider's keys as they are); ``custom_headers`` →
  ``headers.*``; ``compression``.
* ``kafka``: ``topic`` → ``topicName``; ``messageKey`` (or ``message_key``); the producer
  ``config`` → ``properties.*`` with the String serializers the Java producer needs, librdkafka's
  ``sasl.mechanisms`` as ``sasl.mechanism`` and its ``sasl.username`` / ``sasl.password`` as the
  JAAS line the Java client reads them from.

Any other type has no mirror (None): a cluster listener is left unconfigured rather than guessed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

STRING_SERIALIZER = "org.apache.kafka.common.serialization.StringSerializer"
_LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value)
    return str(value)


def _http(options: Mapping[str, Any]) -> list[tuple[str, str]] | None:
    url = str(options.get("url") or "")
    if not url:
        return None
    target = urlsplit(urljoin(url, str(options.get("endpoint", "api/v1/lineage") or "")))
    if not target.scheme or not target.netloc:
        return None
    endpoint = (target.path or "/") + (f"?{target.query}" if target.query else "")
    entries = [("type", "http"), ("url", f"{target.scheme}://{target.netloc}"), ("endpoint", endpoint)]
    if options.get("timeout") not in (None, ""):
        entries.append(("timeoutInMillis", str(round(float(options["timeout"]) * 1000))))
    auth = options.get("auth")
    if isinstance(auth, Mapping) and auth.get("type"):
        if auth["type"] == "api_key":
            key = auth.get("apiKey") or auth.get("apikey") or auth.get("api_key")
            if key:
                entries += [("auth.type", "api_key"), ("auth.apiKey", str(key))]
        else:
            entries += [(f"auth.{k}", _text(v)) for k, v in auth.items()]
    headers = options.get("custom_headers")
    if isinstance(headers, Mapping):
        entries += [(f"headers.{k}", _text(v)) for k, v in headers.items()]
    if options.get("compression"):
        entries.append(("compression", str(options["compression"])))
    return entries


def _kafka(options: Mapping[str, Any]) -> list[tuple[str, str]] | None:
    config = options.get("config")
    topic = options.get("topic")
    if not isinstance(config, Mapping) or not topic:
        return None
    properties = {str(k): _text(v) for k, v in config.items()}
    if "sasl.mechanisms" in properties:
        properties.setdefault("sasl.mechanism", properties.pop("sasl.mechanisms"))
    user, password = properties.pop("sasl.username", None), properties.pop("sasl.password", None)
    module = _LOGIN_MODULES.get(properties.get("sasl.mechanism", "PLAIN").upper())
    if user is not None and password is not None and module and "sasl.jaas.config" not in properties:
        quoted = [value.replace("\\", "\\\\").replace('"', '\\"') for value in (user, password)]
        properties["sasl.jaas.config"] = f'{module} required username="{quoted[0]}" password="{quoted[1]}";'
    properties.setdefault("key.serializer", STRING_SERIALIZER)
    properties.setdefault("value.serializer", STRING_SERIALIZER)
    entries = [("type", "kafka"), ("topicName", str(topic))]
    message_key = options.get("messageKey") or options.get("message_key")
    if message_key:
        entries.append(("messageKey", str(message_key)))
    return entries + [(f"properties.{k}", v) for k, v in properties.items()]


def java_transport(options: Mapping[str, Any]) -> list[tuple[str, str]] | None:
    """The ``transport.*`` entries (key without the prefix, value) for the Java client, or None
    when the transport's type has no mirror here."""
    kind = str(options.get("type") or "")
    if kind == "http":
        return _http(options)
    if kind == "kafka":
        return _kafka(options)
    return None
