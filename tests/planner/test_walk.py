from planlineage.planner.walk import (
    effective_options,
    embedded_tables,
    hint_options,
    node_kind,
    sink_inputs,
    unquote_identifier,
)


def table(name, options=None):
    value = {"identifier": f"`default_catalog`.`default_database`.`{name}`"}
    if options is not None:
        value["resolvedTable"] = {"options": options}
    return value


def scan(node_id, name, options=None, type_="stream-exec-table-source-scan_1", description=""):
    return {
        "id": node_id,
        "type": type_,
        "scanTableSource": {"table": table(name, options)},
        "description": description,
    }


def sink(node_id, name, type_="stream-exec-sink_1"):
    return {"id": node_id, "type": type_, "dynamicTableSink": {"table": table(name, {"connector": "print"})}}


def test_statement_set_pairs_each_sink_with_its_own_inputs():
    plan = {
        "nodes": [
            scan(1, "a", {}),
            scan(2, "b", {}),
            sink(3, "x"),
            sink(4, "y"),
            scan(5, "c", {}),
            {"id": 6, "type": "stream-exec-union_1"},
        ],
        "edges": [
            {"source": 1, "target": 3},
            {"source": 2, "target": 6},
            {"source": 5, "target": 6},
            {"source": 6, "target": 4},
        ],
    }
    pairs = {p.sink.identifier: [i.identifier for i in p.inputs] for p in sink_inputs(plan)}
    assert pairs == {
        "default_catalog.default_database.x": ["default_catalog.default_database.a"],
        "default_catalog.default_database.y": [
            "default_catalog.default_database.b",
            "default_catalog.default_database.c",
        ],
    }


def test_lookup_tables_inside_a_join_node_count_and_suffixes_are_ignored():
    join = {
        "id": 2,
        "type": "stream-exec-lookup-join_3",
        "temporalTable": {"lookupTableSource": {"table": table("dim")}},
    }
    plan = {
        "nodes": [
            scan(1, "facts", {}, type_="stream-exec-table-source-scan_2"),
            join,
            sink(3, "out", "stream-exec-sink_2"),
        ],
        "edges": [{"source": 1, "target": 2}, {"source": 2, "target": 3}],
    }
    (pairing,) = sink_inputs(plan)
    assert [(i.identifier, i.node_type) for i in pairing.inputs] == [
        ("default_catalog.default_database.facts", "stream-exec-table-source-scan"),
        ("default_catalog.default_database.dim", "stream-exec-lookup-join"),
    ]


def test_two_inserts_into_one_table_are_one_sink_and_shared_sources_are_not_repeated():
    plan = {
        "nodes": [scan(1, "a", {}), sink(2, "x"), scan(3, "a", {}), scan(4, "b", {}), sink(5, "x")],
        "edges": [{"source": 1, "target": 2}, {"source": 3, "target": 5}, {"source": 4, "target": 5}],
    }
    (pairing,) = sink_inputs(plan)
    assert [i.identifier.rsplit(".", 1)[1] for i in pairing.inputs] == ["a", "b"]


def test_sink_fed_by_constants_has_no_inputs():
    plan = {"nodes": [{"id": 1, "type": "stream-exec-values_1"}, sink(2, "x")], "edges": [{"source": 1, "target": 2}]}
    (pairing,) = sink_inputs(plan)
    assert pairing.inputs == []


def test_a_sink_table_is_not_its_own_input():
    assert embedded_tables(sink(1, "x")) == []


def test_effective_options_undo_the_stand_in_and_apply_hints_to_temporary_tables():
    permanent = sink_inputs(
        {
            "nodes": [
                scan(
                    1,
                    "a",
                    {
                        "connector": "planlineage-standin",
                        "planlineage.connector": "kafka",
                        "planlineage.changelog-mode": "insert",
                        "topic": "t",
                    },
                ),
                sink(2, "x"),
            ],
            "edges": [{"source": 1, "target": 2}],
        }
    )[0].inputs[0]
    assert effective_options(permanent, None) == {"connector": "kafka", "topic": "t"}
    temporary = sink_inputs(
        {
            "nodes": [
                scan(
                    1,
                    "a",
                    None,
                    description="TableSourceScan(table=[[c, d, a]], fields=[x], "
                    "hints=[[[OPTIONS options:{topic=hinted, properties.group.id=g}]]])",
                ),
                sink(2, "x"),
            ],
            "edges": [{"source": 1, "target": 2}],
        }
    )[0].inputs[0]
    assert effective_options(temporary, {"connector": "kafka", "topic": "declared", "format": "json"}) == {
        "connector": "kafka",
        "topic": "hinted",
        "format": "json",
        "properties.group.id": "g",
    }


def test_hint_values_with_commas_stay_whole():
    assert hint_options("x, hints=[[[OPTIONS options:{a=1, 2, b.c-d=3}]]]") == {"a": "1, 2", "b.c-d": "3"}
    assert hint_options("x, hints=[[[OPTIONS inheritPath:[0] options:{k=v}]]]") == {"k": "v"}
    assert hint_options("TableSourceScan(table=[[c, d, a]], fields=[x])") == {}


def test_identifiers_are_unquoted():
    assert unquote_identifier("`cat`.`my.db`.`we``ird`") == "cat.my.db.we`ird"
    assert node_kind({"type": "batch-exec-sink_2"}) == "batch-exec-sink"


def test_the_plan_is_a_networkx_graph_whose_independent_inserts_are_separate_components():
    import networkx as nx

    from planlineage.planner.walk import plan_graph, topological_order

    plan = {
        "nodes": [scan(1, "a", {}), scan(2, "b", {}), sink(3, "x"), sink(4, "y"), scan(5, "a", {}), sink(6, "z")],
        "edges": [
            {"source": 1, "target": 3},
            {"source": 2, "target": 4},
            {"source": 5, "target": 6},
            {"source": 5, "target": 6},  # read twice (a self-join): one dependency
        ],
    }
    graph = plan_graph(plan)
    assert isinstance(graph, nx.DiGraph)
    assert sorted(sorted(c) for c in nx.weakly_connected_components(graph)) == [[1, 3], [2, 4], [5, 6]]
    assert nx.ancestors(graph, 4) == {2}
    # inputs first, generation by generation, plan order within one
    assert topological_order(graph) == [1, 2, 5, 3, 4, 6]


def test_a_plan_whose_edges_name_no_node_or_form_a_cycle_is_refused():
    import pytest

    from planlineage.planner.walk import plan_graph, topological_order

    with pytest.raises(ValueError, match="names a node the plan does not have"):
        plan_graph({"nodes": [scan(1, "a", {})], "edges": [{"source": 1, "target": 9}]})
    looped = plan_graph(
        {"nodes": [scan(1, "a", {}), sink(2, "x")], "edges": [{"source": 1, "target": 2}, {"source": 2, "target": 1}]}
    )
    with pytest.raises(ValueError, match="cycle"):
        topological_order(looped)
