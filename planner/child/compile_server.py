"""Compiles Flink SQL jobs into CompiledPlan JSON, inside one Flink version's virtualenv.

Runs as a script with the version venv's own python, so it imports nothing but the standard
library and py4j (the parent's dependencies are not installed there). It starts one JVM and then
serves requests, one JSON object per line on stdin, one answer per line on stdout: a cold
`extract` sends one request, a test module or a warm worker sends many to the same JVM. Every job
gets a fresh TableEnvironment, so nothing it declares outlives it.

Request:  {"id": .., "statements": [{"sql": .., "line": .., "inserts": [{"target", "columns", "query"}]}],
           "jars": [..], "config": {..},
           "batch": bool, "forced_stand_ins": [..],
           "function_hints": {"name": {"kind": .., "type": .. | null, "fields": [..]}},
           "table_schemas": {"cat.db.t": {"column": "TYPE"}}}
Answer:   {"id": .., "ok": true, "plan": {..} | null, "tables": {"cat.db.t": {..}}, "kinds": [..],
           "stand_ins": [{"kind": "function" | "table", "name": .., ..}]}
       or {"id": .., "ok": false, "error": {"statement": i | null, "message": ..}}
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time


def _root_cause(error: BaseException) -> str:
    """Flink's own reason: the innermost Java cause, without the Java stack."""
    java = getattr(error, "java_exception", None)
    if java is None:
        return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return _java_reason(java)


def _java_reason(java) -> str:
    """The reason of a Java Throwable (a py4j reference): its message and its innermost cause's."""
    messages = []
    cause = java
    seen = 0
    while cause is not None and seen < 30:
        text = cause.getMessage()
        name = cause.getClass().getName()
        messages.append((name, text))
        nxt = cause.getCause()
        cause = None if nxt is None or nxt.equals(cause) else nxt
        seen += 1
    # The top message names the failing statement's problem; the innermost names the cause.
    top = messages[0][1] or messages[0][0]
    inner_name, inner = messages[-1]
    if len(messages) > 1 and inner and inner not in top:
        return f"{top.strip()} Caused by: {inner_name}: {inner.strip()}"
    if len(messages) > 1 and not inner:
        return f"{top.strip()} Caused by: {inner_name}"
    return top.strip()


class Compiler:
    def __init__(self, classpath: list[str], java_options: list[str], log_path: str | None):
        from py4j.java_gateway import GatewayParameters, JavaGateway, launch_gateway

        out = open(log_path, "a") if log_path else None  # noqa: SIM115 - lives as long as the JVM
        port, self.process = launch_gateway(
            classpath=os.pathsep.join(classpath),
            javaopts=java_options,
            die_on_exit=True,
            redirect_stdout=out,
            redirect_stderr=out,
            return_proc=True,
        )
        self.gateway = JavaGateway(gateway_parameters=GatewayParameters(port=port, auto_convert=True))
        self.jvm = self.gateway.jvm
        self._spare: tuple | None = None  # (key, Session): the next job's environment, made while idle

    @staticmethod
    def _session_key(request: dict) -> tuple:
        return (
            bool(request.get("batch")),
            tuple(sorted(request.get("config", {}).items())),
            tuple(request.get("forced_stand_ins", [])),
        )

    def _new_session(self, request: dict):
        jvm = self.jvm
        config = jvm.java.util.HashMap()
        for key, value in request.get("config", {}).items():
            config.put(key, value)
        forced = jvm.java.util.HashSet()
        for name in request.get("forced_stand_ins", []):
            forced.add(name)
        return jvm.io.planlineage.standin.Session(bool(request.get("batch")), config, forced)

    def prepare(self, request: dict) -> None:
        """Creates, between jobs, a fresh environment like the last job's: most jobs of a caller
        share their settings, so the next one starts without waiting for its TableEnvironment.
        Each environment still serves one job only."""
        try:
            self._spare = (self._session_key(request), self._new_session(request))
        except Exception:
            self._spare = None  # the job will create (and report failing to create) its own

    def close(self, timeout: float = 60.0) -> None:
        """Lets the JVM exit normally (a class-data archive is written at a normal exit)."""
        self.gateway.close()
        try:
            self.process.stdin.close()  # die_on_exit: the JVM exits when its stdin closes
            self.process.wait(timeout)
        except Exception:  # the JVM is gone or stuck: it must not outlive the server
            self.process.kill()

    def compile(self, request: dict) -> dict:
        """The answer to one job; its plan is the compiled JSON text itself (`plan_json`), put into
        the answer line as is by `answer_line`, so it is parsed once, by the reader of the answer."""
        jvm = self.jvm
        statements = request["statements"]
        spare, self._spare = self._spare, None
        try:
            if spare is not None and spare[0] == self._session_key(request):
                session = spare[1]
            else:
                session = self._new_session(request)
        except Exception as error:  # the JVM refused the environment itself
            return {"ok": False, "error": {"statement": None, "message": _root_cause(error)}}

        for name, hint in (request.get("function_hints") or {}).items():
            fields = jvm.java.util.ArrayList()
            for field in hint.get("fields") or []:
                fields.add(field)
            session.hintFunction(name, hint.get("kind") or "scalar", hint.get("type"), fields)

        for table, columns in (request.get("table_schemas") or {}).items():
            names, types = jvm.java.util.ArrayList(), jvm.java.util.ArrayList()
            for name, kind in columns.items():
                names.add(name)
                types.add(kind)
            session.declareSchema(table, names, types)

        for jar in request.get("jars", []):
            try:
                session.execute("ADD JAR '" + jar.replace("'", "''") + "'")
            except Exception as error:
                return {"ok": False, "error": {"statement": None, "jar": jar, "message": _root_cause(error)}}

        if any(statement.get("inserts") for statement in statements):
            # Stand-in catalogs: each INSERT's target is prepared right before its statement runs.
            kinds = []
            sink_statement = []  # which statement each collected sink came from
            for index, statement in enumerate(statements):
                before = session.sinkCount()
                for insert in statement.get("inserts") or []:
                    columns = None
                    if insert.get("columns"):
                        columns = jvm.java.util.ArrayList()
                        for column in insert["columns"]:
                            columns.add(column)
                    try:
                        session.prepareInsert(insert["target"], columns, insert["query"])
                    except Exception:  # the INSERT itself then reports what is wrong
                        pass
                try:
                    kinds.append(session.execute(statement["sql"]))
                except Exception as error:
                    return {
                        "ok": False,
                        "error": {"statement": index, "message": _root_cause(error)},
                        "stand_ins": _stand_ins(session),
                    }
                sink_statement.extend([index] * (session.sinkCount() - before))
        else:
            # All statements in one call: which statement each collected sink came from, or where it failed.
            executed = json.loads(session.executeAll([statement["sql"] for statement in statements]))
            if executed["failed"] is not None:
                failure = session.failure()
                return {
                    "ok": False,
                    "error": {
                        "statement": executed["failed"],
                        "message": _java_reason(failure) if failure is not None else "unknown error",
                    },
                    "stand_ins": _stand_ins(session),
                }
            kinds, sink_statement = executed["kinds"], executed["sinks"]

        compiled = None
        identifiers: list[str] = []
        compile_ms = 0.0
        if sink_statement:
            try:
                started = time.perf_counter()
                compiled = session.compile()
                compile_ms = (time.perf_counter() - started) * 1000
            except Exception as error:
                return {
                    "ok": False,
                    "error": {"statement": self._blame(session, sink_statement), "message": _root_cause(error)},
                    "stand_ins": _stand_ins(session),
                }
            identifiers = _table_identifiers(json.loads(compiled))

        tables = {}
        if identifiers:
            for table in json.loads(session.describeTables(identifiers)).values():
                tables[table.pop("identifier")] = table
        # compile_ms is the bare compilePlan call: the floor a warm planner can approach.
        return {
            "ok": True,
            "plan_json": compiled,
            "tables": tables,
            "kinds": kinds,
            "stand_ins": json.loads(session.standIns()),
            "timings": {"compile_ms": round(compile_ms, 2)},
        }

    @staticmethod
    def _blame(session, sink_statement: list[int]) -> int | None:
        """The first statement whose sink fails on its own (compiling alone is the only way to ask)."""
        for position, index in enumerate(sink_statement):
            try:
                session.compileOne(position)
            except Exception:
                return index
        return None


