"""Column lineage over real plans of every supported Flink version, and its conservative fallback.

`tests/fixtures/expected_columns.json` holds the full column lineage of every fixture case
(`cases`: identical on all seven versions; `per_version`: where the versions' planners build
different plans, with the reason) and of the examples compiled live (`examples`). Sources are
written `table.column` (tables of default_catalog.default_database) and transformations
`TYPE/SUBTYPE`, `+masking` when the step hides the value, `[description]` when there is one.
The tests below the full comparison name, per transformation type and node kind, what the
expected file must say and why, so that a wrong entry there cannot go unnoticed.
"""

import json
import re
from pathlib import Path

import pytest
from fixture_cases import lacks, param, version_key

from planlineage.document import ColumnInput, JobLineage, SinkLineage
from planlineage.flink_versions import supported
from planlineage.planner.columns import HANDLERS, column_lineage, row_names
from planlineage.planner.stages import attach_columns
from planlineage.planner.walk import node_kind

FIXTURES = Path(__file__).parent.parent / "fixtures"
EXPECTED = json.loads((FIXTURES / "expected_columns.json").read_text())
D = "default_catalog.default_database."
VERSIONS = list(supported())
ABOUT = (
    "Column lineage of every fixture case (tests/planner/test_columns.py): sink -> columns (per sink column, "
    "its sources) and dataset (sources that decide which rows exist). 'cases' hold on every version; "
    "'per_version' where the versions' planners build different plans; 'examples' are the examples/ "
    "scripts through extract, in the document's per-column form."
)


def load(minor, case):
    return json.loads((FIXTURES / "plans" / minor / f"{case}.json").read_text())


def short(table):
    return table[len(D) :] if table.startswith(D) else table


def transformation_text(t) -> str:
    text = f"{t.type}/{t.subtype}"
    if t.masking:
        text += "+masking"
    if t.description:
        text += f" [{t.description}]"
    return text


def sources_text(sources) -> dict:
    return {f"{short(s.table)}.{s.column}": [transformation_text(t) for t in s.transformations] for s in sources}


def rendered(record) -> dict:
    lineage, warnings = column_lineage(record["plan"], record["tables"])
    assert warnings == []
    return {
        short(table): {
            "columns": {c: sources_text(s) for c, s in sink.fields.items()},
            "dataset": sources_text(sink.dataset),
        }
        for table, sink in lineage.items()
    }


def expected(minor, case) -> dict:
    if case in EXPECTED["cases"]:
        return EXPECTED["cases"][case]
    (variant,) = [v for v in EXPECTED["per_version"][case] if minor in v["versions"]]
    return variant["lineage"]


def cases():
    return sorted(p.stem for p in (FIXTURES / "sql").glob("[!_]*.sql"))


def on_every_version(case):
    return [pytest.param(minor, id=f"{minor}-{case}") for minor in VERSIONS]


# --------------------------------------------------------------------------- in full


@pytest.mark.parametrize("minor,case", [param(m, c) for c in cases() for m in VERSIONS])
def test_full_column_lineage_of_every_case_on_every_version(minor, case):
    assert rendered(load(minor, case)) == expected(minor, case)


def test_every_case_is_expected_once_and_version_differences_say_why():
    assert not set(EXPECTED["cases"]) & set(EXPECTED["per_version"])
    assert sorted([*EXPECTED["cases"], *EXPECTED["per_version"]]) == cases()
    for case, variants in EXPECTED["per_version"].items():
        assert sorted(v for variant in variants for v in variant["versions"]) == sorted(VERSIONS), case
        assert all(len(variant["why"]) > 40 for variant in variants), case


def test_sink_columns_are_listed_in_the_sink_schema_order():
    record = load("2.3", "case_when")
    lineage, _ = column_lineage(record["plan"], record["tables"])
    assert list(lineage[D + "out_case"].fields) == ["k", "v", "label", "fallback"]


