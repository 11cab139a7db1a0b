"""The lineage graph of a set of OpenLineage events: jobs, datasets, their edges and facets.

A job is `(job namespace, job name)`, a dataset `(namespace, name)`, exactly as the events say
(a backend merges by these strings too, which is why a split shows as two nodes here). Edges:
input dataset -> job -> output dataset. A job whose runs carry a `parent` run facet is grouped
under that parent (planlineage's STATEMENT SET children, Spark's application-level parent); a
parent that has no datasets of its own is drawn as the group, not as a node.

Facets are merged over all events of a node, later events winning per facet; each job keeps its
run states (runId, event type, time, a FAIL's error message), event types upper-cased (Gravitino's
log sink writes them lower-cased).

One event, once: the same run state read from several sources (the state store and a log, whose
eventTimes differ by a fraction of a second) is one run state, keyed by (runId, event type) within
its job; only a state without a runId is told apart by its time. A dataset's `columnLineage` facets
are merged per column over producers (the union of their input fields), not replaced.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

JobKey = tuple[str, str]
DatasetKey = tuple[str, str]


@dataclass
class JobNode:
    namespace: str
    name: str
    producers: set[str] = field(default_factory=set)
    facets: dict[str, Any] = field(default_factory=dict)
    runs: list[dict[str, str]] = field(default_factory=list)
    runs_dropped: int = 0  # older run states not kept (MAX_RUNS)
    run_keys: dict[tuple[str, str, str], dict[str, str]] = field(default_factory=dict, repr=False)
    parent: JobKey | None = None
    inputs: set[DatasetKey] = field(default_factory=set)
    outputs: set[DatasetKey] = field(default_factory=set)

    @property
    def key(self) -> JobKey:
        return (self.namespace, self.name)


@dataclass
class DatasetNode:
    namespace: str
    name: str
    producers: set[str] = field(default_factory=set)
    facets: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> DatasetKey:
        return (self.namespace, self.name)


@dataclass
class LineageGraph:
    jobs: dict[JobKey, JobNode] = field(default_factory=dict)
    datasets: dict[DatasetKey, DatasetNode] = field(default_factory=dict)
    #: groups of datasets that name one physical table (from the doctor), each with its reason
    splits: list[tuple[list[DatasetKey], str]] = field(default_factory=list)
    #: what is derived from the whole graph once (focus.py: ids, the search index), emptied by `finish`
    cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def children(self) -> dict[JobKey, list[JobKey]]:
        groups: dict[JobKey, list[JobKey]] = {}
        for job in self.jobs.values():
            if job.parent is not None and job.parent != job.key:
                groups.setdefault(job.parent, []).append(job.key)
        return groups

    def group_only(self) -> set[JobKey]:
        """Parents drawn only as the box around their children (no datasets of their own)."""
        return {p for p in self.children() if p in self.jobs and not self.jobs[p].inputs and not self.jobs[p].outputs}

    def split_of(self) -> dict[DatasetKey, int]:
        return {key: i for i, (keys, _) in enumerate(self.splits) for key in keys}


def _merge_facets(target: dict[str, Any], facets: Any) -> None:
    if isinstance(facets, dict):
        for name, value in facets.items():
            if name == "columnLineage" and isinstance(target.get(name), dict) and isinstance(value, dict):
                target[name] = _merge_column_lineage(target[name], value)
            elif value is not None:
                target[name] = value


def _merge_column_lineage(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Two producers' columnLineage facets of one dataset: per column, the union of input fields."""
    fields = dict(old.get("fields") or {}) if isinstance(old.get("fields"), dict) else {}
    for column, spec in (new.get("fields") or {}).items() if isinstance(new.get("fields"), dict) else ():
        if not isinstance(spec, dict):
            continue
        known = fields.get(column)
        before: dict[str, Any] = known if isinstance(known, dict) else {}
        inputs = list(before.get("inputFields") or [])
        seen = {(i.get("namespace"), i.get("name"), i.get("field")) for i in inputs if isinstance(i, dict)}
        for item in spec.get("inputFields") or []:
            if isinstance(item, dict) and (item.get("namespace"), item.get("name"), item.get("field")) not in seen:
                seen.add((item.get("namespace"), item.get("name"), item.get("field")))
                inputs.append(item)
        fields[column] = {**before, **spec, "inputFields": inputs}
    return {**old, **new, "fields": fields}


