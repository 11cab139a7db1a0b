"""OpenLineage RunEvents built from a lineage document, with openlineage-python's own models.

Job pairing
-----------
A submission with one sink is one OpenLineage job named ``<job name>``: its run id is the
submission's run id, its inputs are the tables the sink reads and its outputs the sink's datasets.

A submission with N sinks (a STATEMENT SET) is N child jobs named ``<job name>.<sink table>``,
each carrying only its own inputs and outputs, plus the parent job ``<job name>``. A Spark job is
laid out so even with one target (a parent ``APPLICATION`` and one ``SQL_JOB`` child), because
openlineage-spark's SQL jobs always have their application's run as parent and backends rely on
it (Data.Rentgen's Spark extractor fails on a ``SQL_JOB`` without one).  Reporting the
whole submission as one job would make a backend connect every input to every output (N x M
edges) although each INSERT only reads its own sources.

The parent job also gets events, with the same event types as its children but **no inputs and
no outputs**:

* the children's ``parent`` run facet then points at a run the backend has actually seen, so
  Marquez-like backends can group the children under the submission (as openlineage-spark does
  with its application-level events) instead of inventing a placeholder parent;
* a parent without datasets can never add an edge, so the graph stays exactly the per-sink one;
* its events are consistent across the whole run (always empty), so no terminal event of the
  parent ever wipes edges that it once drew.

Every event of a run, terminal ones included, repeats the run's inputs, outputs and ``jobType``
facet (Marquez rebuilds batch edges from terminal events and wipes them on an empty one).

Job and run facets, as the producer of the same kind of job writes them (openlineage-flink's 2.x
listener, openlineage-spark's SQL execution events; docs/conformance.md compares them):

* ``jobType``: Flink ``{integration: FLINK, jobType: JOB, processingType: STREAMING|BATCH}``
  (backends such as Data.Rentgen take a Flink event as lineage only with ``jobType: JOB``);
  Spark ``SQL_JOB`` for a job that writes, ``APPLICATION`` for the parent of several (as
  openlineage-spark's application-level events, which carry no datasets either).
* ``processing_engine``: ``name`` ``flink`` / ``spark``, the engine's ``version``, and
  ``openlineageAdapterVersion`` planlineage's own version (the producers write their own).
* ``flink_job`` (``{jobId}``, openlineage-flink's FlinkJobDetailsFacet) when the Flink JobID is
  known to the caller.
* ``sql``: a job's own write statement(s) (``SinkLineage.statement``: the sink's INSERT, the
  statement set's INSERT into its table, the CTAS), because backends read the kind of a write
  from its first verb; the whole script (``sql``) when the statement is not known and for the
  parent of a STATEMENT SET (it writes nothing, so its first verb types nothing, and the whole
  submission stays readable on the job that stands for it).

When a sink carries column lineage (``SinkLineage.columns``), each of its output datasets gets
the ``columnLineage`` facet: per sink column, one input field per dataset its source table
resolved to, with the transformations; dataset-wide influences (join keys, filters, ...) are on
every field and the facet's ``dataset`` list stays empty (the spec's per-field form, the one
consumers that only read ``fields`` understand).

A sink with a lifecycle state change (a CTAS: CREATE; an RTAS, INSERT OVERWRITE or INSERT
INTO … REPLACE WHERE: OVERWRITE) puts it on its output datasets as the ``lifecycleStateChange``
facet, as openlineage-spark's write visitors do.

Child run ids are UUIDv7s derived from the parent run id and the sink table
(:func:`planlineage.emitter.run_ids.child_run_id`): retries and later state events of the same
submission reuse them without any stored mapping. A run whose START an older planlineage built
keeps that release's ``uuid5`` children (``JobLineage.child_run_ids``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import attr
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (
    column_lineage_dataset,
    error_message_run,
    job_type_job,
    lifecycle_state_change_dataset,
    parent_run,
    processing_engine_run,
    schema_dataset,
    sql_job,
    symlinks_dataset,
)
from openlineage.client.generated.base import RunFacet
from openlineage.client.serde import Serde

from planlineage import __version__, engines
from planlineage.clock import format_time, utc_now
from planlineage.document import Column, Dataset, JobLineage, SinkLineage
from planlineage.emitter.run_ids import (  # noqa: F401 - part of this module's API
    EVENT_TYPES,
    TERMINAL_EVENT_TYPES,
    child_run_id,
    legacy_child_run_id,
    new_run_id,
)

#: The ``producer`` of every event and facet planlineage writes.
PRODUCER = "https://github.com/planlineage/planlineage"


# The jobType facet's integration and jobType are the engine's (Engine.integration, Engine.job_type):
# as openlineage-flink and openlineage-spark write them.
#: The run facet openlineage-flink carries the Flink JobID in (FLINK_JOB_FACET_KEY).
FLINK_JOB_FACET = "flink_job"
#: Bounds an error message kept in the ``errorMessage`` facet.
MAX_ERROR_CHARS = 4000


@dataclass(frozen=True)
class PlannedJob:
    """One OpenLineage job of a submission: its name, run id and datasets."""

    name: str
    run_id: str
    inputs: tuple[Dataset, ...] = ()
    outputs: tuple[Dataset, ...] = ()
    input_schemas: dict[tuple[str, str], list[Column]] = field(default_factory=dict, compare=False)
    output_schemas: dict[tuple[str, str], list[Column]] = field(default_factory=dict, compare=False)
    # Per output dataset, per column, the input fields it derives from (sinks with `columns` only).
    output_columns: dict[tuple[str, str], dict[str, list[column_lineage_dataset.InputField]]] = field(
        default_factory=dict, compare=False
    )
    # Per output dataset, its lifecycle state change (sinks with `lifecycle_state_change` only).
    output_lifecycle: dict[tuple[str, str], str] = field(default_factory=dict, compare=False)
    is_parent: bool = False
    is_child: bool = False
    # The job's own write statement(s) for its SQL facet; None: the submission's whole script.
    statement: str | None = None


@attr.define
class FlinkJobRunFacet(RunFacet):
    """openlineage-flink's ``flink_job`` run facet (FlinkJobDetailsFacet): the Flink JobID, which
    backends keep as the run's external id (Data.Rentgen links the Flink UI with it)."""

    jobId: str

    @staticmethod
    def _get_schema() -> str:
        return "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunFacet"