def test_every_node_kind_of_the_fixtures_is_read_and_asserted():
    """Each node kind is handled (no fallback anywhere) and sits in a case asserted in full above."""
    kinds: dict[str, set[str]] = {}
    for minor in VERSIONS:
        for case in cases():
            if lacks(minor, case):
                continue
            for node in load(minor, case)["plan"]["nodes"]:
                kinds.setdefault(node_kind(node), set()).add(case)
    for kind, _where in kinds.items():
        if kind.endswith("-sink"):
            continue
        assert re.sub(r"^(stream|batch)-exec-", "", kind) in HANDLERS, kind
    assert {
        "stream-exec-join",
        "stream-exec-interval-join",
        "stream-exec-lookup-join",
        "stream-exec-temporal-join",
        "stream-exec-window-join",
        "stream-exec-group-aggregate",
        "stream-exec-local-group-aggregate",
        "stream-exec-incremental-group-aggregate",
        "stream-exec-global-group-aggregate",
        "stream-exec-window-aggregate",
        "stream-exec-local-window-aggregate",
        "stream-exec-global-window-aggregate",
        "stream-exec-group-window-aggregate",
        "stream-exec-over-aggregate",
        "stream-exec-rank",
        "stream-exec-deduplicate",
        "stream-exec-window-rank",
        "stream-exec-window-deduplicate",
        "stream-exec-union",
        "stream-exec-expand",
        "stream-exec-correlate",
        "stream-exec-match",
        "stream-exec-changelog-normalize",
        "stream-exec-watermark-assigner",
        "stream-exec-mini-batch-assigner",
        "stream-exec-exchange",
        "stream-exec-sort",
        "stream-exec-temporal-sort",
        "stream-exec-sort-limit",
        "stream-exec-limit",
        "stream-exec-values",
        "stream-exec-window-table-function",
        "stream-exec-calc",
        "batch-exec-hash-aggregate",
        "batch-exec-join",
        "batch-exec-over-aggregate",
        "batch-exec-sort",
        "batch-exec-sort-limit",
        "batch-exec-limit",
        "batch-exec-expand",
        "batch-exec-correlate",
        "batch-exec-calc",
        "batch-exec-exchange",
    } <= set(kinds)


def test_every_transformation_type_is_asserted_somewhere():
    seen = set()
    for lineage in [
        *EXPECTED["cases"].values(),
        *(v["lineage"] for vs in EXPECTED["per_version"].values() for v in vs),
    ]:
        for sink in lineage.values():
            for sources in [*sink["columns"].values(), sink["dataset"]]:
                seen |= {t.split("+")[0].split(" ")[0] for ts in sources.values() for t in ts}
    assert seen == {
        "DIRECT/IDENTITY",
        "DIRECT/TRANSFORMATION",
        "DIRECT/AGGREGATION",
        "INDIRECT/JOIN",
        "INDIRECT/FILTER",
        "INDIRECT/GROUP_BY",
        "INDIRECT/SORT",
        "INDIRECT/WINDOW",
        "INDIRECT/CONDITIONAL",
    }


# --------------------------------------------------------------------------- what the expected file must say


def lineage_of(minor, case, sink):
    return rendered(load(minor, case))[sink]


@pytest.mark.parametrize("minor", VERSIONS)
def test_identity_and_transformation(minor):
    # out_b.v = o.amount - r.amount: both computed from; the join's keys decide the rows.
    joined = lineage_of(minor, "regular_join", "out_b")
    assert joined["columns"] == {
        "k": {"orders.order_id": ["DIRECT/IDENTITY"]},
        "v": {"orders.amount": ["DIRECT/TRANSFORMATION"], "refunds.amount": ["DIRECT/TRANSFORMATION"]},
    }
    assert joined["dataset"] == {"orders.order_id": ["INDIRECT/JOIN"], "refunds.order_id": ["INDIRECT/JOIN"]}
    # UNION ALL: each branch's column; -amount transforms.
    union = lineage_of(minor, "union_all", "out_a")["columns"]
    assert union["v"] == {"orders.amount": ["DIRECT/IDENTITY"], "refunds.amount": ["DIRECT/TRANSFORMATION"]}


