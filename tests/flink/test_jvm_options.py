"""The planner JVM's flags: a JVM that compiles many jobs compiles methods earlier than a one-job
JVM, on Linux both ask for transparent huge pages, and Flink logs through Log4j's simple logger
(docs/performance.md, from-cold backfill)."""

import pytest
from marked_jvms import command_line

from planlineage.pipeline import extract
from planlineage.planner import compiler
from planlineage.planner.compiler import Planner
from planlineage.planner.warm import SelfHealingPlanner

SCRIPT = (
    "CREATE TABLE src (a INT, b STRING) WITH ('connector' = 'datagen');\n"
    "CREATE TABLE snk (a INT, n BIGINT) WITH ('connector' = 'blackhole');\n"
    "INSERT INTO snk SELECT a, COUNT(b) FROM src GROUP BY a;\n"
)
EARLY_COMPILES = "-XX:CompileThresholdScaling=0.25"
HUGE_PAGES = "-XX:+UseTransparentHugePages"
SIMPLE_LOGGER = "-Dlog4j2.loggerContextFactory=org.apache.logging.log4j.simple.SimpleLoggerContextFactory"


def test_a_one_job_jvm_keeps_the_default_compile_thresholds(provisioned):
    log_before = provisioned.log.stat().st_size if provisioned.log.exists() else 0
    with Planner(provisioned) as planner:
        flags = command_line(planner.pid)
        assert EARLY_COMPILES not in flags
        assert HUGE_PAGES in flags and SIMPLE_LOGGER in flags
        (sink,) = extract(SCRIPT, planner=planner).sinks
        assert [source.table for source in sink.inputs] == ["default_catalog.default_database.src"]
    with provisioned.log.open("rb") as log:
        log.seek(log_before)
        written = log.read().decode(errors="replace")
    # Neither Log4j (a logger it could not make) nor the JVM (a flag it refused) complained.
    assert "log4j" not in written.lower() and "slf4j" not in written.lower()
    assert "Unrecognized VM option" not in written


@pytest.mark.parametrize("shape", ["long_lived", "threads"])
def test_a_jvm_for_many_jobs_compiles_earlier_and_answers_the_same(provisioned, shape):
    options = {"long_lived": True} if shape == "long_lived" else {"threads": 2}
    with Planner(provisioned, **options) as planner:
        flags = command_line(planner.pid)
        assert flags.count(EARLY_COMPILES) == 1
        assert HUGE_PAGES in flags
        lineage = extract(SCRIPT, planner=planner)
    with Planner(provisioned) as one_job:
        assert extract(SCRIPT, planner=one_job).to_json_dict() == lineage.to_json_dict()


def test_the_backfill_planner_is_a_many_jobs_jvm(provisioned):
    planner = SelfHealingPlanner(provisioned, threads=2)
    try:
        assert EARLY_COMPILES in command_line(planner.start())
    finally:
        planner.close()


def test_huge_pages_are_asked_for_on_linux_only():
    assert HUGE_PAGES not in compiler.java_options_of_this_platform("darwin")
    assert compiler.java_options_of_this_platform("linux") == [HUGE_PAGES]
