"""Each sink's own statement, its lifecycle state change and its catalog's kind, through the real
pipeline over the real plans recorded from Flink 2.2 (tests/fixtures/plans): only the JVM is
replaced, by an answer it gave for the same script."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from planlineage import pipeline
from planlineage import script as sql_script
from planlineage.planner import stages as flink_extract
from planlineage.planner.sink_statements import script_writes

FIXTURES = Path(__file__).parent.parent / "fixtures"
D = "default_catalog.default_database."


class RecordedPlanner:
    """A JobCompiler answering what Flink 2.2's planner answered for the case's script."""

    def __init__(self, case: str):
        self.record = json.loads((FIXTURES / "plans" / "2.2" / f"{case}.json").read_text())
        self.provisioned = SimpleNamespace(
            flink=SimpleNamespace(version=self.record["flink_version"], minor="2.2", batch_compiled_plan=True)
        )

    def compile(self, request, timeout=300.0):
        return {"ok": True, "plan": self.record["plan"], "tables": self.record["tables"]}


def extract(case: str, prefix: str = ""):
    script = (
        prefix + (FIXTURES / "sql" / "_tables.sql").read_text() + "\n" + (FIXTURES / "sql" / f"{case}.sql").read_text()
    )
    return pipeline.extract(script, flink_version="2.2", planner=RecordedPlanner(case))


def test_each_insert_of_a_statement_set_is_its_sinks_statement():
    lineage = extract("statement_set")
    statements = {s.table: s.statement for s in lineage.sinks}
    assert statements == {
        D + "out_a": "INSERT INTO out_a SELECT order_id, amount FROM orders",
        D + "out_b": "INSERT INTO out_b SELECT order_id, amount FROM refunds",
        D + "out_s": "INSERT INTO out_s SELECT c.name, o.amount FROM orders o JOIN customers FOR SYSTEM_TIME AS OF "
        "o.proc AS c ON o.customer_id = c.customer_id",
    }
    assert {s.lifecycle_state_change for s in lineage.sinks} == {None}  # appends
    # Tables of Flink's in-memory catalog: no symlink named after them (issue #37).
    assert all(not d.symlinks for s in lineage.sinks for t in [s, *s.inputs] for d in t.datasets)


def test_insert_overwrite_is_an_overwrite_and_ctas_a_create():
    [overwrite] = extract("batch").sinks
    assert overwrite.statement.startswith("INSERT OVERWRITE lake_report SELECT")
    assert overwrite.lifecycle_state_change == "OVERWRITE"
    ctas = [s for s in extract("ctas").sinks if s.statement and s.statement.upper().startswith("CREATE")]
    assert ctas and {s.lifecycle_state_change for s in ctas} == {"CREATE"}


def test_a_persistent_catalogs_tables_keep_their_flink_name_as_symlink():
    lineage = extract("stand_in_catalogs")
    links = {
        d.name: {(s.name, s.type) for s in d.symlinks}
        for sink in lineage.sinks
        for t in [sink, *sink.inputs]
        for d in t.datasets
    }
    # Paimon's lake catalog: its table name, under the table's own namespace.
    assert ("lake.ods.orders_declared", "TABLE") in links["warehouse/ods.db/orders_declared"]
    # default_catalog's out_a: nothing of the kind.
    assert not any(name.startswith("default_catalog.") for found in links.values() for name, _ in found)
    by_table = {s.table: s.statement for s in lineage.sinks}
    assert by_table["lake.ods.archive"] == "INSERT INTO archive SELECT * FROM orders_declared"  # after USE


def test_statements_are_redacted_like_the_script():
    secret = "s3cr3t-Passw0rd"
    script = (
        "CREATE TABLE src (a INT) WITH ('connector' = 'datagen');\n"
        f"CREATE TABLE dst (a INT) WITH ('connector' = 'jdbc', 'url' = 'jdbc:mysql://h/db', 'table-name' = 't', 'password' = '{secret}');\n"
        f"INSERT INTO dst /*+ OPTIONS('password' = '{secret}') */ SELECT a FROM src;\n"
    )
    statements = sql_script.split(script)
    writes = script_writes(statements)
    sinks = [flink_extract.SinkLineage(table=D + "dst")]
    flink_extract._attach_statements(sinks, writes, pipeline.script_options(script))
    assert sinks[0].statement.startswith("INSERT INTO dst")
    assert secret not in sinks[0].statement
