"""diagnose(): event files and/or the recorded runs -> the splits among their datasets.

The events are read as a stream: each one updates the inventory of datasets (and the Kafka
bootstrap lists found in SQL facets) and is handed to `on_event` (the graph), then dropped. So
the memory used grows with the distinct datasets, jobs and bootstrap lists, not with the size of
the log.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from planlineage.errors import UnreadableInput

from .inventory import DatasetSeen, add_to_inventory
from .kafka_clusters import KafkaClusters, bootstrap_lists, sql_of
from .sources import FileEvents, iter_events, read_state
from .splits import Split, find_splits


@dataclass
class Report:
    splits: list[Split] = field(default_factory=list)
    datasets: dict[tuple[str, str], DatasetSeen] = field(default_factory=dict)
    event_count: int = 0
    sources: list[str] = field(default_factory=list)  # one line per input: what was read

    def to_json(self) -> dict:
        return {"splits": [s.to_json() for s in self.splits]}


@dataclass
class _Inputs:
    sources: list[str] = field(default_factory=list)
    sql: list[str] = field(default_factory=list)  # the recorded runs' scripts (Kafka evidence)
    rules: str | None = None  # the state's rules file


def _events(event_files: Sequence[str], state: bool, inputs: _Inputs, made: Sequence[dict]) -> Iterator[dict]:
    yield from made
    for path in event_files:
        counts = FileEvents(path)
        yield from iter_events(path, counts)
        inputs.sources.append(counts.describe())
    if state:
        runs = read_state()
        yield from runs.events
        inputs.sql.extend(runs.sql)
        inputs.rules = runs.rules
        inputs.sources.append(f"{runs.path}: {runs.runs} recorded run(s), {len(runs.events)} event(s)")


def diagnose(
    event_files: Sequence[str] = (),
    state: bool = False,
    rules: str | None = None,
    on_event: Callable[[dict], None] | None = None,
    events: Sequence[dict] = (),
    sources: Sequence[str] = (),
) -> Report:
    """Raises UnreadableInput when an input cannot be read (or a rules file cannot be loaded).
    `on_event` is called with every event read, in order. `events`: events made already (from
    scripts and extract documents: doctor.inputs), read first; `sources` says what they came from."""
    inputs = _Inputs(sources=list(sources))
    seen: dict[tuple[str, str], DatasetSeen] = {}
    fallback: dict[str, DatasetSeen] = {}  # Flink's fallback lineage datasets (empty namespace), by name
    lists: dict[tuple[str, ...], None] = {}  # distinct bootstrap lists, in the order seen
    count = 0
    for event in _events(event_files, state, inputs, events):
        count += 1
        add_to_inventory(seen, event, fallback)
        for entries in bootstrap_lists(sql_of([event])):
            lists.setdefault(tuple(entries), None)
        if on_event is not None:
            on_event(event)
    for entries in bootstrap_lists(inputs.sql):
        lists.setdefault(tuple(entries), None)
    clusters = KafkaClusters([list(entries) for entries in lists])
    return Report(
        find_splits(seen, clusters, rules_resolvers(rules or inputs.rules), fallback), seen, count, inputs.sources
    )


def rules_resolvers(rules: str | None) -> Sequence:
    """The namespace resolvers of a rules file (none without one); UnreadableInput if it cannot be read."""
    if not rules:
        return ()
    from planlineage.registry import ConfigError, load_config

    try:
        return load_config(rules).resolvers
    except ConfigError as error:
        raise UnreadableInput(str(error)) from None