@pytest.mark.parametrize("minor", VERSIONS)
def test_cast_keeps_identity_only_when_the_value_is_unchanged(minor):
    # CAST(ts AS TIMESTAMP(3)) only drops the rowtime marker; CAST(id AS DOUBLE) converts, and so
    # does reading Kafka's 'timestamp' (TIMESTAMP_LTZ(3), as the real connector types it: the
    # stand-in declares the same) into a TIMESTAMP(3) column.
    passthrough = lineage_of(minor, "rowtime_passthrough", "out_t")["columns"]
    assert passthrough["ts"] == {"orders.ts": ["DIRECT/IDENTITY"]}
    metadata = lineage_of(minor, "metadata_computed", "events_out")["columns"]
    assert metadata["ts"] == {"events.event_time": ["DIRECT/TRANSFORMATION [metadata key 'timestamp']"]}
    assert lineage_of(minor, "unnest_correlate", "out_s")["columns"]["v"] == {"baskets.id": ["DIRECT/TRANSFORMATION"]}


@pytest.mark.parametrize("minor", VERSIONS)
def test_metadata_and_computed_source_columns(minor):
    # Metadata columns are columns of the table (named as in its schema, the key said); a computed
    # column (total AS price * qty) is its expression's inputs.
    columns = lineage_of(minor, "metadata_computed", "events_out")["columns"]
    assert columns["total"] == {"events.price": ["DIRECT/TRANSFORMATION"], "events.qty": ["DIRECT/TRANSFORMATION"]}
    assert columns["part"] == {"events.part": ["DIRECT/IDENTITY [metadata key 'partition']"]}
    assert columns["pos"] == {"events.offset": ["DIRECT/IDENTITY [metadata key 'offset']"]}


@pytest.mark.parametrize("minor", VERSIONS)
def test_aggregation_and_group_by(minor):
    # GROUP BY TUMBLE(ts, ...), customer_id: keys identity, SUM aggregates, TUMBLE_START/END derive
    # from ts; the keys group and ts windows every row.
    window = lineage_of(minor, "group_window", "out_w")
    assert window["columns"] == {
        "k": {"orders.customer_id": ["DIRECT/IDENTITY"]},
        "w_start": {"orders.ts": ["DIRECT/TRANSFORMATION"]},
        "w_end": {"orders.ts": ["DIRECT/TRANSFORMATION"]},
        "v": {"orders.amount": ["DIRECT/AGGREGATION"]},
    }
    assert window["dataset"] == {"orders.customer_id": ["INDIRECT/GROUP_BY"], "orders.ts": ["INDIRECT/WINDOW"]}


@pytest.mark.parametrize("minor", VERSIONS)
def test_two_phase_aggregates_read_the_first_phase_input(minor):
    # Mini-batch, local/incremental/global phases and split DISTINCT: the same answer as one
    # GROUP BY. AVG is planned as SUM/COUNT with a null guard (IF(COUNT = 0, NULL, ...)), hence
    # its CONDITIONAL; COUNT(DISTINCT) masks; the hash bucket of the split is no grouping.
    agg = lineage_of(minor, "mini_batch_two_phase", "out_agg")
    assert agg["columns"] == {
        "k": {"orders.customer_id": ["DIRECT/IDENTITY"]},
        "total": {"orders.amount": ["DIRECT/AGGREGATION"]},
        "avg_amount": {"orders.amount": ["DIRECT/AGGREGATION", "INDIRECT/CONDITIONAL"]},
        "products": {"orders.product_id": ["DIRECT/AGGREGATION+masking"]},
    }
    assert agg["dataset"] == {"orders.customer_id": ["INDIRECT/GROUP_BY"]}
    assert lineage_of(minor, "distinct_split", "out_u")["dataset"] == {"orders.customer_id": ["INDIRECT/GROUP_BY"]}


