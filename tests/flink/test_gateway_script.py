"""A SQL Gateway session's statements, as ``planlineage gateway`` builds its job's script
(planlineage.gateway.job_script), compiled by the real planner of the version under test: the
opening properties as SETs, SET/RESET, USE CATALOG/USE, LOAD MODULE, views and functions, the SQL
client's BEGIN STATEMENT SET block, with the reads and an earlier job's INSERT left out."""

from __future__ import annotations

from planlineage.gateway.job_script import build
from planlineage.pipeline import extract

TABLES = [
    "CREATE TABLE orders (id BIGINT, amount DOUBLE) WITH ('connector' = 'kafka', 'topic' = 'orders', "
    "'properties.bootstrap.servers' = 'k1:9092', 'format' = 'json')",
    "CREATE TABLE big (id BIGINT, amount DOUBLE) WITH ('connector' = 'kafka', 'topic' = 'big', "
    "'properties.bootstrap.servers' = 'k1:9092', 'format' = 'json')",
    "CREATE TABLE small (id BIGINT, amount DOUBLE) WITH ('connector' = 'jdbc', "
    "'url' = 'jdbc:postgresql://pg:5432/dw', 'table-name' = 'public.small')",
]


def outputs(lineage) -> dict[str, list[str]]:
    return {sink.table: sorted(d.name for d in sink.datasets) for sink in lineage.sinks}


def test_a_sessions_statement_set_compiles_with_its_session_and_without_its_reads(planner):
    session = [
        "SET 'table.local-time-zone' = 'UTC'",
        "USE CATALOG default_catalog",
        "CREATE DATABASE IF NOT EXISTS lake",
        "USE lake",
        *TABLES,
        "SELECT * FROM orders",  # a query's own job: never compiled with this one
        "SHOW TABLES",
        "INSERT INTO small SELECT id, amount FROM orders",  # an earlier job
        "CREATE TEMPORARY VIEW positive AS SELECT id, amount FROM orders WHERE amount > 0",
        "LOAD MODULE core",
        "RESET 'table.local-time-zone'",
        "BEGIN STATEMENT SET",
        "INSERT INTO big SELECT id, amount FROM positive WHERE amount > 100",
        "INSERT INTO small SELECT id, amount FROM positive WHERE amount <= 100",
        "END",
    ]
    job = build(session, {"execution.runtime-mode": "streaming", "pipeline.name": "split orders"})
    lineage = extract(job.sql, planner=planner)
    assert outputs(lineage) == {
        "default_catalog.lake.big": ["big"],
        "default_catalog.lake.small": ["dw.public.small"],
    }
    assert {i.table for sink in lineage.sinks for i in sink.inputs} == {"default_catalog.lake.orders"}
    assert job.job_name == "split orders"


def test_an_insert_in_batch_mode_from_the_sessions_properties(planner):
    session = [*TABLES, "EXPLAIN PLAN FOR SELECT * FROM orders", "INSERT INTO small SELECT id, amount FROM orders"]
    job = build(session, {"execution.runtime-mode": "batch"})
    lineage = extract(job.sql, planner=planner)
    assert lineage.runtime_mode == "batch"
    assert outputs(lineage) == {"default_catalog.default_database.small": ["dw.public.small"]}
    assert job.job_name == "insert-into_default_catalog.default_database.small"