def _dataset(graph: LineageGraph, raw: Any, producer: str) -> DatasetKey | None:
    if not isinstance(raw, dict):
        return None
    namespace, name = raw.get("namespace"), raw.get("name")
    if not isinstance(namespace, str) or not isinstance(name, str) or not namespace or not name:
        return None
    node = graph.datasets.setdefault((namespace, name), DatasetNode(namespace, name))
    node.producers.add(producer)
    _merge_facets(node.facets, raw.get("facets"))
    _merge_facets(node.facets, raw.get("inputFacets"))
    _merge_facets(node.facets, raw.get("outputFacets"))
    return node.key


#: Run states kept per job (the latest ones): a log of a long-running estate repeats them.
MAX_RUNS = 50


def add_event(graph: LineageGraph, event: dict) -> None:
    """One event merged into the graph (call `finish` after the last one)."""
    producer = str(event.get("producer") or "")
    if isinstance(event.get("dataset"), dict) and not isinstance(event.get("job"), dict):
        _dataset(graph, event["dataset"], producer)
        return
    job_raw = event.get("job") or {}
    namespace, name = str(job_raw.get("namespace") or ""), str(job_raw.get("name") or "")
    if not name:
        return
    job = graph.jobs.setdefault((namespace, name), JobNode(namespace, name))
    job.producers.add(producer)
    _merge_facets(job.facets, job_raw.get("facets"))
    run = event.get("run") or {}
    run_facets = run.get("facets") or {}
    parent = (run_facets.get("parent") or {}).get("job") or {}
    if parent.get("name"):
        job.parent = (str(parent.get("namespace") or namespace), str(parent["name"]))
    if event.get("eventType") or run.get("runId"):
        state = {
            "runId": str(run.get("runId") or ""),
            "eventType": str(event.get("eventType") or "").upper(),
            "eventTime": str(event.get("eventTime") or ""),
        }
        error = run_facets.get("errorMessage") if isinstance(run_facets, dict) else None
        if isinstance(error, dict) and error.get("message"):
            state["error"] = str(error["message"])
        if _add_run(job, state) and len(job.runs) >= 2 * MAX_RUNS:
            _keep_latest_runs(job)
    for raw in event.get("inputs") or []:
        key = _dataset(graph, raw, producer)
        if key:
            job.inputs.add(key)
    for raw in event.get("outputs") or []:
        key = _dataset(graph, raw, producer)
        if key:
            job.outputs.add(key)


def _run_key(state: dict[str, str]) -> tuple[str, str, str]:
    """One run state of a job: its run and event type; the time only tells states without a runId apart."""
    return (state["runId"], state["eventType"], "" if state["runId"] else state["eventTime"])


def _add_run(job: JobNode, state: dict[str, str]) -> bool:
    """Adds a run state not seen yet (a dict of keys beside the list: no scan per event); a state
    seen again from another source only adds what the first lacked (a FAIL's error message)."""
    key = _run_key(state)
    known = job.run_keys.get(key)
    if known is not None:
        if state.get("error") and not known.get("error"):
            known["error"] = state["error"]
        return False
    job.run_keys[key] = state
    job.runs.append(state)
    return True


def copy_job(job: JobNode) -> JobNode:
    """A copy that events can be added to without changing `job` (its sets, facets and runs)."""
    runs = [dict(r) for r in job.runs]
    return replace(
        job, producers=set(job.producers), facets=dict(job.facets), runs=runs,
        run_keys={_run_key(r): r for r in runs}, inputs=set(job.inputs), outputs=set(job.outputs),
    )  # fmt: skip


def copy_dataset(dataset: DatasetNode) -> DatasetNode:
    return replace(dataset, producers=set(dataset.producers), facets=dict(dataset.facets))


def last_state(job: JobNode) -> dict[str, str] | None:
    """The job's latest run state (after `finish`: runs are in time order)."""
    return job.runs[-1] if job.runs else None


