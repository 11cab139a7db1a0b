"""Why a group of datasets is one table, and the change that makes its producers agree.

The target spelling is the OpenLineage one: what openlineage-java (Spark, Flink) and
planlineage's built-in rules write (`registry.canonical.canonical_address`), with the schema named
where the database has a default one. Every member spelled otherwise is a side to fix, and the fix
names the setting of *its* producer that changes it (a dbt profile, an Airflow connection, a Flink
table option, a rules-file line), because that is where a platform team can act.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from planlineage.registry.canonical import (
    JDBC_SCHEMES,
    canonical_address,
    fold_host_case,
    is_logical,
    preferred_case,
    scheme_of,
    with_default_schema,
)

if TYPE_CHECKING:
    from planlineage.registry.resolvers import NamespaceResolver

    from .inventory import DatasetSeen
    from .kafka_clusters import KafkaClusters

PLANLINEAGE_PRODUCER = "https://github.com/planlineage/planlineage"


def producer_kind(producer: str) -> str:
    """A producer URL -> a short name (`spark`, `flink`, `airflow`, `dbt`, `planlineage`, ...)."""
    text = producer.lower()
    if text.startswith(PLANLINEAGE_PRODUCER):
        return "planlineage"
    for kind in ("spark", "flink", "airflow", "dbt", "gravitino", "trino", "hive"):
        if kind in text:
            return kind
    if "/client/python" in text:
        return "openlineage-python"
    if "/client/java" in text:
        return "openlineage-java"
    return producer.rstrip("/").rsplit("/", 1)[-1] or producer


def _kinds(dataset: DatasetSeen) -> list[str]:
    return sorted({producer_kind(p) for p in dataset.producers})


def _side(dataset: DatasetSeen) -> str:
    jobs = ", ".join(sorted(dataset.jobs)[:3]) + (" …" if len(dataset.jobs) > 3 else "")
    return f"{'/'.join(_kinds(dataset))} ({jobs or 'no job'}) writes `{dataset.namespace}` `{dataset.name}`"


def _target(members: list[DatasetSeen]) -> tuple[str, str]:
    """The spelling every producer should write: the OpenLineage one of the group."""
    physical = [m for m in members if not is_logical(m.namespace)]
    pool = physical or members
    canonical = [canonical_address(m.namespace, m.name) for m in pool]
    full = [(ns, with_default_schema(ns, n)) for ns, n in canonical]
    written = [s for s in full if any(m.key == s for m in pool)]  # prefer a spelling already in use
    if not written:
        return full[0]
    # of those, the one in the case the store keeps names and hosts in
    return min(written, key=lambda s: (s[1] != preferred_case(*s), s[0] != fold_host_case(s[0])))


def _host_port(namespace: str) -> tuple[str | None, int | None, str]:
    try:
        parts = urlsplit(namespace)
        return parts.hostname, parts.port, parts.path
    except ValueError:
        return None, None, ""


def _spelling_reasons(members: list[DatasetSeen]) -> list[str]:
    reasons = []
    schemes = sorted({scheme_of(m.namespace) for m in members})
    if len(schemes) > 1:
        if set(schemes) <= {"s3", "s3a", "s3n"}:
            reasons.append("s3/s3a/s3n: " + " vs ".join(f"{s}://" for s in schemes) + " name one bucket")
        else:
            reasons.append("scheme alias: " + " vs ".join(f"{s}://" for s in schemes))
    parsed = [_host_port(m.namespace) for m in members]
    hosts = {h for h, _, _ in parsed if h}
    raw_hosts = {m.namespace.split("://", 1)[-1].split("/")[0].rsplit(":", 1)[0] for m in members}
    if len(raw_hosts) > 1 and len({h.lower() for h in raw_hosts}) == 1:
        reasons.append("host case: " + " vs ".join(sorted(raw_hosts)))
    ports = {p for _, p, _ in parsed}
    if None in ports and len(ports) > 1 and len(hosts) <= 1:
        default = sorted(p for p in ports if p is not None)[0]
        reasons.append(f"default port: one side leaves out :{default}, the default the JDBC rule adds")
    if any(path.strip("/") and scheme_of(m.namespace) in JDBC_SCHEMES for m, (_, _, path) in zip(members, parsed)):
        reasons.append("JDBC database written in the namespace instead of the name")
    names = {m.name for m in members}
    if len(names) > 1 and len({n.strip("/") for n in names}) == 1:
        reasons.append("trailing or leading slash in the name")
    return reasons or ["address spelling differs from the OpenLineage naming"]


_HOW = {
    "dbt": "in the dbt profile (profiles.yml: host, port, database, schema); openlineage-dbt writes them as typed",
    "airflow": "in the Airflow connection (conn type, host, port, schema) or the task's table/key arguments; "
    "the provider writes them as given",
    "planlineage": "in the Flink table's options, or the [connectors.*] template of the rules file (lineage.rules)",
    "flink": "in the Flink table's options",
    "spark": "in the Spark job's table or path",
}


def _how(dataset: DatasetSeen) -> str:
    kinds = _kinds(dataset)
    known = [_HOW[k] for k in kinds if k in _HOW]
    if known:
        return known[0]
    return f"where that emitter builds the dataset (producer {', '.join(sorted(dataset.producers))})"


def _kafka_fix(members: list[DatasetSeen], clusters: KafkaClusters) -> str:
    cluster = next((clusters.cluster_of(m.namespace) for m in members if clusters.cluster_of(m.namespace)), None)
    brokers = clusters.members.get(cluster or "", [m.namespace[len("kafka://") :] for m in members])
    hosts = sorted({b.rsplit(":", 1)[0] for b in brokers})
    label = _cluster_label(hosts)
    toml_hosts = ", ".join(f'"{h}"' for h in hosts)
    return (
        f"list the same broker first in every producer's bootstrap servers (`{brokers[0]}`), or name the "
        f"cluster once for all of them: in the rules file `[dataset.namespaceResolvers.{label}]` "
        f'`type = "hostList"` `hosts = [{toml_hosts}]` `schema = "kafka"`, and the same for Spark/Flink '
        f"listeners: `spark.openlineage.dataset.namespaceResolvers.{label}.type=hostList`, "
        f"`spark.openlineage.dataset.namespaceResolvers.{label}.hosts=[{';'.join(hosts)}]` "
        f"(Flink: `openlineage.dataset.namespaceResolvers.{label}.*`)"
    )


def _cluster_label(hosts: list[str]) -> str:
    prefix = _common(hosts).rstrip("-._0123456789")
    suffix = _common([h[::-1] for h in hosts])[::-1].lstrip("-._0123456789")
    label = "-".join(p for p in (prefix, suffix.split(".")[0] if suffix else "") if p)
    return re.sub(r"[^A-Za-z0-9_-]", "-", label) or "kafka-cluster"


def _common(items: list[str]) -> str:
    if not items:
        return ""
    first, last = min(items), max(items)
    i = 0
    while i < min(len(first), len(last)) and first[i] == last[i]:
        i += 1
    return first[:i]


def _gravitino_fix(logical: list[DatasetSeen], physical: list[DatasetSeen]) -> str:
    metalake = logical[0].namespace
    logical_kinds = sorted({k for m in logical for k in _kinds(m)})
    physical_kinds = sorted({k for m in physical for k in _kinds(m)}) or ["the other producers"]
    if "planlineage" in logical_kinds:
        return (
            f"use one naming: let {', '.join(physical_kinds)} name the table the Gravitino way (metalake "
            f"`{metalake}`; for Spark, Gravitino's OpenLineage Spark plugin), or switch planlineage to the physical "
            "naming with `planlineage settings set lineage.profile openlineage`"
        )
    if "planlineage" in physical_kinds:
        return (
            "use one naming: switch planlineage to Gravitino's naming with `planlineage settings set "
            f"lineage.profile gravitino` and `planlineage settings set lineage.metalake {metalake}`, or let "
            f"{', '.join(logical_kinds)} report the physical address"
        )
    return (
        f"use one naming: {', '.join(logical_kinds)} report Gravitino's logical name (metalake `{metalake}`), "
        f"{', '.join(physical_kinds)} the physical address; configure them alike"
    )


def _resolver_fix(members: list[DatasetSeen], resolvers: Sequence[NamespaceResolver]) -> tuple[str, str]:
    """The resolver that joined the group, and its flat properties for the listeners not using it."""
    for resolver in resolvers:
        raw = [m for m in members if resolver.resolve(m.namespace) != m.namespace]
        if not raw:
            continue
        prefix = f"spark.openlineage.dataset.namespaceResolvers.{resolver.name}"
        kind = {"HostListResolver": "hostList", "PatternResolver": "pattern", "PatternGroupResolver": "patternGroup"}
        settings = [f"{prefix}.type={kind.get(type(resolver).__name__, type(resolver).__name__)}"]
        # Each resolver kind has its own fields (registry/resolvers.py); read those it has.
        hosts, regex = getattr(resolver, "hosts", None), getattr(resolver, "regex", None)
        group, schema = getattr(resolver, "matching_group", None), getattr(resolver, "schema", None)
        if hosts:
            settings.append(f"{prefix}.hosts=[{';'.join(hosts)}]")
        if regex is not None:
            java_regex = regex.pattern.replace("(?P<", "(?<")  # back to Java's group syntax
            settings.append(f"{prefix}.regex={java_regex}")
        if group:
            settings.append(f"{prefix}.matchingGroup={group}")
        if schema:
            settings.append(f"{prefix}.schema={schema}")
        sides = "; ".join(_side(m) for m in raw)
        reason = f"namespace resolver `{resolver.name}` of the rules file joins them, but {sides}"
        fix = (
            f"give the producers that write the raw address the same resolver: `{'`, `'.join(settings)}` "
            "(Flink: the same keys without the `spark.` prefix)"
        )
        return reason, fix
    return (
        "a namespace resolver of the rules file joins them, but not every producer applies it",
        "give every openlineage-java producer the rules file's namespace resolvers",
    )


def _against_spec(members: list[DatasetSeen], labels: list[str]) -> tuple[list[str], list[str], list[DatasetSeen]]:
    """Reasons and fixes of a split where a producer contradicts the OpenLineage naming spec
    (decided from the producer's source in tests/conformance/decisions.toml: the spec is kept), and
    the members that producer named so."""
    reasons: list[str] = []
    fixes: list[str] = []
    odd: list[DatasetSeen] = []
    if "flink fallback" in labels:
        fallback = [m for m in members if not m.namespace]
        named = [m for m in members if m.namespace]
        odd += fallback
        tables = ", ".join(f"`{m.name}`" for m in fallback)
        where = " and ".join(f"`{m.namespace}` `{m.name}`" for m in named)
        reasons.append(
            f"{'/'.join(sorted({k for m in fallback for k in _kinds(m)}))} names the Flink table {tables} by Flink's "
            "fallback lineage dataset (an empty namespace and the catalog name): no identifier visitor of "
            "openlineage-flink's listener (1.53.0) knows the table's connector (it knows kafka, upsert-kafka, jdbc "
            "and Kinesis), so that node names no storage; the OpenLineage naming spec names the storage, "
            f"as {where} does, with the Flink table as its TABLE symlink"
        )
        fixes.append(
            f"keep {where}: it is the node other producers (Spark, files) merge with; the listener's node "
            f"{tables} merges with nothing and no setting of the listener changes it: ignore it, or turn the "
            "listener off for such jobs (`planlineage settings set lineage.flink-listener false` before "
            "`flink-conf`) and let planlineage report them; with both on, `lineage.flink-runs` `coexist` "
            "keeps both producers' events on one job and run"
        )
    if "topic list" in labels:
        listed = [m for m in members if m.namespace.startswith("kafka://") and ";" in m.name]
        odd += listed
        for m in listed:
            topics = " and ".join(f"`{t.strip()}`" for t in m.name.split(";"))
            reasons.append(
                f"{_side(m)}: one topic named `{m.name}`, which does not exist; Flink's Kafka connector reads the "
                f"topics {topics} (its `topic` option is a list separated by `;`), and openlineage-flink's "
                "listener (1.53.0) splits that option on `,` only"
            )
        fixes.append(
            "keep the per-topic datasets (the OpenLineage naming spec: one dataset per topic); for the listener "
            "to name them too, declare one Flink table per topic instead of a `topic` list"
        )
    return reasons, fixes, odd


def explain(
    members: list[DatasetSeen],
    labels: list[str],
    clusters: KafkaClusters,
    resolvers: Sequence[NamespaceResolver] = (),
) -> tuple[str, str]:
    reasons, fixes, odd = _against_spec(members, labels)
    members = [m for m in members if m not in odd] or members
    target = _target(members)
    deviating = [m for m in members if m.key != target]
    if "kafka cluster" in labels:
        brokers = " and ".join(f"`{m.namespace}`" for m in members)
        reasons.append(f"Kafka broker of the same bootstrap list: {brokers} are one cluster")
        fixes.append(_kafka_fix(members, clusters))
    if "resolver" in labels:
        reason, fix = _resolver_fix(members, resolvers)
        reasons.append(reason)
        fixes.append(fix)
    if "spelling" in labels:
        reasons.extend(_spelling_reasons([m for m in members if "://" in m.namespace] or members))
    if "default schema" in labels:
        short = [m for m in members if len(m.name.split(".")) == 2]
        reasons.append(
            "JDBC schema defaulting: "
            + ", ".join(f"`{m.name}`" for m in short)
            + f" leaves out the default schema of `{target[1]}`"
        )
    if "name case" in labels:
        reasons.append("name case: " + " vs ".join(sorted({f"`{m.name}`" for m in members})))
    if "symlink" in labels:
        logical = [m for m in members if is_logical(m.namespace)]
        if logical:
            if logical[0].symlinks:
                how = "it keeps as a symlink"
            else:
                how = f"whose TABLE symlink names the same catalog table `{logical[0].name}`"
            reasons.append(f"Gravitino logical name (metalake `{logical[0].namespace}`) vs the physical address {how}")
            fixes.append(_gravitino_fix(logical, [m for m in members if m not in logical]))
        else:
            reasons.append("logical table name vs physical location, joined by a symlink facet")
            fixes.append("report the table under one name in every producer; a symlink does not merge nodes")
    # the spelling steps, or nothing else said what to change: one line per side to fix
    if (deviating and not fixes) or ({"spelling", "default schema", "name case"} & set(labels)):
        for m in deviating:
            if "://" not in m.namespace and "symlink" in labels:
                continue
            fixes.append(f"{_side(m)}; make it write `{target[0]}` `{target[1]}` {_how(m)}")
    return "; ".join(dict.fromkeys(reasons)), "; ".join(dict.fromkeys(fixes))
