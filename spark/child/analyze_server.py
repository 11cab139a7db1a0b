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


#: What a multi-insert (`FROM src INSERT INTO a SELECT … INSERT INTO b SELECT …`) parses into: a
#: Union whose every child is a write of its own.
MULTI_INSERT_WRITES = ("InsertIntoStatement", "InsertIntoDir")


def _children(plan) -> list:
    children = plan.children()
    return [children.apply(i) for i in range(children.size())]


def _is_multi_insert(plan) -> bool:
    children = _children(plan) if plan.getClass().getSimpleName() == "Union" else []
    return bool(children) and all(c.getClass().getSimpleName() in MULTI_INSERT_WRITES for c in children)


def _extra(plan) -> dict:
    """The values `toJSON` renders as null: read where the lineage needs them."""
    kind = plan.getClass().getSimpleName()
    if kind in ("UnresolvedWith", "WithCTE") and plan.children().size() == 1:
        # `WITH c AS (…) INSERT OVERWRITE DIRECTORY …`: the CTEs wrap the write whose values these are.
        return _extra(plan.children().apply(0))
    if _is_multi_insert(plan):  # one set of values per write, in the Union's order
        return {"writes": [_extra(child) for child in _children(plan)]}
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


#: Analysis failures that only mean a table is not known here (not declared in the script).
_NOT_KNOWN = ("TABLE_OR_VIEW_NOT_FOUND", "SCHEMA_NOT_FOUND", "VIEW_NOT_FOUND", "REQUIRES_SINGLE_PART_NAMESPACE")


#: v2 writes whose table a shadow cannot stand for (a parquet session table supports no overwrite
#: by expression): only their query is analysed (`INSERT INTO t REPLACE WHERE … SELECT …`).
V2_WRITES = ("OverwriteByExpression", "OverwritePartitionsDynamic", "AppendData")

#: Statements whose analysis reads tables (creating a view analyses its query).
_READS = {
    "CreateViewCommand",
    "CreateView",
    "CacheTableAsSelect",
    "InsertIntoStatement",
    "InsertIntoDir",
    "CreateTableAsSelect",
    "ReplaceTableAsSelect",
    "MergeIntoTable",
    "UnresolvedWith",
    "WithCTE",
    *V2_WRITES,
}


def _nodes(value):
    if isinstance(value, dict):
        if "class" in value:
            yield value
        for item in value.values():
            yield from _nodes(item)
    elif isinstance(value, list):
        for item in value:
            yield from _nodes(item)


