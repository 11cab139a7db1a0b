"""Which statement of a script writes which sink table, and what kind of catalog each table is in.

A compiled plan names its sinks (`catalog.database.table`) but not the statements that wrote
them. Backends read the kind of a write (CREATE, APPEND, OVERWRITE) from the first verb of a job's
SQL facet when no `lifecycleStateChange` says it, so each sink's job carries its own statement:
the INSERT, the one INSERT of a statement set that writes it, the CTAS. The script is read in
order as Flink runs it (`USE CATALOG`, `USE`, `CREATE CATALOG` change how a name is qualified),
with the same reader the degraded static lineage uses, so both qualify a name alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from planlineage import script as sql_script
from planlineage.planner.insert_parts import insert_pieces, masked
from planlineage.planner.static_lineage import CREATE_STATEMENT, ScriptState

_REPLACING_CTAS = re.compile(r"^\s*(?:CREATE\s+OR\s+REPLACE|REPLACE)\s+TABLE\b", re.IGNORECASE)


@dataclass
class SinkWrites:
    """The statements writing one sink table, in script order, and the lifecycle state change
    they make (openlineage-spark's words: CTAS CREATE; RTAS and INSERT OVERWRITE OVERWRITE)."""

    statements: list[str] = field(default_factory=list)
    lifecycle: str | None = None


@dataclass
class ScriptWrites:
    sinks: dict[str, SinkWrites] = field(default_factory=dict)  # per qualified sink table
    catalog_types: dict[str, str] = field(default_factory=dict)  # per catalog the script creates


def script_writes(statements: list[sql_script.Statement]) -> ScriptWrites:
    state = ScriptState()
    found = ScriptWrites()

    def wrote(target: str, text: str, lifecycle: str | None) -> None:
        writes = found.sinks.setdefault(state.qualify(target), SinkWrites())
        if text not in writes.statements:
            writes.statements.append(text)
        # A table some statement replaces is replaced, whatever else appends to it.
        if lifecycle == "OVERWRITE" or (lifecycle and writes.lifecycle is None):
            writes.lifecycle = lifecycle

    for statement in statements:
        sql = statement.for_planner()
        if statement.kind in (sql_script.Kind.INSERT, sql_script.Kind.STATEMENT_SET):
            for target, text, overwrite in insert_pieces(sql):
                wrote(target, text, "OVERWRITE" if overwrite else None)
        elif statement.kind is sql_script.Kind.CTAS:
            created = CREATE_STATEMENT.match(masked(sql))
            if created:
                state.declare(created, sql)
                wrote(created["name"], sql.strip(), "OVERWRITE" if _REPLACING_CTAS.match(sql) else "CREATE")
        elif statement.kind is sql_script.Kind.DDL:
            state.ddl(statement, sql)
    found.catalog_types = {name: props.get("type", "") for name, props in state.catalogs.items()}
    return found