def child_job_name(job_name: str, sink_table: str) -> str:
    return f"{job_name}.{sink_table}"


utc_now_iso = utc_now


def _dedupe(datasets: Iterable[tuple[Dataset, list[Column]]]) -> tuple[tuple[Dataset, ...], dict]:
    seen: dict[tuple[str, str], Dataset] = {}
    schemas: dict[tuple[str, str], list[Column]] = {}
    for dataset, schema in datasets:
        key = (dataset.namespace, dataset.name)
        if not dataset.namespace or not dataset.name or key in seen:
            continue
        seen[key] = dataset
        schemas[key] = list(schema)
    return tuple(seen.values()), schemas


def _group_sinks(lineage: JobLineage) -> dict[str, list[SinkLineage]]:
    groups: dict[str, list[SinkLineage]] = {}
    for sink in lineage.sinks:
        groups.setdefault(sink.table, []).append(sink)
    return groups


def plan_jobs(lineage: JobLineage, job_name: str, run_id: str) -> list[PlannedJob]:
    """The OpenLineage jobs of one submission, parent first (see the module docstring)."""
    groups = _group_sinks(lineage)
    legacy = lineage.child_run_ids == "uuid5"
    child_id = legacy_child_run_id if legacy else child_run_id

    def job_for(name: str, rid: str, sinks: list[SinkLineage], child: bool) -> PlannedJob:
        inputs, in_schemas = _dedupe(
            (ds, table.schema_) for sink in sinks for table in sink.inputs for ds in table.datasets
        )
        outputs, out_schemas = _dedupe((ds, sink.schema_) for sink in sinks for ds in sink.datasets)
        return PlannedJob(
            name,
            rid,
            inputs,
            outputs,
            in_schemas,
            out_schemas,
            output_columns=_column_lineage_fields(sinks),
            output_lifecycle={
                (ds.namespace, ds.name): sink.lifecycle_state_change
                for sink in sinks
                if sink.lifecycle_state_change
                for ds in sink.datasets
            },
            is_child=child,
            # Only when every sink of the job says its statement: part of the writes would type them wrong.
            statement=";\n".join(dict.fromkeys(s.statement or "" for s in sinks))
            if sinks and all(s.statement for s in sinks)
            else None,
        )

    # An engine whose every job hangs off its application's run (Spark: openlineage-spark's SQL_JOB;
    # Data.Rentgen's consumer fails on one without a parent): one target is a parent and one child too.
    parent_of_one = engines.of_document(lineage).single_target_has_parent and not legacy and len(groups) == 1
    if len(groups) <= 1 and not parent_of_one:
        sinks = next(iter(groups.values()), [])
        return [job_for(job_name, run_id, sinks, False)]
    jobs = [PlannedJob(job_name, run_id, is_parent=True)]
    for table, sinks in groups.items():
        jobs.append(job_for(child_job_name(job_name, table), child_id(run_id, table), sinks, True))
    return jobs


