"""What a producer reported against what planlineage reports, dataset by dataset and facet by facet.

Both sides become a :class:`Lineage`: each output dataset ``(namespace, name)`` with the set of
input datasets written into it (the union over all events of a run: a producer that reports one
write in a parent and a child event is one write), and every dataset's symlinks as
``(namespace, name, type)``. The comparison says, byte for byte, which outputs, inputs and
symlinks differ; nothing is normalised on either side.

Both sides' events also become :class:`JobFacts`: what backends key on at job and run level, over
the events that write (those with outputs): the ``jobType`` facet's fields, the
``processing_engine`` name and version, whether a ``parent`` run facet is there, the runId's UUID
version, and per output the kind of write a backend derives (the ``lifecycleStateChange`` output
facet, else the first verb of the job's ``sql`` facet, as Data.Rentgen's consumer reads them).
"""

from __future__ import annotations

import json
import re
import uuid
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


#: The kind of a write by the first verb of a SQL facet (Data.Rentgen's generic extractor: the
#: first of these words followed by a space, anywhere in the text; ALTER only when none is there).
_WRITE_VERBS = re.compile(r"\b(MERGE|INSERT|UPDATE|DELETE|CREATE|RENAME|TRUNCATE|DROP(?!\sCOLUMN)|COPY)\s", re.I)
_VERB_KINDS = {"INSERT": "APPEND", "COPY": "APPEND"}


def write_kind(sql: str | None, lifecycle: str | None) -> str | None:
    """The kind of a write a backend reads from an output's lifecycleStateChange, else its job's SQL."""
    if lifecycle:
        return lifecycle
    if not sql:
        return None
    found = _WRITE_VERBS.search(sql)
    if found:
        verb = found.group(1).upper()
        return _VERB_KINDS.get(verb, verb)
    return "ALTER" if re.search(r"\bALTER\s", sql, re.I) else None


@dataclass
class JobFacts:
    job_types: set[tuple[str, str, str]] = field(default_factory=set)  # (integration, jobType, processingType)
    engines: set[tuple[str, str]] = field(default_factory=set)  # processing_engine (name, version)
    parents: set[str] = field(default_factory=set)  # "present" / "absent" per writing event
    run_ids: set[str] = field(default_factory=set)  # "v7", "v4", ... per writing event
    output_kinds: dict[Key, set[str]] = field(default_factory=dict)  # per output: every kind derived

    def see(self, event: dict, skip_jobs: tuple[str, ...] = ()) -> None:
        if not event.get("outputs") or any(part in event.get("job", {}).get("name", "") for part in skip_jobs):
            return
        job_facets = (event.get("job") or {}).get("facets") or {}
        run_facets = (event.get("run") or {}).get("facets") or {}
        job_type = job_facets.get("jobType") or {}
        self.job_types.add(
            (
                job_type.get("integration", "none"),
                job_type.get("jobType", "none"),
                job_type.get("processingType", "none"),
            )
        )
        engine = run_facets.get("processing_engine") or {}
        self.engines.add((engine.get("name", "none"), engine.get("version", "none")))
        self.parents.add("present" if run_facets.get("parent") else "absent")
        try:
            self.run_ids.add(f"v{uuid.UUID(event['run']['runId']).version}")
        except (KeyError, ValueError):
            self.run_ids.add("not a UUID")
        sql = (job_facets.get("sql") or {}).get("query")
        for dataset in event["outputs"]:
            lifecycle = ((dataset.get("facets") or {}).get("lifecycleStateChange") or {}).get("lifecycleStateChange")
            kinds = self.output_kinds.setdefault((dataset["namespace"], dataset["name"]), set())
            kind = write_kind(sql, lifecycle)
            if kind:
                kinds.add(kind)


def job_facts(events: list[dict], skip_jobs: tuple[str, ...] = ()) -> JobFacts:
    facts = JobFacts()
    for event in events:
        facts.see(event, skip_jobs)
    return facts


def read_events(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def compare_facts(producer: JobFacts, ours: JobFacts, default_kind: str | None = None) -> list[Difference]:
    """Job- and run-level differences: each field whose values differ, then each output both
    report that planlineage types with a kind no event of the producer gives it (``default_kind``:
    what the backend assumes when an event says none, as Data.Rentgen's Flink extractor assumes
    APPEND)."""
    job = ("job", "")
    differences = []
    for kind, theirs, mine in (
        ("job-type", producer.job_types, ours.job_types),
        ("engine", producer.engines, ours.engines),
        ("parent", producer.parents, ours.parents),
        ("run-id", producer.run_ids, ours.run_ids),
    ):
        if theirs and mine and theirs != mine:
            differences.append(
                Difference(
                    kind,
                    job,
                    {(v,) if isinstance(v, str) else v for v in theirs},
                    {(v,) if isinstance(v, str) else v for v in mine},
                )
            )
    for key in sorted(set(producer.output_kinds) & set(ours.output_kinds)):
        theirs = producer.output_kinds[key] or ({default_kind} if default_kind else set())
        mine = ours.output_kinds[key] or ({default_kind} if default_kind else set())
        # A producer may type one write differently across its events (openlineage-spark's CTAS:
        # CREATE on the command, OVERWRITE on the data write): a kind planlineage says is a
        # difference only if no event of the producer says it.
        if not mine <= theirs:
            differences.append(Difference("output-kind", key, {(k,) for k in theirs}, {(k,) for k in mine}))
    return differences


def set_aside_in_memory_symlinks(lineage: Lineage, in_memory_tables: set[str]) -> tuple[Lineage, int]:
    """The producer's lineage without the TABLE symlinks named after a table of Flink's in-memory
    catalog (openlineage-flink's Kafka visitor attaches them; planlineage does not: decided once,
    `symlinks = "in-memory catalog"`), and how many there were."""
    removed = 0
    kept: dict[Key, set[Link]] = {}
    for key, links in lineage.symlinks.items():
        drop = {link for link in links if link[2] == "TABLE" and link[1] in in_memory_tables}
        removed += len(drop)
        kept[key] = links - drop
    return Lineage(lineage.outputs, kept, lineage.definitions_only), removed


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
    """The decision of a difference: one for this case and dataset, else one for a job- or
    run-level facet in every case (`facet = kind`, `producer` / `planlineage` the values shown)."""
    dataset = placeholders.apply(case, " ".join(difference.dataset))
    for decided in decisions:
        if decided.get("case") == case and decided.get("kind") == difference.kind and decided.get("dataset") == dataset:
            return decided
    for decided in decisions:
        if facet_decides(decided, difference):
            return decided
    return None


def plain(value: object) -> str:
    """A difference's side as a facet decision names it: `FLINK JOB BATCH`, `absent`, `v7, v4`."""
    if isinstance(value, set):
        return ", ".join(" ".join(item) for item in sorted(value)) or "none"
    return str(value)


def facet_decides(decided: dict, difference: Difference) -> bool:
    return (
        decided.get("facet") == difference.kind
        and decided.get("producer", plain(difference.producer)) == plain(difference.producer)
        and decided.get("planlineage", plain(difference.planlineage)) == plain(difference.planlineage)
    )


def stale_facet_decisions(decisions: list[dict], differences: list[Difference]) -> list[dict]:
    """Facet decisions no difference of this run needs any more."""
    return [d for d in decisions if "facet" in d and not any(facet_decides(d, diff) for diff in differences)]