@pytest.mark.parametrize("minor", VERSIONS)
def test_expand_of_grouping_sets(minor):
    grouped = lineage_of(minor, "grouping_sets", "out_s")
    assert grouped["columns"] == {
        "k": {"orders.customer_id": ["DIRECT/TRANSFORMATION"]},
        "v": {"orders.amount": ["DIRECT/AGGREGATION"]},
    }
    assert grouped["dataset"] == {"orders.customer_id": ["INDIRECT/GROUP_BY"]}


@pytest.mark.parametrize("minor", VERSIONS)
def test_joins_of_every_kind(minor):
    # Semi (IN) and anti (NOT EXISTS) joins only emit the left row; their keys join.
    semi_anti = lineage_of(minor, "semi_anti_join", "out_c")
    assert semi_anti["columns"] == {
        "k": {"orders.order_id": ["DIRECT/IDENTITY"]},
        "v": {"orders.amount": ["DIRECT/IDENTITY"]},
    }
    assert semi_anti["dataset"] == {
        "customers.customer_id": ["INDIRECT/JOIN"],
        "orders.customer_id": ["INDIRECT/JOIN"],
        "orders.order_id": ["INDIRECT/JOIN"],
        "refunds.order_id": ["INDIRECT/JOIN"],
    }
    # Interval and temporal joins also join on their time attributes.
    assert lineage_of(minor, "interval_join", "out_a")["dataset"] == {
        "orders.order_id": ["INDIRECT/JOIN"],
        "orders.ts": ["INDIRECT/JOIN"],
        "refunds.order_id": ["INDIRECT/JOIN"],
        "refunds.ts": ["INDIRECT/JOIN"],
    }
    assert lineage_of(minor, "temporal_join", "out_a")["dataset"] == {
        "orders.product_id": ["INDIRECT/JOIN"],
        "orders.ts": ["INDIRECT/JOIN"],
        "rates.product_id": ["INDIRECT/JOIN"],
        "rates.ts": ["INDIRECT/JOIN"],
    }
    # Inner join with a non-equi condition, then a full outer join.
    assert lineage_of(minor, "joins_more", "out_j")["dataset"] == {
        "customers.customer_id": ["INDIRECT/JOIN"],
        "orders.amount": ["INDIRECT/JOIN"],
        "orders.customer_id": ["INDIRECT/JOIN"],
        "orders.order_id": ["INDIRECT/JOIN"],
        "refunds.order_id": ["INDIRECT/JOIN"],
    }
    # Lookup join with `c.name = 'vip'`: the planner turns it into a constant lookup key and
    # writes the constant, so the sink's k has no source, and name joins.
    lookup = lineage_of(minor, "joins_more", "out_s")
    assert lookup["columns"] == {"k": {}, "v": {"orders.amount": ["DIRECT/IDENTITY"]}}
    assert lookup["dataset"] == {
        "customers.customer_id": ["INDIRECT/JOIN"],
        "customers.name": ["INDIRECT/JOIN"],
        "orders.customer_id": ["INDIRECT/JOIN"],
    }
    # Window join: keys join, each side's window (from ts) windows.
    window = lineage_of(minor, "window_join_rank", "out_wj")
    assert window["dataset"] == {
        "orders.order_id": ["INDIRECT/JOIN"],
        "orders.ts": ["INDIRECT/WINDOW"],
        "refunds.order_id": ["INDIRECT/JOIN"],
        "refunds.ts": ["INDIRECT/WINDOW"],
    }


@pytest.mark.parametrize("minor", VERSIONS)
def test_filter_and_sort(minor):
    if not lacks(minor, "ctas"):  # CREATE TABLE AS SELECT: Flink 1.16+
        assert lineage_of(minor, "ctas", "big_orders")["dataset"] == {"orders.amount": ["INDIRECT/FILTER"]}
    # Upsert source: the filter is pushed into changelog-normalize on 2.x, a calc on 1.x; same lineage.
    assert lineage_of(minor, "changelog_normalize", "out_u")["dataset"] == {"rates.rate": ["INDIRECT/FILTER"]}
    assert lineage_of(minor, "sort_limit", "out_a")["dataset"] == {"orders.ts": ["INDIRECT/SORT"]}
    assert lineage_of(minor, "sort_limit", "out_c")["dataset"] == {"orders.amount": ["INDIRECT/SORT"]}
    assert lineage_of(minor, "sort_limit", "out_l")["dataset"] == {}  # LIMIT without ORDER BY


