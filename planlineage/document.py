"""The lineage document of one job: what `extract` prints and what the emitter reports.

One model shared by every stage after the planner, so that the JSON a user reads and the events a
backend receives can never disagree.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, model_serializer


class Symlink(BaseModel):
    namespace: str
    name: str
    type: str = "TABLE"


class Dataset(BaseModel):
    """One OpenLineage dataset: `(namespace, name)` byte-identical to other producers'."""

    namespace: str
    name: str
    symlinks: list[Symlink] = Field(default_factory=list)


class Column(BaseModel):
    name: str
    type: str


class TableLineage(BaseModel):
    """A Flink table as the job uses it, with the datasets it stands for."""

    table: str  # unquoted catalog.database.table
    connector: str | None = None  # the real connector, never the stand-in
    datasets: list[Dataset] = Field(default_factory=list)
    schema_: list[Column] = Field(default_factory=list, alias="schema")

    model_config = {"populate_by_name": True}


class ColumnTransformation(BaseModel):
    """How a source column reaches a sink column: OpenLineage's `type` (DIRECT/INDIRECT) and subtype."""

    type: str
    subtype: str | None = None  # None only when a plan node was not understood (see planner.columns)
    description: str | None = None
    masking: bool = False

    @model_serializer(mode="wrap")
    def _only_what_is_set(self, handler):
        data = handler(self)
        for key in ("description", "subtype"):
            if data.get(key) is None:
                data.pop(key, None)
        if not data.get("masking"):
            data.pop("masking", None)
        return data


class ColumnInput(BaseModel):
    """One source column of a sink column: the input table (as in `inputs`) and its column."""

    table: str
    column: str
    transformations: list[ColumnTransformation] = Field(default_factory=list)


class SinkLineage(TableLineage):
    inputs: list[TableLineage] = Field(default_factory=list)
    # Per sink column, every source column that affects it (only when column lineage was asked for).
    columns: dict[str, list[ColumnInput]] | None = None
    # "static": read from the SQL text because the plan could not be compiled (a WARN says why);
    # absent for the planner's exact lineage.
    method: Literal["static"] | None = None
    # The output's lifecycleStateChange as openlineage-spark reports it (CTAS: CREATE; RTAS,
    # INSERT OVERWRITE, REPLACE WHERE: OVERWRITE); absent for an append.
    lifecycle_state_change: Literal["CREATE", "OVERWRITE"] | None = None
    # The statement(s) writing this sink, as the script has them (redacted): the INSERT, the
    # statement set's INSERT into this table, the CTAS. The SQL facet of this sink's job, from
    # whose first verb a backend reads the kind of write; absent when not known.
    statement: str | None = None

    @model_serializer(mode="wrap")
    def _without_absent_columns(self, handler):
        # Documents without column lineage stay exactly as they were before it existed.
        data = handler(self)
        for key in ("columns", "method", "lifecycle_state_change", "statement"):
            if data.get(key) is None:
                data.pop(key, None)
        return data


class StandIn(BaseModel):
    """A function, table or catalog the analyser did not have and compiled through a stand-in.

    Table lineage through a stand-in is exact (which tables a statement reads does not depend on
    what a function computes or on a connector's code); what it cannot give is said here.
    """

    kind: Literal["function", "table", "catalog"]
    name: str
    reason: str
    class_name: str | None = Field(default=None, alias="class")
    language: str | None = None
    function_kind: str | None = None  # scalar, table, aggregate
    result_type: str | None = None  # what the stand-in returned: from the script's usage or the default
    connector: str | None = None
    catalog_type: str | None = None

    model_config = {"populate_by_name": True}

    @model_serializer(mode="wrap")
    def _only_what_is_set(self, handler):
        return {key: value for key, value in handler(self).items() if value is not None}


class JobLineage(BaseModel):
    # The engine whose parser produced the document: exactly one of the two is set.
    flink_version: str | None = None
    spark_version: str | None = None
    runtime_mode: Literal["streaming", "batch"] = "streaming"
    sinks: list[SinkLineage] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    # What was compiled through a stand-in because its jar was missing (absent when nothing was).
    stand_ins: list[StandIn] = Field(default_factory=list)
    # How the child runs of a job with child jobs (several sink tables, a STATEMENT SET; any
    # Spark job's targets) are numbered and laid out: "uuid7" (planlineage.emitter.run_ids.
    # child_run_id) since backends reject anything but a UUIDv7; "uuid5" for a run whose START was
    # built by an older planlineage (its stored document has no such key: see `stored`): its later
    # events keep that START's ids and jobs (a Spark job with one target: one job, no parent).
    child_run_ids: Literal["uuid5", "uuid7"] = "uuid7"

    @classmethod
    def stored(cls, data: dict) -> JobLineage:
        """A document read back from the state store. One stored by a release before
        `child_run_ids` existed had its children's STARTs built the older way."""
        if "child_run_ids" not in data and _has_child_jobs(data.get("sinks") or [], _engine_of(data)):
            data = {"child_run_ids": "uuid5", **data}
        return cls.model_validate(data)

    def has_datasets(self) -> bool:
        """Whether the job names any dataset: nothing is reported for one that does not (an event
        without datasets would wipe the job's edges at a Marquez-like backend)."""
        return any(sink.datasets or any(table.datasets for table in sink.inputs) for sink in self.sinks)

    @property
    def engine(self) -> str:
        """The name of the engine that produced the document (planlineage.engines)."""
        return _engine_of(self).name

    @model_serializer(mode="wrap")
    def _only_its_engine(self, handler):
        # Flink documents stay exactly as they were before Spark existed, and vice versa; and as
        # they were before stand-ins existed when nothing was stood in.
        data = handler(self)
        for key in ("flink_version", "spark_version"):
            if data.get(key) is None:
                data.pop(key, None)
        if not self.stand_ins:
            data.pop("stand_ins", None)
        if not _has_child_jobs(data.get("sinks") or [], _engine_of(self)):
            data.pop("child_run_ids", None)  # no child runs: nothing to number
        return data

    def to_json_dict(self) -> dict:
        return self.model_dump(by_alias=True, mode="json")


def _engine_of(document):
    """The engine of a document, or of its stored form (a dict): the one whose version it sets."""
    from planlineage.engines import of_document  # the picker: no engine's code until asked

    return of_document(document)


def _has_child_jobs(sinks: list[dict], engine) -> bool:
    """Whether the events of a document have child jobs: several sink tables, or a single target
    of an engine whose every target hangs off its application's run (Spark: openlineage-spark's
    SQL_JOB always does)."""
    tables = {sink.get("table") for sink in sinks}
    return len(tables) > 1 or (engine.single_target_has_parent and len(tables) == 1)
