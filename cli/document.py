"""The lineage document of one job: what `extract` prints and what the emitter reports.

One model shared by every stage after the planner, so that the JSON a user reads and the events a
backend receives can never disagree.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


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


class SinkLineage(TableLineage):
    inputs: list[TableLineage] = Field(default_factory=list)


class JobLineage(BaseModel):
    flink_version: str
    runtime_mode: Literal["streaming", "batch"] = "streaming"
    sinks: list[SinkLineage] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    def to_json_dict(self) -> dict:
        return self.model_dump(by_alias=True, mode="json")
