"""Split detection: datasets that name one physical table differently.

Every dataset seen in the events gets a key, built in steps; datasets whose keys meet are one
table. The steps only ever join what is provably the same table:

1. `kafka cluster` — brokers of one bootstrap list: a Kafka namespace names the cluster by its
   *first* bootstrap server, so two producers listing the same brokers in another order write two
   namespaces. Brokers count as one cluster only on evidence: a `properties.bootstrap.servers`
   list seen in a job's SQL (the `sql` job facet, or the scripts planlineage recorded) or a
   `hostList` resolver of the rules file. Other hosts are never joined: different host, different
   table.
2. `resolver` — the rules file's namespace resolvers (the registry's own code), which planlineage
   applies to its names; a producer not configured alike still writes the raw host.
3. `spelling` — the address run back through the registry's rules (`registry.canonical`):
   scheme aliases, host case (JDBC hosts, and Kafka/HDFS/Hive hosts, which DNS compares without
   case), default ports, s3a/s3n, trailing `/`, a database in the namespace.
4. `default schema`, 5. `name case` — `registry.canonical.equivalent_name`, per database.
6. `symlink` — a dataset whose `symlinks` facet points at another dataset's address (Gravitino's
   logical `metalake` / `catalog.schema.table` naming, a Hive table over its location), or whose
   TABLE symlink names a Flink table of a real catalog that a logical dataset names (Gravitino's
   Spark plugin reports `metalake` / `catalog.schema.table`, planlineage the physical address
   with the Flink table `catalog.schema.table` as its symlink).

A group is a split when it holds more than one distinct `(namespace, name)`. Its reason lists
the steps that joined it (a step counts when it reduced the number of distinct spellings).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from planlineage.registry.canonical import (
    canonical_address,
    equivalent_name,
    fold_host_case,
    is_logical,
    with_default_schema,
)
from planlineage.registry.resolvers import NamespaceResolver, resolve_namespace

from .explain import explain
from .inventory import DatasetSeen
from .kafka_clusters import KafkaClusters


@dataclass
class Split:
    datasets: list[DatasetSeen]
    reason: str
    fix: str

    def to_json(self) -> dict:
        return {
            "datasets": [
                {
                    "namespace": d.namespace,
                    "name": d.name,
                    "producers": sorted(d.producers),
                    "jobs": sorted(d.jobs),
                }
                for d in self.datasets
            ],
            "reason": self.reason,
            "fix": self.fix,
        }


# -- grouping ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Steps:
    clusters: KafkaClusters
    resolvers: tuple[NamespaceResolver, ...] = ()

    def forms(self, namespace: str, name: str) -> list[tuple[str, tuple[str, str]]]:
        """(step label, key after that step) for each step, in order."""
        out = []
        ns = self.clusters.resolve(namespace)
        out.append(("kafka cluster", (ns, name)))
        ns = resolve_namespace(list(self.resolvers), ns)
        out.append(("resolver", (ns, name)))
        ns, name = canonical_address(fold_host_case(ns), name)
        out.append(("spelling", (ns, name)))
        out.append(("default schema", (ns, with_default_schema(ns, name))))
        out.append(("name case", (ns, equivalent_name(ns, name))))
        return out

    def key(self, namespace: str, name: str) -> tuple[str, str]:
        return self.forms(namespace, name)[-1][1]


def _union_find(keys: Iterable[tuple[str, str]]):
    parent = {k: k for k in keys}

    def find(k):
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    def union(a, b):
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    return find, union


def find_splits(
    seen: dict[tuple[str, str], DatasetSeen],
    clusters: KafkaClusters | None = None,
    resolvers: Sequence[NamespaceResolver] = (),
    fallback: dict[str, DatasetSeen] | None = None,
) -> list[Split]:
    """`fallback`: Flink's fallback lineage datasets (empty namespace, `catalog.database.table`) by
    name, joined to the dataset whose TABLE symlink names that Flink table."""
    steps = Steps(clusters or KafkaClusters([]), tuple(resolvers))
    keys = {k: steps.key(*k) for k in seen}
    fallback = fallback or {}
    find, union = _union_find([*seen, *(d.key for d in fallback.values())])
    by_key: dict[tuple[str, str], tuple[str, str]] = {}
    for address, key in keys.items():
        if key in by_key:
            union(address, by_key[key])
        else:
            by_key[key] = address
    linked: set[tuple[str, str]] = set()
    logical = {k[1]: k for k in seen if is_logical(k[0])}
    for dataset in seen.values():
        for ns, name, link_type in dataset.symlinks:
            target = by_key.get(steps.key(ns, name))
            if target is None and link_type.upper() == "TABLE":
                target = logical.get(_catalog_table(name) or "")
            if target is not None and find(target) != find(dataset.key):
                union(target, dataset.key)
                linked.update({target, dataset.key})
    against_spec = _producer_against_spec(seen, fallback, by_key, steps)
    for a, b, _ in against_spec:
        union(a, b)
    groups: dict[tuple[str, str], list[DatasetSeen]] = {}
    for dataset in [*seen.values(), *fallback.values()]:
        groups.setdefault(find(dataset.key), []).append(dataset)
    splits = []
    for members in groups.values():
        if len(members) < 2:
            continue
        members.sort(key=lambda d: (d.namespace, d.name))
        labels = _joining_steps([m for m in members if m.namespace], steps)
        if any(m.key in linked for m in members):
            labels.append("symlink")
        keys_here = {m.key for m in members}
        labels += sorted({label for a, _, label in against_spec if a in keys_here})
        reason, fix = explain(members, labels, steps.clusters, steps.resolvers)
        splits.append(Split(members, reason, fix))
    splits.sort(key=lambda s: (s.datasets[0].namespace, s.datasets[0].name))
    return splits


def _producer_against_spec(
    seen: dict[tuple[str, str], DatasetSeen],
    fallback: dict[str, DatasetSeen],
    by_key: dict[tuple[str, str], tuple[str, str]],
    steps: Steps,
) -> list[tuple[tuple[str, str], tuple[str, str], str]]:
    """Pairs of datasets that name one table where a producer contradicts the OpenLineage naming
    spec (measured by the conformance suite, tests/conformance/decisions.toml), with the label:

    * `flink fallback` — openlineage-flink's listener names a table of a connector none of its
      identifier visitors knows (filesystem, datagen, print, ...) by Flink's fallback lineage
      dataset: an empty namespace and `catalog.database.table`; planlineage names the storage
      (a file: `file` and its path) and keeps that Flink table as the dataset's TABLE symlink.
    * `topic list` — openlineage-flink's listener splits a Kafka table's `topic` option on `,`
      only, so the topics `east;west` (Flink's list separator) become one dataset `east;west`;
      every other producer names each topic.
    """
    pairs = []
    by_table: dict[str, list[tuple[str, str]]] = {}
    for dataset in seen.values():
        for _, name, link_type in dataset.symlinks:
            if link_type.upper() == "TABLE":
                by_table.setdefault(name, []).append(dataset.key)
    for name, dataset in fallback.items():
        # `default_catalog.default_database.t` names every session's `t`: joined only to the one
        # dataset that table is, or, where several jobs have such a table, to the one of its job
        targets = by_table.get(name, [])
        if len(targets) > 1:
            targets = [t for t in targets if seen[t].jobs & dataset.jobs]
        if len(targets) == 1:
            pairs.append((dataset.key, targets[0], "flink fallback"))
    for namespace, name in seen:
        if not namespace.startswith("kafka://") or ";" not in name:
            continue
        for topic in name.split(";"):
            target = by_key.get(steps.key(namespace, topic.strip()))
            if target is not None:
                pairs.append(((namespace, name), target, "topic list"))
    return pairs


def _catalog_table(name: str) -> str | None:
    """A Flink table identifier of a real catalog (`catalog.db.table`), as planlineage's TABLE
    symlink names it: with Gravitino's Flink connector, the catalog is the Gravitino catalog, so
    the identifier is the logical name Gravitino's Spark plugin reports. Flink's built-in
    `default_catalog` names no Gravitino table."""
    parts = name.split(".")
    if len(parts) != 3 or not all(parts) or parts[0] == "default_catalog":
        return None
    return name


def _joining_steps(members: list[DatasetSeen], steps: Steps) -> list[str]:
    forms = [steps.forms(m.namespace, m.name) for m in members]
    labels = []
    before = len({m.key for m in members})
    for i, (label, _) in enumerate(forms[0]):
        after = len({f[i][1] for f in forms})
        if after < before:
            labels.append(label)
        before = after
    return labels
