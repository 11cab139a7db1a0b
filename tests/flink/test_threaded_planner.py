"""One JVM compiling several jobs at once (`--threads`, what a backfill uses): every answer reaches
the job that asked, jobs running side by side see nothing of each other, and the lineage is the
same as one job at a time; plus the training scripts every new planner compiles."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from planlineage.pipeline import ExtractError, extract
from planlineage.planner.compiler import Planner
from planlineage.planner.warm import SelfHealingPlanner
from planlineage.planner.warm_up import TRAINING_SCRIPTS, training_requests

D = "default_catalog.default_database."


def job(i: int) -> str:
    """Job i declares its own source and sink and reads the source under a name every job uses."""
    return (
        f"CREATE TABLE src_{i} (a INT, b STRING) WITH ('connector' = 'datagen');"
        f"CREATE TEMPORARY VIEW shared_name AS SELECT a, b FROM src_{i};"
        f"CREATE TABLE out_{i} (a INT, n BIGINT) WITH ('connector' = 'blackhole');"
        f"INSERT INTO out_{i} SELECT a, COUNT(b) FROM shared_name GROUP BY a;"
    )


@pytest.fixture(scope="module")
def threaded(provisioned):
    with Planner(provisioned, long_lived=True, threads=2) as running:
        yield running


def pairs(lineage) -> list[tuple[str, list[str]]]:
    return [(s.table, sorted(i.table for i in s.inputs)) for s in lineage.sinks]


def test_jobs_sent_at_once_each_get_their_own_answer(threaded):
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda i: extract(job(i), planner=threaded), range(16)))
    for i, lineage in enumerate(results):
        # Each job's view resolved to its own source, whatever ran beside it.
        assert pairs(lineage) == [(f"{D}out_{i}", [f"{D}src_{i}"])]


def test_jobs_running_side_by_side_see_nothing_of_each_other(threaded):
    def undeclared(i: int):
        # src_0 exists only while another job that declares it runs, never in this one.
        script = f"CREATE TABLE o_{i} (a INT) WITH ('connector' = 'blackhole'); INSERT INTO o_{i} SELECT a FROM src_0;"
        try:
            return extract(script, planner=threaded)
        except ExtractError as error:
            return error

    with ThreadPoolExecutor(4) as pool:
        declaring = [pool.submit(extract, job(0), planner=threaded) for _ in range(6)]
        reading = [pool.submit(undeclared, i) for i in range(6)]
        assert all(pairs(f.result()) == [(f"{D}out_0", [f"{D}src_0"])] for f in declaring)
        for future in reading:
            assert isinstance(future.result(), ExtractError) and "src_0" in str(future.result())


def test_a_shared_self_healing_planner_answers_every_thread(provisioned):
    healing = SelfHealingPlanner(provisioned, threads=2)
    try:
        with ThreadPoolExecutor(3) as pool:
            results = list(pool.map(lambda i: extract(job(i), planner=healing), range(9)))
        assert [pairs(r) for r in results] == [[(f"{D}out_{i}", [f"{D}src_{i}"])] for i in range(9)]
        assert healing.generation == 1 and healing.jobs == 9  # one JVM served them all
    finally:
        healing.close()
    assert healing.planner_pid is None


def test_the_training_scripts_compile(provisioned, threaded):
    requests = training_requests(provisioned)
    assert len(requests) == len(TRAINING_SCRIPTS)
    for request, script in zip(requests, TRAINING_SCRIPTS):
        answer = threaded.compile(request)
        assert answer["ok"], (script, answer.get("error"))
        assert answer["plan"]["nodes"], script


def test_tables_named_with_dots_and_backticks_are_described(planner):
    # The answer describes each table the plan names, read back from the plan's quoted identifier.
    script = (
        "CREATE TABLE `src.with``tick` (a INT) WITH ('connector' = 'kafka', 'topic' = 'dotted', "
        "'properties.bootstrap.servers' = 'k:9092', 'format' = 'json');"
        "CREATE TABLE `out``put.v1` (a INT) WITH ('connector' = 'blackhole');"
        "INSERT INTO `out``put.v1` SELECT a FROM `src.with``tick`;"
    )
    lineage = extract(script, planner=planner)
    (sink,) = lineage.sinks
    assert sink.table == f"{D}out`put.v1" and sink.connector == "blackhole"
    (source,) = sink.inputs
    assert source.table == f"{D}src.with`tick" and source.connector == "kafka"
    assert [(d.namespace, d.name) for d in source.datasets] == [("kafka://k:9092", "dotted")]
