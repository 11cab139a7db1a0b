"""Dataset namespace resolvers, ported from openlineage-java so that the same configuration
rewrites our namespaces exactly as it rewrites the other producers'.

Source: OpenLineage/OpenLineage `client/java/.../dataset/namespace/resolver/`
(HostListNamespaceResolver, PatternNamespaceResolver, PatternMatchingGroupNamespaceResolver,
DatasetNamespaceCombinedResolver) and the flat-property parsers of openlineage-flink
(FlinkConfigParser) and openlineage-spark (ArgumentParser).

Behaviour kept from the Java code, including what may surprise:
- The whole namespace string is searched, not just its host: `hostList` replaces *every*
  case-insensitive occurrence of the first listed host found anywhere in it
  (`kafka://kafka:9092` with host `kafka` becomes `<name>://<name>:9092`). The port and the
  rest of the string are kept. Of a multi-host namespace only the first listed host that occurs
  is replaced (`postgres://h1:5432,h2:5432` with hosts [h1, h2] -> `postgres://<name>:5432,h2:5432`).
- `schema`, when set, must match the namespace's scheme (`namespace.startsWith(schema + "://")`).
- Resolvers are tried in order; the first one that changes the namespace wins.
- Flat properties write lists as `[a;b]` (';'-separated, blank items dropped, items not trimmed),
  as both Java parsers do; `[a,b]` is ONE host "a,b" there, and so it is here.

Order: TOML tables in file order, then flat properties; a resolver defined in both is replaced by
the properties' one (openlineage-java's config merge). openlineage-java iterates a HashMap after
such a merge, so with two resolvers matching the same namespace its winner is not specified.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol


class ResolverConfigError(ValueError):
    pass


class NamespaceResolver(Protocol):
    @property
    def name(self) -> str: ...

    def resolve(self, namespace: str) -> str: ...


def _schema_mismatch(schema: str | None, namespace: str) -> bool:
    return bool(schema) and not namespace.startswith(f"{schema}://")


@dataclass(frozen=True)
class HostListResolver:
    name: str
    hosts: tuple[str, ...]
    schema: str | None = None

    def resolve(self, namespace: str) -> str:
        if _schema_mismatch(self.schema, namespace):
            return namespace
        for host in self.hosts:
            if host.lower() in namespace.lower():  # StringUtils.containsIgnoreCase
                if not host:
                    return namespace
                return re.sub(re.escape(host), lambda _: self.name, namespace, flags=re.IGNORECASE)
        return namespace


def _java_regex(regex: str) -> re.Pattern:
    # Java writes named groups (?<name>...); Python wants (?P<name>...). Lookbehinds stay.
    return re.compile(re.sub(r"\(\?<(?![=!])", "(?P<", regex))


@dataclass(frozen=True)
class PatternResolver:
    name: str
    regex: re.Pattern
    schema: str | None = None

    def resolve(self, namespace: str) -> str:
        if _schema_mismatch(self.schema, namespace) or not self.regex.search(namespace):
            return namespace
        return self.regex.sub(lambda _: self.name, namespace)


@dataclass(frozen=True)
class PatternGroupResolver:
    name: str
    regex: re.Pattern
    matching_group: str
    schema: str | None = None

    def resolve(self, namespace: str) -> str:
        if _schema_mismatch(self.schema, namespace):
            return namespace
        first = self.regex.search(namespace)
        if not first:
            return namespace
        # Java: matcher.replaceAll(matcher.group(g)): the first match's group replaces every match.
        replacement = first.group(self.matching_group) or ""
        return self.regex.sub(lambda _: replacement, namespace)


def resolve_namespace(resolvers: list[NamespaceResolver], namespace: str) -> str:
    for resolver in resolvers:
        resolved = resolver.resolve(namespace)
        if resolved != namespace:
            return resolved
    return namespace


# --- building from configuration ------------------------------------------------------------------

_FIELDS = {
    "hostlist": {"type", "hosts", "schema"},
    "pattern": {"type", "regex", "schema"},
    "patterngroup": {"type", "regex", "matchingGroup", "schema"},
}


def build_resolver(name: str, spec: Mapping[str, Any]) -> NamespaceResolver:
    """One resolver from its settings; ResolverConfigError says what is wrong."""
    if not isinstance(spec, Mapping):
        raise ResolverConfigError(f"resolver '{name}' must be a table of settings")
    kind = spec.get("type")
    if not isinstance(kind, str) or kind.lower() not in _FIELDS:
        raise ResolverConfigError(
            f"resolver '{name}': type must be one of hostList, pattern, patternGroup (got {kind!r})"
        )
    kind = kind.lower()
    unknown = sorted(set(spec) - _FIELDS[kind])
    if unknown:
        raise ResolverConfigError(f"resolver '{name}': unknown setting(s) {', '.join(unknown)}")
    schema = spec.get("schema")
    if schema is not None and not isinstance(schema, str):
        raise ResolverConfigError(f"resolver '{name}': schema must be a string")
    if kind == "hostlist":
        hosts = spec.get("hosts")
        if not isinstance(hosts, list) or not all(isinstance(h, str) for h in hosts):
            raise ResolverConfigError(
                f'resolver \'{name}\': hosts must be a list of strings, e.g. ["k1", "k2"] or [k1;k2]'
            )
        return HostListResolver(name, tuple(hosts), schema)
    regex = spec.get("regex")
    if not isinstance(regex, str) or not regex:
        raise ResolverConfigError(f"resolver '{name}': regex is required")
    try:
        compiled = _java_regex(regex)
    except re.error as exc:
        raise ResolverConfigError(f"resolver '{name}': invalid regex {regex!r}: {exc}") from exc
    if kind == "pattern":
        return PatternResolver(name, compiled, schema)
    group = spec.get("matchingGroup")
    if not isinstance(group, str) or group not in compiled.groupindex:
        raise ResolverConfigError(f"resolver '{name}': matchingGroup must name a group of the regex")
    return PatternGroupResolver(name, compiled, group, schema)


_PREFIXES = ("spark.openlineage.", "openlineage.")
_RESOLVERS_KEY = "dataset.namespaceResolvers."


def specs_from_properties(properties: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    """Flat openlineage-java style properties -> {resolver name: settings}.

    Accepts `dataset.namespaceResolvers.<name>.<setting>`, also prefixed with `openlineage.`
    (Flink) or `spark.openlineage.` (Spark); other keys are ignored. `[a;b]` is a list.
    """
    specs: dict[str, dict[str, Any]] = {}
    for key, value in properties.items():
        bare = key
        for prefix in _PREFIXES:
            if bare.startswith(prefix):
                bare = bare[len(prefix) :]
                break
        if not bare.startswith(_RESOLVERS_KEY):
            continue
        value = "" if value is None else str(value)
        if not value.strip():
            continue  # the Java parsers skip blank values
        path = bare[len(_RESOLVERS_KEY) :].split(".")
        if len(path) != 2 or not all(path):
            raise ResolverConfigError(f"property '{key}': expected dataset.namespaceResolvers.<name>.<setting>")
        name, setting = path
        if value.startswith("[") and value.endswith("]"):
            parsed: Any = [item for item in value[1:-1].split(";") if item.strip()]
        else:
            parsed = value
        specs.setdefault(name, {})[setting] = parsed
    return specs
