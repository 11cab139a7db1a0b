"""A gateway session's recorded statements → the script compiled for the job its last one submitted
(planlineage.gateway.job_script): what is kept, what is left out, the job's Flink name."""

from __future__ import annotations

import pytest

from planlineage import script
from planlineage.gateway.job_script import NotReportable, build, quoted_set

SOURCE = "CREATE TABLE src (a INT) WITH ('connector' = 'datagen')"
SINK = "CREATE TABLE snk (a INT) WITH ('connector' = 'blackhole')"
OTHER = "CREATE TABLE other (a INT) WITH ('connector' = 'blackhole')"


def statements_of(sql: str) -> list[str]:
    """The built script read back by the one splitter: each statement's text."""
    return [s.sql for s in script.split(sql)]


def test_an_insert_keeps_what_shapes_the_session_and_drops_what_only_reads_or_ran_other_jobs():
    job = build(
        [
            "SET 'parallelism.default' = '2'",
            SOURCE,
            SINK,
            OTHER,
            "SELECT * FROM src",
            "SHOW TABLES",
            "DESCRIBE src",
            "EXPLAIN PLAN FOR SELECT * FROM src",
            "INSERT INTO other SELECT a FROM src",  # an earlier job: not this one's sink
            "CREATE TEMPORARY FUNCTION f AS 'com.example.F'",
            "CREATE VIEW v AS SELECT a FROM src",
            "LOAD MODULE core",
            "INSERT INTO snk SELECT a FROM v",
        ],
        {"execution.runtime-mode": "streaming"},
    )
    assert statements_of(job.sql) == [
        "SET 'execution.runtime-mode' = 'streaming'",  # the opening properties first
        "SET 'parallelism.default' = '2'",
        SOURCE,
        SINK,
        OTHER,
        "CREATE TEMPORARY FUNCTION f AS 'com.example.F'",
        "CREATE VIEW v AS SELECT a FROM src",
        "LOAD MODULE core",
        "INSERT INTO snk SELECT a FROM v",
    ]
    assert job.conf == {"execution.runtime-mode": "streaming", "parallelism.default": "2"}


def test_the_job_name_is_pipeline_name_as_the_session_left_it_else_flinks_insert_into_name():
    opened = {"pipeline.name": "nightly"}
    assert build([SINK, "INSERT INTO snk SELECT 1"], opened).job_name == "nightly"
    assert build(["SET 'pipeline.name' = 'mine'", "INSERT INTO snk SELECT 1"], opened).job_name == "mine"
    # RESET takes a key back to the session's opening value; RESET alone every key.
    reset = build(["SET 'pipeline.name' = 'mine'", "RESET 'pipeline.name'", "INSERT INTO snk SELECT 1"], opened)
    assert reset.job_name == "nightly"
    assert build(["SET pipeline.name = mine", "RESET", "INSERT INTO snk SELECT 1"]).job_name == (
        "insert-into_default_catalog.default_database.snk"
    )
    # Flink's own name: the sink's full identifier, under the catalog and database USE chose.
    used = build(["USE CATALOG cat", "USE db2", "INSERT INTO `snk` SELECT 1"])
    assert used.job_name == "insert-into_cat.db2.snk"
    assert build(["USE c3.d3", "INSERT INTO other_db.t SELECT 1"]).job_name == "insert-into_c3.other_db.t"
    assert build(["EXECUTE INSERT INTO x.y.z SELECT 1"]).job_name == "insert-into_x.y.z"


def test_a_statement_set_in_the_sql_clients_syntax_is_the_block_since_begin():
    job = build(
        [
            SOURCE,
            "BEGIN STATEMENT SET",  # an earlier block, an earlier job: left out whole
            "INSERT INTO other SELECT a FROM src",
            "END",
            SINK,
            "BEGIN STATEMENT SET",
            "INSERT INTO snk SELECT a FROM src",
            "INSERT INTO other SELECT a + 1 FROM src",
            "END",
        ]
    )
    assert statements_of(job.sql) == [
        SOURCE,
        SINK,
        "BEGIN STATEMENT SET",
        "INSERT INTO snk SELECT a FROM src",
        "INSERT INTO other SELECT a + 1 FROM src",
        "END",
    ]
    assert [s.kind for s in script.split(job.sql)][-1] is script.Kind.STATEMENT_SET_MARKER
    assert job.job_name == ("insert-into_default_catalog.default_database.snk,default_catalog.default_database.other")


