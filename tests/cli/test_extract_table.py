"""`extract --format table`: what a person reads; with --columns it shows each sink's column lineage
as the JSON has it (the CLI end to end with a real planner: tests/flink/test_real_planner.py)."""

import pytest

from planlineage.cli.main import main
from planlineage.document import (
    ColumnInput,
    ColumnTransformation,
    Dataset,
    JobLineage,
    SinkLineage,
    TableLineage,
)
from planlineage.render import render_table

D = "default_catalog.default_database."


def lineage(columns):
    return JobLineage(
        flink_version="1.20",
        sinks=[
            SinkLineage(
                table=D + "totals",
                connector="jdbc",
                datasets=[Dataset(namespace="postgres://db:5432", name="shop.public.totals")],
                inputs=[TableLineage(table=D + "orders", connector="kafka")],
                columns=columns,
            )
        ],
    )


def direct(subtype, masking=False):
    return ColumnTransformation(type="DIRECT", subtype=subtype, masking=masking)


def test_the_table_shows_each_sink_column_and_where_it_comes_from():
    text = render_table(
        lineage(
            {
                "user_id": [ColumnInput(table=D + "orders", column="user_id", transformations=[direct("IDENTITY")])],
                "total": [
                    ColumnInput(table=D + "orders", column="amount", transformations=[direct("AGGREGATION")]),
                    ColumnInput(
                        table=D + "orders",
                        column="status",
                        transformations=[ColumnTransformation(type="INDIRECT", subtype="FILTER")],
                    ),
                ],
                "card": [
                    ColumnInput(table=D + "orders", column="card", transformations=[direct("TRANSFORMATION", True)])
                ],
                "source": [],
            }
        )
    )
    assert text.splitlines()[-6:] == [
        "  <- default_catalog.default_database.orders [kafka]  (no dataset)",
        "  columns:",
        "    user_id <- default_catalog.default_database.orders.user_id (DIRECT/IDENTITY)",
        "    total   <- default_catalog.default_database.orders.amount (DIRECT/AGGREGATION),"
        " default_catalog.default_database.orders.status (INDIRECT/FILTER)",
        "    card    <- default_catalog.default_database.orders.card (DIRECT/TRANSFORMATION masking)",
        "    source  <- (no source column: constant values)",
    ]


def test_without_columns_asked_the_table_is_as_before():
    assert "columns" not in render_table(lineage(None))
    assert render_table(lineage({})).endswith("\n  columns: (none found)")


@pytest.mark.parametrize("asked", [True, False])
def test_extract_format_table_prints_the_columns_it_was_asked_for(tmp_path, monkeypatch, capsys, asked):
    """The command hands --columns to the extraction and renders what comes back."""
    seen = {}

    def fake_extract(script, **options):
        seen.update(options)
        columns = {"user_id": [ColumnInput(table=D + "orders", column="user_id", transformations=[direct("IDENTITY")])]}
        return lineage(columns if options["columns"] else None)

    monkeypatch.setattr("planlineage.pipeline.extract", fake_extract)
    script = tmp_path / "job.sql"
    script.write_text("INSERT INTO totals SELECT user_id FROM orders;")
    argv = ["extract", str(script), "--format", "table", *(["--columns"] if asked else [])]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert seen["columns"] is asked
    assert ("    user_id <- default_catalog.default_database.orders.user_id (DIRECT/IDENTITY)" in out) is asked
