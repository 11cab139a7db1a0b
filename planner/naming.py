"""Flink's naming: a table as the plan uses it (or as the SQL text names it) to its OpenLineage
datasets, through the identity rules of planlineage.registry (Spark's counterpart: spark/naming.py).
"""

from __future__ import annotations

from collections.abc import Mapping

from planlineage.document import Column, TableLineage
from planlineage.planner.walk import TableUse, effective_options
from planlineage.registry import IdentityConfig, resolve
from planlineage.registry.identity import IN_MEMORY, catalog_kind_of


def table_lineage(
    use: TableUse,
    tables: dict,
    identity: IdentityConfig | None,
    warnings: list[str],
    catalog_types: Mapping[str, str] | None = None,
) -> TableLineage:
    """A table the plan uses, named with the options the job runs it with (a temporary table's from
    the compile server's catalog description `tables`); the naming's warnings go to `warnings`.
    `catalog_types`: the type of each catalog the script creates (a temporary table lives in the
    job whatever its catalog)."""
    described = tables.get(use.identifier) or {}
    options = effective_options(use, described.get("options"))
    kind = IN_MEMORY if described.get("temporary") else catalog_kind_of(options, catalog_types or {}, use.identifier)
    resolution = resolve(options, table=use.identifier, config=identity, catalog_kind=kind)
    warnings.extend(resolution.warnings)
    columns = [
        Column(name=c["name"], type=c["type"]) for c in described.get("columns", []) if c.get("kind") != "computed"
    ]
    return TableLineage(
        table=use.identifier, connector=options.get("connector"), datasets=resolution.datasets, schema=columns
    )


def static_table(
    name: str, options: dict, identity, warnings: list[str], catalog_types: Mapping[str, str] | None = None
) -> TableLineage:
    """A table the SQL text names (a job that was not compiled), named with the options the text gives."""
    kind = catalog_kind_of(options, catalog_types or {}, name)
    resolution = resolve(options, table=name, config=identity, catalog_kind=kind)
    warnings.extend(resolution.warnings)
    return TableLineage(table=name, connector=options.get("connector"), datasets=resolution.datasets)
