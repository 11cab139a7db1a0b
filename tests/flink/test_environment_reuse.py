"""A long-lived planner reuses a job's TableEnvironment for the next job only after resetting it to
be as fresh as a new one: nothing job A declares, sets or loads is visible to job B."""

import pytest
from fixture_cases import before

from planlineage import script as sql_script
from planlineage.pipeline import ExtractError, extract
from planlineage.planner.compiler import Planner
from planlineage.planner.request import build_request

D = "default_catalog.default_database."
FILES = "'connector' = 'filesystem', 'path' = '/nonexistent/leak', 'format' = 'json'"  # a source and a sink
PLAIN = (
    "CREATE TABLE s (a INT) WITH ('connector' = 'datagen');"
    "CREATE TABLE o (a INT NOT NULL) WITH ('connector' = 'blackhole');"
    "INSERT INTO o SELECT COALESCE(a, 0) FROM s;"
)


@pytest.fixture(scope="module")
def planner(provisioned):
    with Planner(provisioned, long_lived=True) as running:  # long-lived: environments are reused
        yield running


def answer(planner, script):
    request = build_request(sql_script.split(script), planner.provisioned, [])[0]
    return planner.compile(request)


def reads_from(planner, table):
    """A job that compiles only if `table` is visible to it."""
    return extract(
        f"CREATE TABLE sink_b (a INT) WITH ('connector' = 'blackhole'); INSERT INTO sink_b SELECT a FROM {table};",
        planner=planner,
    )


def test_plain_jobs_reuse_the_environment(planner):
    answer(planner, PLAIN)
    assert answer(planner, PLAIN)["reused_environment"] is True


@pytest.mark.parametrize(
    "declared, table",
    [
        (f"CREATE TEMPORARY TABLE leak (a INT) WITH ({FILES});", "leak"),
        (f"CREATE TABLE leak (a INT) WITH ({FILES});", "leak"),
        ("CREATE TEMPORARY VIEW leak AS SELECT a FROM s;", "leak"),
        ("CREATE VIEW leak AS SELECT a FROM s;", "leak"),
        (f"CREATE TABLE leak WITH ({FILES}) AS SELECT a FROM s;", "leak"),
        (
            "CREATE CATALOG leakcat WITH ('type' = 'generic_in_memory');"
            f"CREATE TABLE leakcat.`default`.t (a INT) WITH ({FILES});",
            "leakcat.`default`.t",
        ),
        (f"CREATE DATABASE leakdb; CREATE TABLE leakdb.t (a INT) WITH ({FILES});", "leakdb.t"),
    ],
)
def test_what_a_job_declares_is_not_visible_to_the_next(planner, provisioned, declared, table):
    if ") AS SELECT" in declared and before(provisioned.flink.minor, "1.16"):
        pytest.skip("CREATE TABLE AS SELECT exists from Flink 1.16")
    job_a = (
        PLAIN
        + declared
        + f"CREATE TABLE sink_a (a INT) WITH ('connector' = 'blackhole'); INSERT INTO sink_a SELECT a FROM {table};"
    )
    assert D + "sink_a" in [s.table for s in extract(job_a, planner=planner).sinks]  # A saw it
    with pytest.raises(ExtractError) as raised:
        reads_from(planner, table)
    assert "not found" in str(raised.value) or "does not exist" in str(raised.value)
    answer(planner, PLAIN)
    assert answer(planner, PLAIN)["reused_environment"] is True  # the pool keeps working afterwards


def test_a_function_of_one_job_is_not_visible_to_the_next(planner):
    extract(
        PLAIN + "CREATE TEMPORARY SYSTEM FUNCTION leakf AS 'com.acme.Missing';"
        "CREATE TABLE sink_a (a STRING) WITH ('connector' = 'blackhole'); INSERT INTO sink_a SELECT leakf(a) FROM s;",
        planner=planner,
    )
    with pytest.raises(ExtractError) as raised:
        extract(
            PLAIN
            + "CREATE TABLE sink_b (a STRING) WITH ('connector' = 'blackhole'); INSERT INTO sink_b SELECT leakf(a) FROM s;",
            planner=planner,
        )
    assert "leakf" in str(raised.value)


def sink_enforcer(plan: dict) -> str | None:
    """The NOT NULL enforcement the sink was planned with (its ExecNode's recorded configuration)."""
    for node in plan["nodes"]:
        found = (node.get("configuration") or {}).get("table.exec.sink.not-null-enforcer")
        if found:
            return found
    return None


def test_a_set_of_one_job_is_not_visible_to_the_next(planner):
    first = answer(planner, "SET 'table.exec.sink.not-null-enforcer' = 'DROP';" + PLAIN)
    assert first["ok"] and sink_enforcer(first["plan"]) == "DROP"
    second = answer(planner, PLAIN)
    assert sink_enforcer(second["plan"]) == "ERROR"
    # compilePlan copies a job's options where no reset reaches, so a SET retires the environment.
    assert second["reused_environment"] is False
    assert answer(planner, "RESET 'table.exec.sink.not-null-enforcer';" + PLAIN)["ok"]
    assert answer(planner, PLAIN)["reused_environment"] is False


def test_use_of_another_database_does_not_carry_over(planner):
    extract("CREATE DATABASE other; USE other;" + PLAIN, planner=planner)
    lineage = extract(PLAIN, planner=planner)
    assert [s.table for s in lineage.sinks] == [D + "o"]


def test_a_failed_job_leaves_no_environment_behind(planner):
    assert not answer(planner, PLAIN + "INSERT INTO o SELECT nope FROM s;")["ok"]
    assert answer(planner, PLAIN)["reused_environment"] is False


def test_batch_and_streaming_jobs_do_not_share_an_environment(planner):
    answer(planner, PLAIN)
    batch = answer(
        planner,
        "SET 'execution.runtime-mode' = 'batch';" + PLAIN.replace("'datagen'", "'datagen', 'number-of-rows' = '1'"),
    )
    assert batch["ok"] and batch["reused_environment"] is False  # its own (batch) environment
    assert answer(planner, PLAIN)["reused_environment"] is False  # and the batch one is not the next streaming one
