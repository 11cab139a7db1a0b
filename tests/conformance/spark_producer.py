"""Runs Spark SQL cases for real with the OpenLineage Spark listener: the producer planlineage
must name datasets like. Executed by the Spark version's own python (its venv has PySpark).

stdin: one JSON object ``{"jars": [...], "cases": [{"name", "statements", "conf", "events"}]}``.
Each case gets a SparkContext of its own in the one JVM (application name = the case's name,
so job names do not mix), the listener with its file transport writing to the case's ``events``
file (a case without ``events`` names its transport in its conf: the http transport to a
backend), and the case's conf (warehouse dir, ...). The statements are executed, data included, on
local files and loopback databases only. One JSON line per case on stdout: ``{"name", "error"}``.
"""

import json
import sys

from pyspark.sql import SparkSession

LISTENER = "io.openlineage.spark.agent.OpenLineageSparkListener"


def run_case(jars: list[str], case: dict) -> str | None:
    builder = (
        SparkSession.builder.master("local[1]")
        .appName(case["name"])
        # The driver's class path, not spark.jars: JDBC's DriverManager and the listener's
        # connector visitors see only classes of the JVM's own loader (openlineage-spark says so).
        .config("spark.driver.extraClassPath", ":".join(jars))
        .config("spark.extraListeners", LISTENER)
        .config("spark.openlineage.namespace", "conformance")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "1")
    )
    if "events" in case:
        builder = builder.config("spark.openlineage.transport.type", "file")
        builder = builder.config("spark.openlineage.transport.location", case["events"])
    for key, value in case.get("conf", {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    error = None
    try:
        for statement in case["statements"]:
            spark.sql(statement).collect()
    except Exception as failure:  # the case's own SQL failed: said, and the next case runs
        java = getattr(failure, "java_exception", None)  # py4j: the JVM's own message says why
        error = (str(java) if java is not None else str(failure)).splitlines()[0][:500]
    finally:
        # Every event of the case is written before its context goes: the listener bus drains.
        spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(60_000)
        spark.stop()
        SparkSession._instantiatedSession = None
        SparkSession._activeSession = None
    return error


def main() -> None:
    request = json.load(sys.stdin)
    for case in request["cases"]:
        error = run_case(request["jars"], case)
        print(json.dumps({"name": case["name"], "error": error}), flush=True)


if __name__ == "__main__":
    main()