@pytest.mark.parametrize("minor", VERSIONS)
def test_windows_ranks_and_deduplication(minor):
    rank = lineage_of(minor, "rank_and_dedup", "out_rank")
    assert rank["columns"]["rn"] == {"orders.amount": ["INDIRECT/WINDOW"], "orders.customer_id": ["INDIRECT/WINDOW"]}
    assert rank["dataset"] == {"orders.amount": ["INDIRECT/WINDOW"], "orders.customer_id": ["INDIRECT/WINDOW"]}
    # Deduplication on rowtime keeps the first row per key by ts; on proctime (PROCTIME(), no source column) by key only.
    assert lineage_of(minor, "rank_and_dedup", "out_c")["dataset"] == {
        "orders.order_id": ["INDIRECT/WINDOW"],
        "orders.ts": ["INDIRECT/WINDOW"],
    }
    assert lineage_of(minor, "top_n_dedup", "out_u")["dataset"] == {"orders.customer_id": ["INDIRECT/WINDOW"]}
    # OVER: partition and order keys window the aggregate only, the other columns pass unchanged.
    over = lineage_of(minor, "over_aggregate", "out_a")
    assert over["columns"]["k"] == {"orders.order_id": ["DIRECT/IDENTITY"]}
    assert over["columns"]["v"]["orders.customer_id"][0] == "INDIRECT/WINDOW"
    assert over["dataset"] == {}
    tvf = lineage_of(minor, "window_tvf_more", "out_win")
    assert tvf["columns"]["w_start"] == {"orders.ts": ["DIRECT/TRANSFORMATION"]}
    assert tvf["dataset"] == {"orders.customer_id": ["INDIRECT/GROUP_BY"], "orders.ts": ["INDIRECT/WINDOW"]}


@pytest.mark.parametrize("minor", VERSIONS)
def test_conditional(minor):
    columns = lineage_of(minor, "case_when", "out_case")["columns"]
    # CASE WHEN amount > 100 THEN amount * 0.9 ELSE amount END
    assert columns["v"] == {"orders.amount": ["DIRECT/IDENTITY", "DIRECT/TRANSFORMATION", "INDIRECT/CONDITIONAL"]}
    # IF(customer_id IS NULL, 'anonymous', 'known'): only the condition reads a column.
    assert columns["label"] == {"orders.customer_id": ["INDIRECT/CONDITIONAL"]}
    # COALESCE(amount, CAST(product_id AS DOUBLE))
    assert columns["fallback"] == {
        "orders.amount": ["DIRECT/IDENTITY", "INDIRECT/CONDITIONAL"],
        "orders.product_id": ["DIRECT/TRANSFORMATION"],
    }


@pytest.mark.parametrize("minor", VERSIONS)
def test_match_recognize(minor):
    match = lineage_of(minor, "match_recognize", "out_a")
    assert match["columns"] == {
        "k": {"orders.order_id": ["DIRECT/IDENTITY"]},
        "v": {"orders.amount": ["DIRECT/AGGREGATION"]},
    }
    assert match["dataset"] == {
        "orders.amount": ["INDIRECT/FILTER"],
        "orders.customer_id": ["INDIRECT/WINDOW"],
        "orders.ts": ["INDIRECT/WINDOW"],
    }


