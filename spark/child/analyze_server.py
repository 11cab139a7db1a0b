"""Parses Spark SQL statements with Spark's own parser, inside one Spark version's virtualenv.

Runs as a script with the version venv's python, importing only the standard library and PySpark.
It starts one local SparkSession (master local[1], in-memory catalog, UI off, bound to loopback,
a private empty warehouse): no cluster, no metastore, and no statement is ever executed, so no
data and no database is touched. Each statement goes through the session's `sqlParser().parsePlan`;
the answer carries the logical plan as Spark serialises it (`TreeNode.toJSON`) plus, for the few
nodes whose maps that serialisation drops (the OPTIONS of `CREATE TEMPORARY VIEW … USING`, the
directory of `INSERT OVERWRITE DIRECTORY`), those values read through py4j.

One JSON request per line on stdin, one answer per line on stdout:
Request:  {"id": .., "statements": [{"sql": .., "line": ..}]}
Answer:   {"id": .., "ok": true, "spark_version": "3.5.9",
           "statements": [{"line": .., "class": "InsertIntoStatement", "plan": [...], "extra": {..}}]}
       or {"id": .., "ok": false, "error": {"statement": i, "line": absolute line, "message": Spark's reason}}
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile

_POSITION = re.compile(r"\s*\(line (\d+), pos (\d+)\)\s*$")


def _java_error(error: BaseException):
    """The Java exception behind a py4j or PySpark-converted error (both wrap it)."""
    for attribute in ("java_exception", "_origin"):
        java = getattr(error, attribute, None)
        if java is not None:
            return java
    return None


def _reason(error: BaseException) -> tuple[str, int | None]:
    """Spark's message without the echoed SQL, and the 1-based line inside the statement."""
    java = _java_error(error)
    text = java.getMessage() if java is not None else str(error)
    text = (text or type(error).__name__).split("\n== SQL", 1)[0].strip()
    line = None
    if java is not None:
        try:
            found = java.line()
            line = int(found.get()) if found.isDefined() else None
        except Exception:  # not a ParseException: no position
            line = None
    first = " ".join(part.strip() for part in text.splitlines() if part.strip())
    position = _POSITION.search(first)
    if position:
        line = line or int(position.group(1))
        first = first[: position.start()]
    return first, line


def _scala_map(value) -> dict[str, str]:
    result = {}
    iterator = value.iterator()
    while iterator.hasNext():
        pair = iterator.next()
        result[str(pair._1())] = str(pair._2())
    return result


def _extra(plan) -> dict:
    """The values `toJSON` renders as null: read where the lineage needs them."""
    kind = plan.getClass().getSimpleName()
    if kind == "CreateTempViewUsing":
        return {"options": _scala_map(plan.options())}
    if kind == "InsertIntoDir":
        storage = plan.storage()
        location = storage.locationUri()
        provider = plan.provider()
        return {
            "location": location.get().toString() if location.isDefined() else None,
            "options": _scala_map(storage.properties()),
            "provider": provider.get() if provider.isDefined() else None,
        }
    return {}


class Analyzer:
    def __init__(self, warehouse: str):
        from pyspark.sql import SparkSession

        self.spark = (
            SparkSession.builder.master("local[1]")
            .appName("planlineage-spark-analyzer")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.catalogImplementation", "in-memory")
            .config("spark.sql.warehouse.dir", warehouse)
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.sql.shuffle.partitions", "1")
            .getOrCreate()
        )
        self.spark.sparkContext.setLogLevel("ERROR")
        self.parser = self.spark._jsparkSession.sessionState().sqlParser()
        self.version = self.spark.version

    def analyze(self, request: dict) -> dict:
        described = []
        for index, statement in enumerate(request["statements"]):
            try:
                plan = self.parser.parsePlan(statement["sql"])
            except Exception as error:
                message, inner = _reason(error)
                line = statement["line"] + (inner - 1 if inner else 0)
                return {"ok": False, "error": {"statement": index, "line": line, "message": message}}
            try:
                tree = json.loads(plan.toJSON())
                extra = _extra(plan)
            except Exception as error:  # a node Spark cannot serialise: say which
                message, _ = _reason(error)
                return {
                    "ok": False,
                    "error": {
                        "statement": index,
                        "line": statement["line"],
                        "message": f"Spark could not describe the parsed plan: {message}",
                    },
                }
            described.append(
                {"line": statement["line"], "class": plan.getClass().getSimpleName(), "plan": tree, "extra": extra}
            )
        return {"ok": True, "spark_version": self.version, "statements": described}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--java-option", action="append", default=[])
    args = parser.parse_args()
    if args.java_option:
        os.environ["PYSPARK_SUBMIT_ARGS"] = (
            f"--driver-memory 512m --driver-java-options '{' '.join(args.java_option)}' pyspark-shell"
        )
    out = sys.stdout
    # PySpark's launcher and the JVM print to stdout; the protocol owns it, so they get stderr.
    sys.stdout = sys.stderr
    with tempfile.TemporaryDirectory(prefix="planlineage-spark-") as warehouse:
        analyzer = Analyzer(os.path.join(warehouse, "warehouse"))
        print(json.dumps({"ready": True, "spark_version": analyzer.version}), file=out, flush=True)
        for line in sys.stdin:
            if not line.strip():
                continue
            request = json.loads(line)
            try:
                answer = analyzer.analyze(request)
            except Exception as error:  # a broken JVM connection: answer, then let the parent decide
                answer = {"ok": False, "error": {"statement": None, "line": None, "message": _reason(error)[0]}}
            answer["id"] = request.get("id")
            print(json.dumps(answer), file=out, flush=True)
        analyzer.spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