def _stand_ins(session) -> list:
    """What the session stood in so far (also on failure: the caller's fallback depends on it)."""
    try:
        return json.loads(session.standIns())
    except Exception:  # a broken JVM connection: the failure itself is what gets reported
        return []


def _table_identifiers(plan: dict | None) -> list[str]:
    """Every table a plan names (as the plan quotes it), wherever a node embeds it."""
    found: list[str] = []

    def visit(value, key=None):
        if isinstance(value, dict):
            if key == "table" and isinstance(value.get("identifier"), str):
                if value["identifier"] not in found:
                    found.append(value["identifier"])
                return
            for child_key, child in value.items():
                visit(child, child_key)
        elif isinstance(value, list):
            for item in value:
                visit(item, key)

    visit(plan or {})
    return found


def answer_line(answer: dict) -> str:
    """One line of JSON, "id" first (the parent matches answers by a prefix), the plan's own text
    spliced in: Flink's JSON has line breaks only between tokens, so they can become spaces."""
    head = json.dumps({"id": answer.pop("id", None)})[:-1]
    if "plan_json" in answer:
        plan_json = answer.pop("plan_json")
        plan = "null" if plan_json is None else plan_json.replace("\r", " ").replace("\n", " ")
        head += ', "plan": ' + plan
    body = json.dumps(answer)[1:]
    return head + (", " + body if body != "}" else "}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lib", required=True, help="the version's pyflink/lib folder")
    parser.add_argument("--stand-in", required=True, help="the stand-in connector jar")
    parser.add_argument("--log", default=None, help="where the JVM writes its output")
    parser.add_argument("--java-option", action="append", default=[])
    parser.add_argument(
        "--prepare-next", action="store_true", help="long-lived: make the next job's environment between jobs"
    )
    args = parser.parse_args()

    classpath = sorted(glob.glob(os.path.join(args.lib, "*.jar"))) + [args.stand_in]
    compiler = Compiler(classpath, args.java_option, args.log)
    out = sys.stdout
    print(json.dumps({"ready": True}), file=out, flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        started = time.perf_counter()
        try:
            answer = compiler.compile(request)
        except Exception as error:  # a broken JVM connection: answer, then let the parent decide
            answer = {"ok": False, "error": {"statement": None, "message": _root_cause(error)}}
        answer["id"] = request.get("id")
        answer.setdefault("timings", {})["server_ms"] = round((time.perf_counter() - started) * 1000, 2)
        out.write(answer_line(answer) + "\n")
        out.flush()
        if args.prepare_next:
            compiler.prepare(request)
    compiler.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