class Shadows:
    """Spark's analyzer over a job whose tables resolve, with no data anywhere.

    Each table and view the script declares with a schema is re-created empty in a throwaway
    session: tables as empty managed parquet tables in the private warehouse, views over a data
    source as empty local relations, views over queries as themselves (creating a view only
    analyses its query). Each write is then analysed, never executed: Spark's own reason when a
    statement is wrong, and the output schema of CTAS. A statement reading a table the script
    does not declare is simply not analysed. Everything is dropped after the job.
    """

    def __init__(self, spark):
        self.session = spark.newSession()
        self.jsession = self.session._jsparkSession
        self.jvm = spark._jvm
        self.analyzer = self.jsession.sessionState().analyzer()
        self.databases: set[str] = set()
        self.tables: list[str] = []
        self.views: list[str] = []
        self.known: set[str] = set()  # `db`.`t` of every shadow table and persistent view, lower-cased
        self.temp_views: set[str] = set()  # temporary (and global temporary) views created

    def _tracker(self):
        return self.jvm.org.apache.spark.sql.catalyst.QueryPlanningTracker(self.jvm.scala.Option.empty())

    def _database(self, name: str) -> None:
        if name not in self.databases and name != "default":
            self.jsession.sql(f"CREATE DATABASE IF NOT EXISTS `{name}`")
            self.databases.add(name)

    def _struct(self, fields: list[dict]):
        schema = {"type": "struct", "fields": [dict(f, nullable=True, metadata={}) for f in fields]}
        return self.jvm.org.apache.spark.sql.types.DataType.fromJson(json.dumps(schema))

    def _qualified(self, parts: list[str]) -> tuple[str, str] | None:
        if len(parts) == 3 and parts[0].lower() == "spark_catalog":
            parts = parts[1:]
        if len(parts) == 1:
            return self.jsession.sessionState().catalog().getCurrentDatabase(), parts[0]
        if len(parts) == 2:
            return parts[0], parts[1]
        return None  # another catalog: nothing to shadow it with

    def _table(self, parts: list[str], struct) -> None:
        found = self._qualified(parts)
        if found is None:
            return
        database, table = found
        self._database(database)
        name = f"`{database}`.`{table}`"
        self.jsession.sql(f"DROP TABLE IF EXISTS {name}")
        self.jsession.catalog().createTable(f"{database}.{table}", "parquet", struct, self.jvm.java.util.HashMap())
        self.tables.append(name)
        self.known.add(name.lower())

    def _all_shadowed(self, tree: list[dict]) -> bool:
        """Whether every table the statement reads is one this session created: only then does
        the analyzer run, so that it never looks for anything outside (a path, a metastore)."""
        ctes: set = set()
        names = []
        for node in _nodes(tree):
            kind = str(node.get("class", "")).rsplit(".", 1)[-1]
            if kind == "UnresolvedRelation":
                names.append([p.lower() for p in _parts(node.get("multipartIdentifier"))])
            elif kind in ("UnresolvedWith", "WithCTE"):
                ctes.update(str(r.get("_1", "")).lower() for r in node.get("cteRelations") or [] if isinstance(r, dict))
        for parts in names:
            if len(parts) == 1 and (parts[0] in ctes or parts[0] in self.temp_views):
                continue
            if len(parts) == 2 and parts[0] == "global_temp" and parts[1] in self.temp_views:
                continue
            found = self._qualified(parts)
            if found is None or f"`{found[0].lower()}`.`{found[1].lower()}`" not in self.known:
                return False
        return True

    def analyse(self, plan, described: dict, sql: str) -> dict:
        kind = described["class"]
        tree = described["plan"]
        top = tree[0]
        if kind in _READS and not self._all_shadowed(tree):
            return {"analyzed": False}
        try:
            if kind == "SetCatalogAndNamespace":
                parts = _parts(tree[1].get("multipartIdentifier")) if len(tree) > 1 else []
                if parts and (len(parts) == 1 or parts[0].lower() == "spark_catalog"):
                    self._database(parts[-1])
                    self.jsession.catalog().setCurrentDatabase(parts[-1])
                return {}
            if kind == "CreateTempViewUsing":
                schema = top.get("userSpecifiedSchema")
                if schema:
                    frame = self.jsession.createDataFrame(
                        self.jvm.java.util.ArrayList(), self._struct(schema["fields"])
                    )
                    name = top["tableIdent"]["table"]
                    self.temp_views.add(name.lower())
                    if top.get("global"):
                        frame.createOrReplaceGlobalTempView(name)
                    else:
                        frame.createOrReplaceTempView(name)
                return {}
            if kind in ("CreateViewCommand", "CreateView"):
                if kind == "CreateView":  # a persistent view: dropped after the job like the shadows
                    found = self._qualified(_parts(tree[1].get("nameParts")))
                    if found is None:
                        return {}
                    self._database(found[0])
                    self.views.append(f"`{found[0]}`.`{found[1]}`")
                self.jsession.sql(sql)  # creating a view analyses its query, reads nothing
                if kind == "CreateView":
                    self.known.add(self.views[-1].lower())
                else:
                    self.temp_views.add(str(top["name"]["table"]).lower())
                return {"analyzed": True}
            if kind == "CacheTableAsSelect":  # never cache: the same view, uncached
                self.jsession.sql(f"CREATE OR REPLACE TEMPORARY VIEW `{top['tempViewName']}` AS {top['originalText']}")
                self.temp_views.add(str(top["tempViewName"]).lower())
                return {"analyzed": True}
            if kind == "CreateTable":
                columns = _columns(top)
                # A partitioned table cannot be shadowed faithfully: its writes stay unanalysed.
                if columns and not top.get("partitioning"):
                    self._table(_parts(tree[1].get("nameParts")), self._struct(columns))
                return {}
            if kind in ("UnresolvedWith", "WithCTE") and _is_multi_insert(plan.children().apply(0)):
                # WITH … FROM c INSERT … INSERT …: each write's query needs the CTEs; not analysed,
                # so no column lineage rather than one from a plan that mixes the writes.
                return {"analyzed": False}
            if kind == "Union" and _is_multi_insert(plan):
                # Each INSERT of a multi-insert is analysed on its own, as Spark runs each as its own
                # command: one analysis per write, in the Union's order.
                return {"writes": [self._write(child) for child in _children(plan)]}
            if kind == "InsertIntoStatement":
                return self._query(plan.query())
            if kind == "InsertIntoDir":  # a directory has no columns but the query's: its schema
                return self._query(plan.child(), schema=True)
            if kind in V2_WRITES:
                return self._query(plan.query())
            written = tree[1].get("class", "").rsplit(".", 1)[-1] if len(tree) > 1 else ""
            if kind in ("UnresolvedWith", "WithCTE") and (written in V2_WRITES or written == "InsertIntoDir"):
                # WITH … INSERT INTO t REPLACE WHERE … / WITH … INSERT OVERWRITE DIRECTORY …: the
                # CTEs over the write's query alone.
                children = self.jvm.java.util.ArrayList()
                children.add(plan.child().child() if written == "InsertIntoDir" else plan.child().query())
                seq = self.jvm.scala.collection.JavaConverters.asScalaBuffer(children).toList()
                return self._query(plan.withNewChildren(seq), schema=written == "InsertIntoDir")
            if kind in ("CreateTableAsSelect", "ReplaceTableAsSelect"):
                result = self._query(plan.query(), schema=True)
                if not top.get("partitioning"):
                    self._table(_parts(tree[1].get("nameParts")), self._struct(result["schema"]))
                return result
            if kind == "MergeIntoTable" or (kind in ("UnresolvedWith", "WithCTE") and len(tree) > 1):
                analyzed = self.analyzer.executeAndCheck(plan, self._tracker())
                result = {"analyzed": True}
                if kind != "MergeIntoTable" and analyzed.children().size() == 1:
                    try:  # WITH … INSERT: the write's analysed query, for column lineage
                        result["query_plan"] = json.loads(analyzed.children().apply(0).toJSON())
                    except Exception:  # not serialisable: no column lineage for this write
                        pass
                return result
            return {}
        except Exception as error:
            java = _java_error(error)
            condition = None
            try:
                condition = java.getErrorClass() if java is not None else None
            except Exception:  # not a SparkThrowable
                condition = None
            if condition in _NOT_KNOWN:
                return {"analyzed": False}
            message, _ = _reason(error)
            return {"analyzed": False, "rejected": message.split("; line ")[0]}

    def _write(self, write) -> dict:
        """One INSERT of a multi-insert: its query, when every table it reads is a shadow."""
        tree = json.loads(write.toJSON())
        if not self._all_shadowed(tree):
            return {"analyzed": False}
        try:
            if tree[0]["class"].endswith("InsertIntoStatement"):
                return self._query(write.query())
            return self._query(write.child(), schema=True)  # a directory: the query's columns are its own
        except Exception as error:
            java = _java_error(error)
            try:
                condition = java.getErrorClass() if java is not None else None
            except Exception:  # not a SparkThrowable
                condition = None
            if condition in _NOT_KNOWN:
                return {"analyzed": False}
            return {"analyzed": False, "rejected": _reason(error)[0].split("; line ")[0]}

    def _query(self, query, schema: bool = False) -> dict:
        """Analyses the query a write reads (the target side is left to the real job: a shadow
        knows no partitioning, no provider, no constraints)."""
        analyzed = self.analyzer.executeAndCheck(query, self._tracker())
        result: dict = {"analyzed": True}
        try:  # the analysed query, for column lineage (attributes carry their exprIds)
            result["query_plan"] = json.loads(analyzed.toJSON())
        except Exception:  # a node Spark cannot serialise: no column lineage for this write
            pass
        if schema:
            fields = json.loads(analyzed.schema().json())["fields"]
            result["schema"] = [{"name": f["name"], "type": f["type"]} for f in fields]
        return result

    def close(self) -> None:
        for name in reversed(self.views):
            try:
                self.jsession.sql(f"DROP VIEW IF EXISTS {name}")
            except Exception:  # dropped with its database below, or never created
                pass
        for name in reversed(self.tables):
            try:
                self.jsession.sql(f"DROP TABLE IF EXISTS {name}")
            except Exception:  # the next job's session starts from its own names anyway
                pass
        for database in self.databases:
            try:
                self.jsession.sql(f"DROP DATABASE IF EXISTS `{database}` CASCADE")
            except Exception:
                pass