def _keep_latest_runs(job: JobNode) -> None:
    job.runs.sort(key=lambda r: (r["eventTime"], r["runId"]))
    job.runs_dropped += max(0, len(job.runs) - MAX_RUNS)
    job.runs = job.runs[-MAX_RUNS:]
    job.run_keys = {_run_key(r): r for r in job.runs}


def finish(graph: LineageGraph) -> LineageGraph:
    """After the last event: run states in time order, the latest MAX_RUNS per job; parents seen
    only through their children's facets added as jobs."""
    graph.cache.clear()
    for job in graph.jobs.values():
        _keep_latest_runs(job)
    # a parent seen only through its children's facets still names their group
    for parent in list(graph.children()):
        if parent not in graph.jobs:
            graph.jobs[parent] = JobNode(*parent)
    return graph


def add_events(graph: LineageGraph, events: Iterable[dict]) -> LineageGraph:
    for event in events:
        add_event(graph, event)
    return finish(graph)


def add_splits(graph: LineageGraph, splits: Iterable[Any]) -> LineageGraph:
    """The doctor's Split objects, highlighted."""
    for split in splits:
        keys = [(d.namespace, d.name) for d in split.datasets if (d.namespace, d.name) in graph.datasets]
        if len(keys) > 1:
            graph.splits.append((keys, split.reason))
    return graph


def from_events(events: Iterable[dict], splits: Iterable[Any] = ()) -> LineageGraph:
    """The graph of these events; `splits` are the doctor's Split objects, highlighted."""
    return add_splits(add_events(LineageGraph(), events), splits)


def restrict_to_job(graph: LineageGraph, job_name: str) -> LineageGraph:
    """The lineage of one job: it (or its STATEMENT SET children), everything upstream and downstream."""
    starts = {k for k in graph.jobs if k[1] == job_name or k[1].startswith(job_name + ".")}
    starts |= {c for p, cs in graph.children().items() if p in starts for c in cs}
    if not starts:
        raise KeyError(job_name)
    readers: dict[DatasetKey, set[JobKey]] = {}
    writers: dict[DatasetKey, set[JobKey]] = {}
    for job in graph.jobs.values():
        for d in job.inputs:
            readers.setdefault(d, set()).add(job.key)
        for d in job.outputs:
            writers.setdefault(d, set()).add(job.key)
    keep: set[JobKey] = set(starts)
    for direction in ("down", "up"):
        frontier = list(starts)
        seen = set(starts)
        while frontier:
            job = graph.jobs[frontier.pop()]
            datasets = job.outputs if direction == "down" else job.inputs
            for d in datasets:
                for nxt in (readers if direction == "down" else writers).get(d, ()):
                    if nxt not in seen:
                        seen.add(nxt)
                        frontier.append(nxt)
        keep |= seen
    return _subgraph(graph, keep)


def restrict_to_namespace(graph: LineageGraph, namespace: str) -> LineageGraph:
    """The jobs of one job namespace, or that read or write a dataset of that namespace, with their
    datasets (and the datasets of that namespace no job touches). KeyError: nothing in it."""
    keep = {
        k
        for k, job in graph.jobs.items()
        if k[0] == namespace or any(d[0] == namespace for d in (*job.inputs, *job.outputs))
    }
    datasets = {k for k in graph.datasets if k[0] == namespace}
    if not keep and not datasets:
        raise KeyError(namespace)
    return _subgraph(graph, keep, datasets)


def _subgraph(graph: LineageGraph, keep: set[JobKey], datasets: Iterable[DatasetKey] = ()) -> LineageGraph:
    """These jobs (with their STATEMENT SET parents) and their datasets, plus `datasets`."""
    parents = {p for k in keep if (p := graph.jobs[k].parent) is not None and p in graph.jobs}
    sub = LineageGraph()
    for key in keep | parents:
        sub.jobs[key] = graph.jobs[key]
    used = {d for k in keep for d in (*graph.jobs[k].inputs, *graph.jobs[k].outputs)} | set(datasets)
    sub.datasets = {k: v for k, v in graph.datasets.items() if k in used}
    sub.splits = [(keys, reason) for keys, reason in graph.splits if len([k for k in keys if k in used]) > 1]
    return sub
