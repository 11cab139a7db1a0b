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


def spark_two_targets() -> JobLineage:
    """A Spark SQL script with two targets, named as openlineage-spark names them (what
    planlineage.spark answers for tests/streampark/test_spark_live.py's NIGHTLY script)."""
    return JobLineage(
        spark_version="3.5.9",
        runtime_mode="batch",
        sinks=[
            SinkLineage(
                table="spark_catalog.reporting.daily",
                connector="parquet",
                datasets=[Dataset(namespace="s3://lake", name="reporting/daily")],
                inputs=[
                    TableLineage(
                        table="orders_src",
                        connector="jdbc",
                        datasets=[Dataset(namespace="postgres://pg.prod:5432", name="shop.public.orders")],
                    ),
                    TableLineage(
                        table="clicks",
                        connector="parquet",
                        datasets=[Dataset(namespace="s3://lake", name="raw/clicks")],
                    ),
                ],
            ),
            SinkLineage(
                table="crm_out",
                connector="jdbc",
                datasets=[Dataset(namespace="mysql://mysql.prod:3306", name="crm.accounts")],
                inputs=[
                    TableLineage(
                        table="csv.`hdfs://nn:8020/in/accounts.csv`",
                        connector="csv",
                        datasets=[Dataset(namespace="hdfs://nn:8020", name="/in/accounts.csv")],
                    )
                ],
            ),
        ],
    )


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