def _parts(value) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    text = str(value or "")
    text = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    return text.split(", ") if text else []


def _columns(top: dict) -> list[dict]:
    schema = top.get("tableSchema")
    if isinstance(schema, dict):  # Spark 3.5
        return [{"name": f["name"], "type": f["type"]} for f in schema.get("fields", [])]
    found = []
    for column in top.get("columns") or []:  # Spark 4.0: ColumnDefinition nodes
        definition = column[0] if isinstance(column, list) and column else column
        if isinstance(definition, dict) and "name" in definition:
            found.append({"name": definition["name"], "type": definition.get("dataType")})
    return found


def _quiet_query_context_loggers() -> None:
    """PySpark 4 logs every SQL error with its statement text; a statement may carry a password
    in its OPTIONS, and the JVM log is no place for it. The answer carries Spark's reason."""
    try:
        from pyspark.logger import PySparkLogger
    except ImportError:  # PySpark 3.5 has no such loggers
        return
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).disabled = True


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
            # parquet.`path` must never reach a file system: such a relation stays unresolved.
            .config("spark.sql.runSQLOnFiles", "false")
            .getOrCreate()
        )
        self.spark.sparkContext.setLogLevel("ERROR")
        _quiet_query_context_loggers()
        self.parser = self.spark._jsparkSession.sessionState().sqlParser()
        self.version = self.spark.version

    def analyze(self, request: dict) -> dict:
        described = []
        plans = []
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
            plans.append(plan)
            described.append(
                {"line": statement["line"], "class": plan.getClass().getSimpleName(), "plan": tree, "extra": extra}
            )
        try:
            shadows = Shadows(self.spark)
        except Exception:  # analysis is an addition: the parse alone still gives the lineage
            shadows = None
        if shadows is not None:
            try:
                for plan, item, statement in zip(plans, described, request["statements"]):
                    item["analysis"] = shadows.analyse(plan, item, statement["sql"])
            finally:
                shadows.close()
        return {"ok": True, "spark_version": self.version, "statements": described}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--java-option", action="append", default=[])
    args = parser.parse_args()
    if args.java_option:
        os.environ["PYSPARK_SUBMIT_ARGS"] = (
            f"--driver-memory 512m --driver-java-options '{' '.join(args.java_option)}' pyspark-shell"
        )
    # The protocol owns stdout. PySpark's launcher and the JVM it starts inherit file
    # descriptor 1 and may print there (Spark 4 logs JSON lines): they get stderr instead.
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
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