@pytest.mark.parametrize("minor", VERSIONS)
def test_insert_with_a_column_list_writes_only_its_columns(minor):
    columns = lineage_of(minor, "insert_column_list", "out_wide")["columns"]
    written = {"k": {"orders.order_id": ["DIRECT/IDENTITY"]}, "v": {"orders.amount": ["DIRECT/IDENTITY"]}}
    if version_key(minor) < (1, 18):  # no targetColumns in the sink node: the left-out column is a NULL
        assert columns == {**written, "note": {}}
    else:
        assert columns == written


def test_batch_plans_of_2x_differ_from_the_streaming_replan_of_1x():
    streaming, batch = lineage_of("1.20", "batch_more", "lake_top"), lineage_of("2.3", "batch_more", "lake_top")
    assert streaming["dataset"]["lake_orders.amount"] == ["INDIRECT/WINDOW"]
    assert batch["dataset"]["lake_orders.amount"] == ["INDIRECT/FILTER", "INDIRECT/SORT"]
    assert streaming["columns"] == batch["columns"]


# --------------------------------------------------------------------------- what is not understood


def table(name):
    return {"identifier": f"`default_catalog`.`default_database`.`{name}`"}


TABLES = {
    D + "src": {
        "columns": [
            {"name": "a", "kind": "physical", "type": "INT"},
            {"name": "b", "kind": "physical", "type": "INT"},
            {"name": "m", "kind": "metadata", "metadata_key": "headers", "type": "INT"},
            {"name": "c", "kind": "computed", "type": "INT"},
        ]
    },
    D + "dim": {"columns": [{"name": "d", "kind": "physical", "type": "INT"}]},
    D + "out": {
        "columns": [{"name": "x", "kind": "physical", "type": "INT"}, {"name": "y", "kind": "physical", "type": "INT"}]
    },
}


def scan(node_id, abilities=None, output="ROW<`a` INT, `b` INT>"):
    spec = {"table": table("src")}
    if abilities is not None:
        spec["abilities"] = abilities
    return {"id": node_id, "type": "stream-exec-table-source-scan_1", "scanTableSource": spec, "outputType": output}


def sink(node_id, output="ROW<`x` INT, `y` INT>"):
    return {
        "id": node_id,
        "type": "stream-exec-sink_2",
        "dynamicTableSink": {"table": table("out")},
        "outputType": output,
    }


def chain(*nodes):
    return {"nodes": list(nodes), "edges": [{"source": a["id"], "target": b["id"]} for a, b in zip(nodes, nodes[1:])]}


def text(plan, tables=TABLES):
    lineage, warnings = column_lineage(plan, tables)
    return {
        short(t): {"columns": {c: sources_text(s) for c, s in v.fields.items()}, "dataset": sources_text(v.dataset)}
        for t, v in lineage.items()
    }, warnings


def test_an_unknown_node_kind_falls_back_to_indirect_from_every_input_column_with_a_warning():
    mystery = {"id": 2, "type": "stream-exec-quantum-shuffle_3", "outputType": "ROW<`p` INT, `q` INT>"}
    result, warnings = text(chain(scan(1), mystery, sink(3)))
    everything = {
        "src.a": ["INDIRECT/None [not analysed: stream-exec-quantum-shuffle]"],
        "src.b": ["INDIRECT/None [not analysed: stream-exec-quantum-shuffle]"],
    }
    assert result == {"out": {"columns": {"x": everything, "y": everything}, "dataset": everything}}
    (warning,) = warnings
    assert "stream-exec-quantum-shuffle" in warning and "INDIRECT from every input column" in warning


def test_a_known_node_whose_json_cannot_be_read_falls_back_too():
    calc = {
        "id": 2,
        "type": "stream-exec-calc_9",
        "outputType": "ROW<`x` INT, `y` INT>",
        "projection": [{"kind": "INPUT_REF", "inputIndex": 0}, {"kind": "HOLOGRAM", "beam": 1}],
    }
    result, warnings = text(chain(scan(1), calc, sink(3)))
    assert set(result["out"]["columns"]["x"]) == {"src.a", "src.b"}
    assert all(t.startswith("INDIRECT/None") for ts in result["out"]["columns"]["x"].values() for t in ts)
    assert "stream-exec-calc" in warnings[0] and "HOLOGRAM" in warnings[0]