def _column_lineage_fields(sinks: list[SinkLineage]) -> dict[tuple[str, str], dict[str, list]]:
    """The columnLineage fields of every output dataset of these sinks.

    A sink column's source column names a Flink table; it becomes one input field per dataset that
    table resolved to (the sink's `inputs`). A table without datasets (unknown connector) cannot
    be named, so its columns are left out, as the table itself is left out of the inputs.
    """
    per_output: dict[tuple[str, str], dict[str, dict[tuple[str, str, str], list]]] = {}
    for sink in sinks:
        if not sink.columns:
            continue
        datasets_of = {table.table: table.datasets for table in sink.inputs}
        for output in sink.datasets:
            fields = per_output.setdefault((output.namespace, output.name), {})
            for column, sources in sink.columns.items():
                inputs = fields.setdefault(column, {})
                for source in sources:
                    for dataset in datasets_of.get(source.table, []):
                        if dataset.namespace and dataset.name:
                            merged = inputs.setdefault((dataset.namespace, dataset.name, source.column), [])
                            merged.extend(t for t in source.transformations if t not in merged)
    return {
        key: {
            column: [_input_field(ns, name, col, ts) for (ns, name, col), ts in inputs.items()]
            for column, inputs in fields.items()
            if inputs
        }
        for key, fields in per_output.items()
    }


def _input_field(namespace: str, name: str, column: str, transformations: list) -> column_lineage_dataset.InputField:
    return column_lineage_dataset.InputField(
        namespace=namespace,
        name=name,
        field=column,
        transformations=[
            column_lineage_dataset.Transformation(
                type=t.type, subtype=t.subtype, description=t.description, masking=t.masking
            )
            for t in transformations
        ],
    )


def _dataset_facets(
    dataset: Dataset, schema: list[Column], columns: dict[str, list] | None = None, lifecycle: str | None = None
) -> dict[str, Any]:
    facets: dict[str, Any] = {}
    if schema:
        facets["schema"] = schema_dataset.SchemaDatasetFacet(
            fields=[schema_dataset.SchemaDatasetFacetFields(name=c.name, type=c.type) for c in schema],
            producer=PRODUCER,
        )
    if dataset.symlinks:
        facets["symlinks"] = symlinks_dataset.SymlinksDatasetFacet(
            identifiers=[
                symlinks_dataset.Identifier(namespace=s.namespace, name=s.name, type=s.type) for s in dataset.symlinks
            ],
            producer=PRODUCER,
        )
    if columns:
        # The per-field form: dataset-wide influences are repeated on each field and `dataset`
        # stays empty, because consumers such as Marquez read only `fields`.
        facets["columnLineage"] = column_lineage_dataset.ColumnLineageDatasetFacet(
            fields={name: column_lineage_dataset.Fields(inputFields=inputs) for name, inputs in columns.items()},
            dataset=[],
            producer=PRODUCER,
        )
    if lifecycle:
        facets["lifecycleStateChange"] = lifecycle_state_change_dataset.LifecycleStateChangeDatasetFacet(
            lifecycleStateChange=lifecycle_state_change_dataset.LifecycleStateChange(lifecycle), producer=PRODUCER
        )
    return facets


