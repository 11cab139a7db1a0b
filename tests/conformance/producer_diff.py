"""What a producer reported against what planlineage reports, dataset by dataset.

Both sides become a :class:`Lineage`: each output dataset ``(namespace, name)`` with the set of
input datasets written into it (the union over all events of a run: a producer that reports one
write in a parent and a child event is one write), and every dataset's symlinks as
``(namespace, name, type)``. The comparison says, byte for byte, which outputs, inputs and
symlinks differ; nothing is normalised on either side.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

Key = tuple[str, str]
Link = tuple[str, str, str]

#: Job-name parts of openlineage-spark events for statements that define a table without
#: writing data into it: planlineage pairs writes, not definitions.
SPARK_DEFINITIONS = ("create_data_source_table_command", "create_table_command", "create_database_command")


@dataclass
class Lineage:
    outputs: dict[Key, set[Key]] = field(default_factory=dict)
    symlinks: dict[Key, set[Link]] = field(default_factory=dict)
    definitions_only: set[Key] = field(default_factory=set)  # outputs seen only in table definitions

    def see(self, dataset: dict) -> Key:
        key = (dataset["namespace"], dataset["name"])
        links = self.symlinks.setdefault(key, set())
        links.update(_links(dataset))
        return key


def _links(dataset: dict) -> set[Link]:
    facet = (dataset.get("facets") or {}).get("symlinks") or {}
    found = facet.get("identifiers") if isinstance(facet, dict) else None
    if found is None:  # planlineage's document: a list of symlinks on the dataset itself
        found = dataset.get("symlinks") or []
    return {(s["namespace"], s["name"], s.get("type", "TABLE")) for s in found}


def from_events(path: Path) -> Lineage:
    """A producer's file transport output (one event per line)."""
    lineage = Lineage()
    written_by_data: set[Key] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        event = json.loads(line)
        inputs = {lineage.see(d) for d in event.get("inputs") or []}
        definition = any(part in event.get("job", {}).get("name", "") for part in SPARK_DEFINITIONS)
        for dataset in event.get("outputs") or []:
            key = lineage.see(dataset)
            lineage.outputs.setdefault(key, set()).update(inputs)
            if not definition:
                written_by_data.add(key)
    lineage.definitions_only = set(lineage.outputs) - written_by_data
    return lineage


def from_document(document: dict) -> Lineage:
    """planlineage's extract document (``model_dump`` of a JobLineage)."""
    lineage = Lineage()
    for sink in document["sinks"]:
        inputs = {lineage.see(d) for table in sink["inputs"] for d in table["datasets"]}
        for dataset in sink["datasets"]:
            lineage.outputs.setdefault(lineage.see(dataset), set()).update(inputs)
    return lineage


@dataclass
class Difference:
    kind: str  # output-missing, output-extra, inputs, symlinks
    dataset: Key
    producer: object
    planlineage: object

    def describe(self) -> str:
        where = f"{self.dataset[0]} {self.dataset[1]}"
        return f"{self.kind} of {where}: producer {_show(self.producer)}, planlineage {_show(self.planlineage)}"


def _show(value: object) -> str:
    if isinstance(value, set):
        return "{" + ", ".join(" ".join(item) for item in sorted(value)) + "}" if value else "none"
    return str(value)


def compare(producer: Lineage, ours: Lineage) -> list[Difference]:
    differences = []
    producer_outputs = set(producer.outputs) - producer.definitions_only
    for key in sorted(producer_outputs - set(ours.outputs)):
        differences.append(Difference("output-missing", key, producer.outputs[key], "no sink"))
    for key in sorted(set(ours.outputs) - set(producer.outputs)):
        differences.append(Difference("output-extra", key, "no output", ours.outputs[key]))
    for key in sorted(producer_outputs & set(ours.outputs)):
        if producer.outputs[key] != ours.outputs[key]:
            differences.append(Difference("inputs", key, producer.outputs[key], ours.outputs[key]))
    for key in sorted(set(producer.symlinks) & set(ours.symlinks)):
        if producer.symlinks[key] != ours.symlinks[key]:
            differences.append(Difference("symlinks", key, producer.symlinks[key], ours.symlinks[key]))
    return differences


# -- deciding differences (decisions.toml), shared by the Spark and Flink suites ------------------

DECISIONS_FILE = Path(__file__).with_name("decisions.toml")
UNDECIDED = {"verdict": "**not decided**"}


def load_decisions(engine: str) -> list[dict]:
    import tomllib

    return tomllib.loads(DECISIONS_FILE.read_text(encoding="utf-8")).get(engine, [])


def needs(text: str) -> set[str]:
    """What a case's `-- needs: a, b` lines ask the suite to start (postgres, kafka)."""
    return {word.strip() for line in text.splitlines() if line.startswith("-- needs:") for word in line[9:].split(",")}


class Placeholders:
    """Per case, what differs between runs (its temp folder, a server's port) -> a placeholder, so
    that decisions and the documented table read the same every run."""

    def __init__(self) -> None:
        self.by_case: dict[str, dict[str, str]] = {}

    def apply(self, case: str, text: str) -> str:
        # the longest first: one port may begin another
        for value, placeholder in sorted(self.by_case.get(case, {}).items(), key=lambda item: -len(item[0])):
            text = text.replace(value, placeholder)
        return text


def decision(decisions: list[dict], case: str, difference: Difference, placeholders: Placeholders) -> dict | None:
    dataset = placeholders.apply(case, " ".join(difference.dataset))
    for decided in decisions:
        if decided.get("case") == case and decided["kind"] == difference.kind and decided["dataset"] == dataset:
            return decided
    return None
