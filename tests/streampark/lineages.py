"""The scripts the recorded planner answers, and helpers to read what the server received."""

from __future__ import annotations

from collections import defaultdict

from recorded_planner import case_sql

#: Scripts of StreamPark apps the recorded planner (tests/lifecycle/recorded_planner.py) compiles
#: to real recorded plans: one sink (out_a <- orders, refunds: the union_all fixture case), three
#: sinks in a STATEMENT SET (the statement_set case), and a script Flink's parser refuses.
ONE_SINK = case_sql("union_all")
THREE_SINKS = case_sql("statement_set")
BROKEN = case_sql("union_all").rsplit("INSERT", 1)[0] + "INSERT INTO out_a SELEC order_id FROM orders;\n"
PARSE_ERROR = 'SQL parse failed. Encountered "order_id" at line 1, column 25.'


def timeline(server, job: str) -> list[tuple[str, str]]:
    """``(runId, eventType)`` of one OpenLineage job, in arrival order."""
    return [(e["run"]["runId"], e["eventType"]) for e in server.events if e["job"]["name"] == job]


def types(server, job: str) -> list[str]:
    return [t for _, t in timeline(server, job)]


def datasets(server, job: str) -> set[tuple[tuple[str, ...], tuple[str, ...]]]:
    """The distinct ``(inputs, outputs)`` dataset names the job's events carried."""
    return {
        (
            tuple(sorted(d["name"] for d in e.get("inputs") or [])),
            tuple(sorted(d["name"] for d in e.get("outputs") or [])),
        )
        for e in server.events
        if e["job"]["name"] == job
    }


def exactly_once(server) -> None:
    counts = server.keys()
    repeated = {k: n for k, n in counts.items() if n != 1}
    assert not repeated, f"delivered more than once: {repeated}"


def jobs(server) -> dict[str, list[str]]:
    found = defaultdict(list)
    for e in server.events:
        found[e["job"]["name"]].append(e["eventType"])
    return dict(found)


#: A Spark SQL script with two targets (per-target pairing), literal paths; tests/streampark's
#: Spark tests compile it with Spark's own parser (tox envs spark35, spark40).
NIGHTLY = """
CREATE TEMPORARY VIEW orders_src USING jdbc
OPTIONS (url 'jdbc:postgresql://pg.prod:5432/shop', dbtable 'public.orders', user 'etl', password 'FAKE-pg-pw');
CREATE TEMPORARY VIEW clicks USING parquet OPTIONS (path 's3a://lake/raw/clicks/');
CREATE TABLE reporting.daily (id BIGINT, n BIGINT) USING parquet LOCATION 's3a://lake/reporting/daily';
CREATE TEMPORARY VIEW crm_out USING jdbc OPTIONS (url 'jdbc:mysql://mysql.prod:3306/crm', dbtable 'crm.accounts');
INSERT INTO reporting.daily SELECT o.id, count(*) FROM orders_src o JOIN clicks c ON c.order_id = o.id GROUP BY o.id;
INSERT INTO crm_out SELECT id, name FROM csv.`hdfs://nn:8020/in/accounts.csv`;
"""


def named_datasets(server, job: str) -> set[tuple[tuple[str, ...], tuple[str, ...]]]:
    """The distinct ``(inputs, outputs)`` as ``namespace name`` the job's events carried."""
    return {
        (
            tuple(sorted(f"{d['namespace']} {d['name']}" for d in e.get("inputs") or [])),
            tuple(sorted(f"{d['namespace']} {d['name']}" for d in e.get("outputs") or [])),
        )
        for e in server.events
        if e["job"]["name"] == job
    }


def wait_for(predicate, timeout: float = 30.0, what: str = "condition") -> None:
    """Polls ``predicate`` every 0.1 s until it holds; fails naming ``what`` after ``timeout``."""
    import time

    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)
