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

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from planlineage.registry.canonical import (
    canonical_address,
    equivalent_name,
    fold_host_case,
    is_logical,
    with_default_schema,
)
from planlineage.registry.resolvers import NamespaceResolver, resolve_namespace

from .explain import explain


@dataclass
class DatasetSeen:
    namespace: str
    name: str
    producers: set[str] = field(default_factory=set)
    jobs: set[str] = field(default_factory=set)
    symlinks: set[tuple[str, str, str]] = field(default_factory=set)

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)


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


def add_to_inventory(seen: dict[tuple[str, str], DatasetSeen], event: dict) -> None:
    """The datasets of one event added to `seen` (the event itself is not kept)."""
    producer = str(event.get("producer") or "(no producer)")
    job = event.get("job") or {}
    job_name = str(job.get("name") or "")
    datasets = [*(event.get("inputs") or []), *(event.get("outputs") or [])]
    if isinstance(event.get("dataset"), dict):
        datasets.append(event["dataset"])
    for dataset in datasets:
        if not isinstance(dataset, dict):
            continue
        namespace, name = dataset.get("namespace"), dataset.get("name")
        if not isinstance(namespace, str) or not isinstance(name, str) or not namespace or not name:
            continue
        entry = seen.setdefault((namespace, name), DatasetSeen(namespace, name))
        entry.producers.add(producer)
        if job_name:
            entry.jobs.add(job_name)
        symlinks = ((dataset.get("facets") or {}).get("symlinks") or {}).get("identifiers") or []
        for link in symlinks:
            if isinstance(link, dict) and link.get("namespace") and link.get("name"):
                entry.symlinks.add((str(link["namespace"]), str(link["name"]), str(link.get("type") or "")))


# -- Kafka cluster evidence ------------------------------------------------------------------------

_BOOTSTRAP = re.compile(r"""['"]?(?:properties\.)?bootstrap\.servers['"]?\s*[=:]\s*'([^']+)'""", re.I)


def bootstrap_lists(sql_texts: Iterable[str]) -> list[list[str]]:
    """The Kafka bootstrap lists written in SQL (`'properties.bootstrap.servers' = 'a:9092,b:9092'`)."""
    lists = []
    for text in sql_texts:
        for match in _BOOTSTRAP.finditer(text or ""):
            separator = "," if "," in match[1] else ";"
            entries = [e.strip() for e in match[1].split(separator) if e.strip()]
            if len(entries) > 1:
                lists.append(entries)
    return lists


def sql_of(events: Iterable[dict]) -> list[str]:
    texts = []
    for event in events:
        sql = (((event.get("job") or {}).get("facets") or {}).get("sql") or {}).get("query")
        if isinstance(sql, str):
            texts.append(sql)
    return texts


class KafkaClusters:
    """Brokers known to belong to one cluster, joined across overlapping lists (case-insensitive)."""

    def __init__(self, lists: Sequence[Sequence[str]]):
        self._parent: dict[str, str] = {}
        self.members: dict[str, list[str]] = {}
        for entries in lists:
            for entry in entries[1:]:
                self._union(entries[0].lower(), entry.lower())
        for entries in lists:
            for entry in entries:
                group = self.members.setdefault(self._find(entry.lower()), [])
                if entry not in group:
                    group.append(entry)

    def _find(self, item: str) -> str:
        self._parent.setdefault(item, item)
        while self._parent[item] != item:
            self._parent[item] = self._parent[self._parent[item]]
            item = self._parent[item]
        return item

    def _union(self, a: str, b: str) -> None:
        ra, rb = self._find(a), self._find(b)
        if ra != rb:
            self._parent[max(ra, rb)] = min(ra, rb)

    def cluster_of(self, namespace: str) -> str | None:
        if not namespace.startswith("kafka://"):
            return None
        server = namespace[len("kafka://") :].lower()
        if server not in self._parent:
            return None
        return self._find(server)

    def resolve(self, namespace: str) -> str:
        cluster = self.cluster_of(namespace)
        return namespace if cluster is None else f"kafka://{{cluster {cluster}}}"


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
) -> list[Split]:
    steps = Steps(clusters or KafkaClusters([]), tuple(resolvers))
    keys = {k: steps.key(*k) for k in seen}
    find, union = _union_find(seen)
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
    groups: dict[tuple[str, str], list[DatasetSeen]] = {}
    for dataset in seen.values():
        groups.setdefault(find(dataset.key), []).append(dataset)
    splits = []
    for members in groups.values():
        if len(members) < 2:
            continue
        members.sort(key=lambda d: (d.namespace, d.name))
        labels = _joining_steps(members, steps)
        if any(m.key in linked for m in members):
            labels.append("symlink")
        reason, fix = explain(members, labels, steps.clusters, steps.resolvers)
        splits.append(Split(members, reason, fix))
    splits.sort(key=lambda s: (s.datasets[0].namespace, s.datasets[0].name))
    return splits


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