def test_execute_statement_set_is_kept_whole_and_names_every_sink():
    statement_set = (
        "EXECUTE STATEMENT SET BEGIN\nINSERT INTO snk SELECT a FROM src;\nINSERT INTO c.d.other SELECT a FROM src;\nEND"
    )
    job = build([SOURCE, "EXECUTE STATEMENT SET BEGIN INSERT INTO snk SELECT 1; END", SINK, statement_set])
    assert statements_of(job.sql) == [SOURCE, SINK, statement_set]
    assert job.job_name == "insert-into_default_catalog.default_database.snk,c.d.other"


def test_add_jar_goes_to_the_compile_when_readable_and_is_said_when_not(tmp_path):
    jar = tmp_path / "udf.jar"
    jar.write_bytes(b"PK")
    job = build(
        [
            f"ADD JAR '{jar}'",
            "ADD JAR '/nowhere/connector.jar'",
            f"ADD JAR 'file://{tmp_path / 'gone.jar'}'",
            SINK,
            "INSERT INTO snk SELECT 1",
        ]
    )
    assert job.jars == [str(jar)]
    assert "ADD JAR" not in job.sql
    assert len(job.warnings) == 2 and all("not readable here" in w for w in job.warnings)
    removed = build([f"ADD JAR '{jar}'", f"REMOVE JAR '{jar}'", "INSERT INTO snk SELECT 1"])
    assert removed.jars == [] and "JAR" not in removed.sql


def test_a_job_without_a_sink_is_not_reportable():
    with pytest.raises(NotReportable, match="writes no table"):
        build([SOURCE, "SELECT * FROM src"])
    with pytest.raises(NotReportable, match="no BEGIN STATEMENT SET"):
        build(["INSERT INTO snk SELECT 1", "END"])
    with pytest.raises(NotReportable, match="no statement"):
        build([])


def test_create_table_as_submits_its_own_job_and_an_earlier_one_is_left_out():
    job = build([SOURCE, "CREATE TABLE made AS SELECT a FROM src", "CREATE TABLE copy AS SELECT a FROM src"])
    assert statements_of(job.sql) == [SOURCE, "CREATE TABLE copy AS SELECT a FROM src"]
    assert job.job_name == "insert-into_default_catalog.default_database.copy"


def test_properties_become_sets_the_planner_reads_back_exactly():
    value = "it's ; a -- value"
    job = build(["INSERT INTO snk SELECT 1"], {"pipeline.name": value})
    first = script.split(job.sql)[0]
    assert first.kind is script.Kind.SET and first.set_pair == ("pipeline.name", value)
    assert quoted_set("k'", "v") == "SET 'k''' = 'v'"
    assert job.job_name == value


def test_a_v4_script_is_one_entry_whose_sinks_are_the_job_and_whose_other_statements_are_filtered(tmp_path):
    jar = tmp_path / "udf.jar"
    jar.write_bytes(b"PK")
    whole = f"""
        SET 'pipeline.name' = 'scripted';
        ADD JAR '{jar}';
        USE CATALOG cat;
        {SINK};
        SELECT 1;
        SHOW TABLES;
        INSERT INTO snk SELECT 1;
    """
    job = build(["SET 'table.local-time-zone' = 'UTC'", whole])
    assert statements_of(job.sql) == [
        "SET 'table.local-time-zone' = 'UTC'",
        "SET 'pipeline.name' = 'scripted'",
        "USE CATALOG cat",
        SINK,
        "INSERT INTO snk SELECT 1",
    ]
    assert job.jars == [str(jar)]
    assert job.job_name == "scripted" and job.default_name == "insert-into_cat.default_database.snk"


def test_a_statement_quoted_in_a_message_has_its_secret_masked_even_where_it_is_cut():
    # Cut at 80 characters inside the value, the password would escape a masking done afterwards.
    query = "SELECT * FROM orders_of_the_eu_region_xx /*+ OPTIONS('password'='FAKE-hunter2-value') */"
    with pytest.raises(NotReportable) as refused:
        build([query])
    assert "hunter2" not in str(refused.value) and "OPTIONS(" in str(refused.value)
    jar = "ADD JAR '/nowhere/connector.jar?token=abcdefghijklmnopqrstuvwxyz&password=FAKE-hunter2-value&x=1'"
    job = build([jar, "INSERT INTO t SELECT 1"], readable=lambda path, mode: False)
    assert job.warnings and not any("hunter2" in w for w in job.warnings)
