"""diagnose(): event files and/or the recorded runs -> the splits among their datasets."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .sources import UnreadableInput, read_event_file, read_state
from .splits import DatasetSeen, KafkaClusters, Split, bootstrap_lists, find_splits, inventory, sql_of


@dataclass
class Report:
    splits: list[Split] = field(default_factory=list)
    datasets: dict[tuple[str, str], DatasetSeen] = field(default_factory=dict)
    events: list[dict] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # one line per input: what was read

    def to_json(self) -> dict:
        return {"splits": [s.to_json() for s in self.splits]}


def load_events(event_files: Sequence[str], state: bool) -> tuple[list[dict], list[str], list[str], str | None]:
    """(events, extra SQL texts, one line per source, the state's rules file)."""
    events: list[dict] = []
    sql: list[str] = []
    sources: list[str] = []
    rules = None
    for path in event_files:
        found = read_event_file(path)
        events.extend(found.events)
        sources.append(f"{path}: {len(found.events)} event(s), {found.skipped_lines} other line(s) skipped")
    if state:
        runs = read_state()
        events.extend(runs.events)
        sql.extend(runs.sql)
        rules = runs.rules
        sources.append(f"{runs.path}: {runs.runs} recorded run(s), {len(runs.events)} event(s)")
    return events, sql, sources, rules


def diagnose(event_files: Sequence[str] = (), state: bool = False, rules: str | None = None) -> Report:
    """Raises UnreadableInput when an input cannot be read (or a rules file cannot be loaded)."""
    events, sql, sources, state_rules = load_events(event_files, state)
    resolvers: Sequence = ()
    rules = rules or state_rules
    if rules:
        from planlineage.registry import ConfigError, load_config

        try:
            resolvers = load_config(rules).resolvers
        except ConfigError as error:
            raise UnreadableInput(str(error)) from None
    clusters = KafkaClusters(bootstrap_lists([*sql_of(events), *sql]))
    seen = inventory(events)
    return Report(find_splits(seen, clusters, resolvers), seen, events, sources)