def test_a_node_computing_fewer_columns_than_its_output_type_falls_back():
    calc = {
        "id": 2,
        "type": "stream-exec-calc_1",
        "outputType": "ROW<`x` INT, `y` INT>",
        "projection": [{"kind": "INPUT_REF", "inputIndex": 0}],
    }
    _, warnings = text(chain(scan(1), calc, sink(3)))
    assert "1 columns computed for 2 output fields" in warnings[0]


def test_after_a_fallback_the_known_nodes_keep_reading_exactly():
    # Downstream of the unknown node, a calc that adds a constant: still nothing invented.
    mystery = {"id": 2, "type": "stream-exec-quantum-shuffle_3", "outputType": "ROW<`p` INT, `q` INT>"}
    calc = {
        "id": 3,
        "type": "stream-exec-calc_1",
        "outputType": "ROW<`x` INT, `y` INT>",
        "projection": [{"kind": "INPUT_REF", "inputIndex": 0}, {"kind": "LITERAL", "value": 1}],
    }
    result, _ = text(chain(scan(1), mystery, calc, sink(4)))
    assert result["out"]["columns"]["y"] == {}
    assert set(result["out"]["columns"]["x"]) == {"src.a", "src.b"}


def test_an_unknown_node_embedding_a_table_counts_its_columns():
    mystery = {
        "id": 2,
        "type": "stream-exec-vector-search-table-function_1",
        "outputType": "ROW<`x` INT, `y` INT>",
        "tableSourceSpec": {"vectorSearchTableSource": {"table": table("dim")}},
    }
    result, _ = text(chain(scan(1), mystery, sink(3)))
    assert set(result["out"]["columns"]["x"]) == {"src.a", "src.b", "dim.d"}


def test_source_abilities_reshape_the_scan():
    # Projection (one nested path), metadata appended, a pushed filter and partition pruning.
    abilities = [
        {
            "type": "FilterPushDown",
            "predicates": [
                {
                    "kind": "CALL",
                    "internalName": "$>$1",
                    "operands": [{"kind": "INPUT_REF", "inputIndex": 1}, {"kind": "LITERAL", "value": 0}],
                }
            ],
        },
        {"type": "PartitionPushDown", "partitions": [{"b": "1"}]},
        {"type": "ProjectPushDown", "projectedFields": [[1], [0, 2]]},
        {"type": "ReadingMetadata", "metadataKeys": ["headers"]},
    ]
    plan = chain(
        scan(1, abilities, "ROW<`b` INT, `a_x` INT, `m` INT>"),
        {
            "id": 2,
            "type": "stream-exec-calc_1",
            "outputType": "ROW<`x` INT, `y` INT>",
            "projection": [{"kind": "INPUT_REF", "inputIndex": 1}, {"kind": "INPUT_REF", "inputIndex": 2}],
        },
        sink(3),
    )
    result, warnings = text(plan)
    assert warnings == []
    assert result["out"] == {
        "columns": {
            "x": {"src.a": ["DIRECT/TRANSFORMATION"]},
            "y": {"src.m": ["DIRECT/IDENTITY [metadata key 'headers']"]},
        },
        "dataset": {"src.b": ["INDIRECT/FILTER"]},
    }


def test_an_unknown_source_ability_falls_back():
    result, warnings = text(chain(scan(1, [{"type": "TimeTravel", "when": "yesterday"}]), sink(2)))
    assert "TimeTravel" in warnings[0]
    # A source has no input: every column of its table, indirect.
    unknown = ["INDIRECT/None [not analysed: stream-exec-table-source-scan]"]
    assert result["out"]["columns"]["x"] == {"src.a": unknown, "src.b": unknown, "src.m": unknown}


