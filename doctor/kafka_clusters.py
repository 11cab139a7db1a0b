"""Kafka brokers that are one cluster, on evidence only: the bootstrap lists written in jobs' SQL.

`kafka://a:9092` and `kafka://b:9092` are the same topic's cluster only when some job's
`properties.bootstrap.servers` lists both; never from host names alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

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
