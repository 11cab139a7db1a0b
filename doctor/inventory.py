"""What the doctor keeps of the events it reads: each dataset seen once, with who named it so.

The events themselves are not kept (a log of any size is read in one pass): only the datasets,
their producers, jobs and symlinks.
"""

from __future__ import annotations

from dataclasses import dataclass, field


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


def add_to_inventory(
    seen: dict[tuple[str, str], DatasetSeen], event: dict, fallback: dict[str, DatasetSeen] | None = None
) -> None:
    """The datasets of one event added to `seen` (the event itself is not kept). A dataset with an
    empty namespace names no storage and is left out; one named like a Flink table
    (`catalog.database.table`, Flink's fallback lineage dataset, which openlineage-flink's listener
    reports for a connector it has no identifier for) goes to `fallback`, by name."""
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
        if not isinstance(namespace, str) or not isinstance(name, str) or not name:
            continue
        if not namespace:
            if fallback is None or len(name.split(".")) != 3 or not all(name.split(".")):
                continue
            entry = fallback.setdefault(name, DatasetSeen(namespace, name))
        else:
            entry = seen.setdefault((namespace, name), DatasetSeen(namespace, name))
        entry.producers.add(producer)
        if job_name:
            entry.jobs.add(job_name)
        symlinks = ((dataset.get("facets") or {}).get("symlinks") or {}).get("identifiers") or []
        for link in symlinks:
            if isinstance(link, dict) and link.get("namespace") and link.get("name"):
                entry.symlinks.add((str(link["namespace"]), str(link["name"]), str(link.get("type") or "")))