def test_sink_width_mismatch_is_conservative():
    plan = chain(scan(1, output="ROW<`a` INT, `b` INT>"), sink(2))
    tables = dict(TABLES, **{D + "out": {"columns": [{"name": "x", "kind": "physical", "type": "INT"}]}})
    result, warnings = text(plan, tables)
    assert result["out"]["columns"]["x"] == {
        "src.a": ["INDIRECT/None [not analysed: stream-exec-sink]"],
        "src.b": ["INDIRECT/None [not analysed: stream-exec-sink]"],
    }
    assert "2 input fields for 1 sink columns" in warnings[0]


def test_row_type_names_from_both_serialised_forms():
    assert row_names("ROW<`a` BIGINT, `b``c` DECIMAL(10, 2), `n` ROW<`x` INT, `y` RAW('a,b', 'x')>> NOT NULL") == [
        "a",
        "b`c",
        "n",
    ]
    assert row_names({"type": "ROW", "fields": [{"name": "a", "fieldType": "INT"}]}) == ["a"]
    assert row_names("BIGINT") is None


# --------------------------------------------------------------------------- into the document


def test_attach_columns_fills_the_document_per_column_with_the_dataset_wide_sources_repeated():
    record = load("1.20", "regular_join")
    sinks = [SinkLineage(table=D + "out_b")]
    assert attach_columns(sinks, record["plan"], record["tables"]) == []
    document = JobLineage(flink_version="1.20.5", sinks=sinks).to_json_dict()
    assert document["sinks"][0]["columns"]["k"] == [
        {
            "table": D + "orders",
            "column": "order_id",
            "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}, {"type": "INDIRECT", "subtype": "JOIN"}],
        },
        {"table": D + "refunds", "column": "order_id", "transformations": [{"type": "INDIRECT", "subtype": "JOIN"}]},
    ]
    assert JobLineage.model_validate(document).sinks[0].columns["k"][0] == ColumnInput.model_validate(
        document["sinks"][0]["columns"]["k"][0]
    )


def test_documents_without_columns_are_unchanged():
    document = JobLineage(flink_version="1.20.5", sinks=[SinkLineage(table=D + "x")]).to_json_dict()
    assert document["sinks"][0] == {"table": D + "x", "connector": None, "datasets": [], "schema": [], "inputs": []}


def document_columns(sink) -> dict:
    return {
        column: {f"{short(i.table)}.{i.column}": [transformation_text(t) for t in i.transformations] for i in inputs}
        for column, inputs in sink.columns.items()
    }


# --------------------------------------------------------------------------- examples, live


def ready_versions():
    from planlineage.planner.provision import list_installed

    installed = list_installed()
    return [
        pytest.param(
            minor,
            marks=pytest.mark.skipif(installed[minor]["state"] != "ready", reason=f"Flink {minor} is not provisioned"),
        )
        for minor in VERSIONS
    ]


class RecordingPlanner:
    """The real planner, keeping the compile answer so that the plan can be analysed after extract."""

    def __init__(self, planner):
        self.planner, self.provisioned, self.answers = planner, planner.provisioned, []

    def compile(self, request, timeout=300.0):
        answer = self.planner.compile(request, timeout=timeout)
        self.answers.append(answer)
        return answer


@pytest.mark.flink
@pytest.mark.parametrize("minor", ready_versions())
def test_examples_end_to_end_through_extract(minor):
    from planlineage.pipeline import extract
    from planlineage.planner.compiler import Planner
    from planlineage.planner.provision import ensure

    examples = sorted((FIXTURES.parent.parent / "examples").glob("*.sql"))
    assert [e.stem for e in examples] == sorted(EXPECTED["examples"])
    with Planner(ensure(minor)) as planner:
        recording = RecordingPlanner(planner)
        for example in examples:
            lineage = extract(example.read_text(), planner=recording)
            answer = recording.answers[-1]
            assert attach_columns(lineage.sinks, answer["plan"], answer["tables"]) == []
            got = {short(s.table): document_columns(s) for s in lineage.sinks}
            assert got == EXPECTED["examples"][example.stem], example.stem