def build_events(
    lineage: JobLineage,
    *,
    job_name: str,
    job_namespace: str,
    run_id: str,
    event_type: str,
    sql: str | None = None,
    error: str | None = None,
    event_time: str | datetime | None = None,
    flink_job_id: str | None = None,
) -> list[RunEvent]:
    """All RunEvents of one state of a submission: parent first, then one per sink job.

    ``sql`` (the whole script) must already be redacted and capped by the caller, as must the
    document's statements; ``error`` (FAIL only) becomes the ``errorMessage`` run facet of every
    job of the run; ``flink_job_id`` (32 hex digits), when known, the ``flink_job`` run facet.
    """
    event_type = event_type.upper()
    if event_type not in EVENT_TYPES:
        raise ValueError(f"unknown event type {event_type!r}")
    uuid.UUID(run_id)  # a clear error before openlineage-python's validator
    if isinstance(event_time, datetime):
        event_time = format_time(event_time)
    event_time = event_time or utc_now_iso()

    processing = "BATCH" if lineage.runtime_mode == "batch" else "STREAMING"
    engine = engines.of_document(lineage)

    def job_facets(planned: PlannedJob) -> dict[str, Any]:
        facets: dict[str, Any] = {
            "jobType": job_type_job.JobTypeJobFacet(
                processingType=processing,
                integration=engine.integration,
                jobType=engine.job_type(planned.is_parent),
                producer=PRODUCER,
            )
        }
        query = planned.statement or sql
        if query:
            facets["sql"] = sql_job.SQLJobFacet(query=query, dialect=engine.name, producer=PRODUCER)
        return facets

    base_run_facets: dict[str, Any] = {
        "processing_engine": processing_engine_run.ProcessingEngineRunFacet(
            version=getattr(lineage, engine.version_field) or "unknown",
            name=engine.name,
            openlineageAdapterVersion=__version__,
            producer=PRODUCER,
        )
    }
    if flink_job_id and engine.job_id_facet:
        base_run_facets[FLINK_JOB_FACET] = FlinkJobRunFacet(jobId=flink_job_id, producer=PRODUCER)
    if event_type == "FAIL" and error:
        base_run_facets["errorMessage"] = error_message_run.ErrorMessageRunFacet(
            message=error[:MAX_ERROR_CHARS], programmingLanguage="JAVA", producer=PRODUCER
        )

    events = []
    for planned in plan_jobs(lineage, job_name, run_id):
        run_facets = dict(base_run_facets)
        if planned.is_child:
            run_facets["parent"] = parent_run.ParentRunFacet(
                run=parent_run.Run(runId=run_id),
                job=parent_run.Job(namespace=job_namespace, name=job_name),
                root=parent_run.Root(
                    run=parent_run.RootRun(runId=run_id),
                    job=parent_run.RootJob(namespace=job_namespace, name=job_name),
                ),
                producer=PRODUCER,
            )
        events.append(
            RunEvent(
                eventType=RunState[event_type],
                eventTime=event_time,
                run=Run(runId=planned.run_id, facets=run_facets),
                job=Job(namespace=job_namespace, name=planned.name, facets=job_facets(planned)),
                inputs=[
                    InputDataset(
                        namespace=d.namespace,
                        name=d.name,
                        facets=_dataset_facets(d, planned.input_schemas.get((d.namespace, d.name), [])),
                    )
                    for d in planned.inputs
                ],
                outputs=[
                    OutputDataset(
                        namespace=d.namespace,
                        name=d.name,
                        facets=_dataset_facets(
                            d,
                            planned.output_schemas.get((d.namespace, d.name), []),
                            planned.output_columns.get((d.namespace, d.name)),
                            planned.output_lifecycle.get((d.namespace, d.name)),
                        ),
                    )
                    for d in planned.outputs
                ],
                producer=PRODUCER,
            )
        )
    return events


def to_dict(event: RunEvent) -> dict[str, Any]:
    """The event as OpenLineage JSON (openlineage-python's serializer, nulls removed)."""
    return Serde.to_dict(event)


def to_json(event: RunEvent) -> str:
    return Serde.to_json(event)


def event_key(payload: dict[str, Any] | str) -> tuple[str, str, str]:
    """``(runId, job name, eventType)`` of a serialized event."""
    event = json.loads(payload) if isinstance(payload, str) else payload
    return (event["run"]["runId"], event["job"]["name"], event["eventType"])
