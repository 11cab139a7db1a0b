"""Regression over real plans of every supported Flink version (see tests/fixtures/generate.py)."""

import json
from pathlib import Path

import pytest
from fixture_cases import lacks, param

from planlineage.flink_versions import supported
from planlineage.planner.walk import effective_options, node_kind, sink_inputs

FIXTURES = Path(__file__).parent.parent / "fixtures"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text())["cases"]
D = "default_catalog.default_database."


def all_plans():
    for minor in supported():
        for case in sorted(EXPECTED):
            yield param(minor, case)


def load(minor, case):
    return json.loads((FIXTURES / "plans" / minor / f"{case}.json").read_text())


def pairing(record):
    return {p.sink.identifier: [i.identifier for i in p.inputs] for p in sink_inputs(record["plan"])}


def options_of(record):
    tables = record["tables"]
    result = {}
    for p in sink_inputs(record["plan"]):
        for use in [p.sink, *p.inputs]:
            result[use.identifier] = effective_options(use, (tables.get(use.identifier) or {}).get("options"))
    return result


def test_every_version_has_every_case():
    for minor, flink in supported().items():
        for case in EXPECTED:
            if lacks(minor, case):
                assert not (FIXTURES / "plans" / minor / f"{case}.json").exists()
                continue
            record = load(minor, case)
            assert record["flink_version"] == flink.version


@pytest.mark.parametrize("minor,case", all_plans())
def test_sink_pairing_is_the_same_on_every_version(minor, case):
    assert pairing(load(minor, case)) == EXPECTED[case]


@pytest.mark.parametrize("minor", list(supported()))
def test_real_connectors_not_the_stand_in(minor):
    options = options_of(load(minor, "statement_set"))
    assert {t: o["connector"] for t, o in options.items()} == {
        D + "out_a": "kafka",
        D + "orders": "kafka",
        D + "out_b": "jdbc",
        D + "refunds": "kafka",
        D + "out_s": "print",
        D + "customers": "jdbc",
    }
    assert not any(k.startswith("planlineage.") for o in options.values() for k in o)


@pytest.mark.parametrize("minor", list(supported()))
def test_hints_win_for_permanent_and_temporary_tables(minor):
    options = options_of(load(minor, "hints_and_temporary"))
    assert options[D + "tmp_src"]["topic"] == "tmp-hinted"
    assert options[D + "orders"]["topic"] == "orders-hinted"
    assert options[D + "out_a"]["topic"] == "out-hinted"


@pytest.mark.parametrize("minor", list(supported()))
def test_batch_cases_are_batch_and_compiled_natively_where_the_version_can(minor):
    record = load(minor, "batch")
    assert record["runtime_mode"] == "batch"
    # node_kind: Flink 1.15-1.17 write the streaming Sort with type `null_null` (read by its description)
    types = {node_kind(n) for n in record["plan"]["nodes"]}
    if supported()[minor].batch_compiled_plan:
        assert any(t.startswith("batch-exec-") for t in types)
    else:
        assert all(t.startswith("stream-exec-") for t in types)
