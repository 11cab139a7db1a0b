"""A long-lived planner converts a job's leading CREATE TABLE statements on two threads (the JVM's
ParallelDeclarations): its answers are exactly those of a planner that runs every statement in
turn, for one job of every corpus shape and for every case where converting out of order could
differ (LIKE, errors, SETs first, a failed job before a good one)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from planlineage import script as sql_script
from planlineage.planner.compiler import Planner
from planlineage.planner.request import build_request

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "bench"))

import corpus

SOURCE = (
    "CREATE TABLE a (id BIGINT, amount DOUBLE, ts TIMESTAMP(3), proc AS PROCTIME(), "
    "WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'datagen')"
)
SINK = "CREATE TABLE out_b (id BIGINT, amount DOUBLE) WITH ('connector' = 'blackhole')"
THIRD = "CREATE TABLE c (id BIGINT, label STRING) WITH ('connector' = 'datagen')"
INSERT = "INSERT INTO out_b SELECT a.id, a.amount FROM a JOIN c ON a.id = c.id"

CASES = {
    "plain run": f"{SOURCE}; {SINK}; {THIRD}; {INSERT};",
    "LIKE of a table of the run": (
        f"{SOURCE}; CREATE TABLE a2 WITH ('connector' = 'datagen') LIKE a (EXCLUDING OPTIONS); {SINK}; {THIRD};"
        "INSERT INTO out_b SELECT a2.id, a2.amount FROM a2 JOIN c ON a2.id = c.id;"
    ),
    "LIKE of a later table": f"CREATE TABLE a2 WITH ('connector' = 'datagen') LIKE a; {SOURCE}; {SINK}; {INSERT};",
    "an error in the second table": f"{SOURCE}; CREATE TABLE out_b (id NO_SUCH_TYPE) WITH ('connector' = 'blackhole'); {THIRD}; {INSERT};",
    "an error in the first table": f"CREATE TABLE a (ts TIMESTAMP(3), WATERMARK FOR nope AS nope) WITH ('connector' = 'datagen'); {SINK}; {THIRD}; {INSERT};",
    "a table declared twice": f"{SOURCE}; {SOURCE}; {SINK}; {INSERT};",
    "a table of a catalog not declared": f"CREATE TABLE nocat.db.t (id BIGINT) WITH ('connector' = 'datagen'); {SOURCE}; {SINK}; {INSERT};",
    "SETs first": f"SET 'pipeline.name' = 'p'; SET 'table.local-time-zone' = 'Asia/Shanghai'; {SOURCE}; {SINK}; {THIRD}; {INSERT};",
    "a SET that changes the parser first": f"SET 'table.sql-dialect' = 'hive'; {SOURCE}; {SINK}; {INSERT};",
    "a view after the run": f"{SOURCE}; {SINK}; {THIRD}; CREATE VIEW v AS SELECT id, amount FROM a; INSERT INTO out_b SELECT id, amount FROM v;",
}
SHAPES = {f"corpus {name}": script for name, (script, _) in corpus.generate(len(corpus.SHAPES), seed=11).items()}


@pytest.fixture(scope="module")
def in_turn(provisioned):
    with Planner(provisioned) as running:  # one job at a time, no helper: every statement in turn
        yield running


@pytest.fixture(scope="module")
def helped(provisioned):
    with Planner(provisioned, long_lived=True) as running:
        yield running


def answer(planner, script: str) -> dict:
    request = build_request(sql_script.split(script), planner.provisioned, [])[0]
    found = planner.compile(request)
    found.pop("timings")
    found.pop("reused_environment", None)
    found.pop("converted_alongside", None)
    return without_random_ids(found)


def without_random_ids(value):
    """Batch plans of 1.19+ give each dynamic-filtering source a random UUID at every compile."""
    if isinstance(value, dict):
        return {k: without_random_ids(v) for k, v in value.items() if k != "dynamicFilteringDataListenerID"}
    if isinstance(value, list):
        return [without_random_ids(v) for v in value]
    return value


@pytest.mark.parametrize("script", [*CASES.values(), *SHAPES.values()], ids=[*CASES, *SHAPES])
def test_answers_equal_those_of_statements_in_turn(helped, in_turn, script):
    assert answer(helped, script) == answer(in_turn, script)


def test_the_helper_converts_tables_of_the_run(helped):
    request = build_request(sql_script.split(CASES["plain run"]), helped.provisioned, [])[0]
    # Both threads claim tables as they come: over a few jobs the helper gets some of them.
    assert sum(helped.compile(request)["converted_alongside"] for _ in range(5)) >= 1


def test_out_of_order_errors_are_the_jobs_own(helped):
    found = answer(helped, CASES["an error in the second table"])
    assert found["ok"] is False and found["error"]["statement"] == 1
    assert "NO_SUCH_TYPE" in found["error"]["message"]
    twice = answer(helped, CASES["a table declared twice"])
    assert twice["error"]["statement"] == 1 and "already exists" in twice["error"]["message"]


def test_a_job_after_a_failed_run_compiles_alone(helped):
    """The helper may still be converting a failed job's table: the next job is not disturbed."""
    for _ in range(3):
        assert answer(helped, CASES["an error in the first table"])["ok"] is False
        good = answer(helped, CASES["plain run"])
        assert good["ok"] is True
        assert sorted(good["tables"]) == sorted(f"default_catalog.default_database.{t}" for t in ("a", "c", "out_b"))


def test_nothing_the_helper_converted_is_visible_to_the_next_job(helped):
    answer(helped, CASES["plain run"])
    leak = answer(helped, f"{SINK}; {THIRD}; INSERT INTO out_b SELECT id, amount FROM a;")
    assert leak["ok"] is False and "not found" in leak["error"]["message"]
