"""Benchmark of the history replay: generated StreamPark and Dinky runs replayed once, then again.

    python bench/history.py [--runs 500] [--dinky-runs 500] [--apps 50] [--versions 2] [--planner real|recorded]

A throwaway PostgreSQL server (tests/streampark/servers.py) holds StreamPark's schema and Dinky's,
each in a database of its own written by the tests' console stand-ins: ``--apps`` Flink SQL apps
(StreamPark) and as many FlinkSql tasks (Dinky), Kafka to Kafka, a topic pair of their own;
``--runs`` successful starts spread over the apps, each ended by a cancel or the app's end state,
and ``--dinky-runs`` job instances spread over the tasks, each with its final status; the SQL of
each changed ``--versions`` times over its runs (so ``apps x versions`` distinct scripts per
platform are compiled).  A Gravitino-compatible server on 127.0.0.1 (tests/gravitino_server.py)
counts what arrives.  ``planlineage watch --history --once`` runs in this process, as an operator
runs it.  Printed: wall time, events delivered, duplicates, events lost (expected START and end of
each run, by run id and type), events whose eventTime is not the run's recorded time, then the
second replay's events (0 expected).

``--planner real`` compiles with the provisioned Flink 1.20 ($PLANLINEAGE_FLINK_CACHE) on the
backfill engine; ``recorded`` is a stand-in answering every script with one recorded plan (no
JVM: it measures everything but the compiles).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests" / p) for p in ("", "streampark", "dinky", "lifecycle")]

from console import CANCELED, FAILED, FINISHED, RUNNING, Console  # noqa: E402
from dinky_console import Console as DinkyConsole  # noqa: E402
from gravitino_server import GravitinoTestServer  # noqa: E402
from servers import WATCH_PASSWORD, PostgresServer  # noqa: E402

from planlineage.history.ledger import run_id_for  # noqa: E402
from planlineage.streampark.history import run_key  # noqa: E402

T0 = datetime(2026, 1, 5, 6, 0, 0)
SQL = """CREATE TABLE src (id BIGINT, v STRING) WITH ('connector' = 'kafka', 'topic' = 'bench_in_{app}',
  'properties.bootstrap.servers' = 'kafka-1:9092', 'format' = 'json');
CREATE TABLE dst (id BIGINT, v STRING) WITH ('connector' = 'kafka', 'topic' = 'bench_out_{app}_v{version}',
  'properties.bootstrap.servers' = 'kafka-1:9092', 'format' = 'json');
INSERT INTO dst SELECT id, v FROM src;
"""
ENDS = {FINISHED: "COMPLETE", FAILED: "FAIL", CANCELED: "ABORT"}


def stamp(moment: datetime) -> str:
    return moment.replace(tzinfo=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def generate(console: Console, runs: int, apps: int, versions: int) -> tuple[dict, list[str]]:
    """The StreamPark rows; ``(expected {(run id, type): eventTime}, distinct scripts)``."""
    console.env("1.20.0")
    expected: dict[tuple[str, str], str] = {}
    scripts: list[str] = []
    per_app = [runs // apps + (1 if i < runs % apps else 0) for i in range(apps)]
    moment = T0
    for index, count in enumerate(per_app):
        name = f"bench_app_{index}"
        sql = SQL.format(app=index, version=1)
        scripts.append(sql)
        app = console.create_app(name, sql, at=moment - timedelta(hours=1))
        change_every = max(1, -(-count // versions))
        for number in range(count):
            if number and number % change_every == 0:
                sql = SQL.format(app=index, version=number // change_every + 1)
                scripts.append(sql)
                console.edit_sql(app, sql, at=moment - timedelta(minutes=1))
            began = moment
            console.start(app, at=began)
            log_id = console.new_id("t_app_log")
            run_id = run_id_for(run_key(app, log_id), began.replace(tzinfo=UTC))
            expected[(run_id, "START")] = stamp(began)
            ended = began + timedelta(minutes=20)
            if number < count - 1:
                console.cancel(app, at=ended)
                expected[(run_id, "ABORT")] = stamp(ended)
            else:
                state = (FINISHED, FAILED, CANCELED, RUNNING)[index % 4]
                console.set_state(app, state, at=ended)
                if state == RUNNING:
                    expected[(run_id, "RUNNING")] = stamp(began)
                else:
                    expected[(run_id, ENDS[state])] = stamp(ended)
            moment += timedelta(minutes=30)
    return expected, scripts


def generate_dinky(console: DinkyConsole, runs: int, tasks: int, versions: int) -> tuple[dict, list[str]]:
    """Dinky's rows: job instances of FlinkSql tasks on a Flink 1.20 cluster."""
    cluster = console.cluster("1.20.5")
    expected: dict[tuple[str, str], str] = {}
    scripts: list[str] = []
    per_task = [runs // tasks + (1 if i < runs % tasks else 0) for i in range(tasks)]
    moment = T0
    for index, count in enumerate(per_task):
        sql = SQL.format(app=f"dinky_{index}", version=1)
        scripts.append(sql)
        task = console.create_task(f"dinky_task_{index}", sql, cluster=cluster)
        change_every = max(1, -(-count // versions))
        for number in range(count):
            if number and number % change_every == 0:
                sql = SQL.format(app=f"dinky_{index}", version=number // change_every + 1)
                scripts.append(sql)
                console.edit(task, sql)
            began, ended = moment, moment + timedelta(minutes=20)
            instance = console.submit(task, at=began)
            run_id = run_id_for(f"dinky:instance={instance}", began.replace(tzinfo=UTC))
            expected[(run_id, "START")] = stamp(began)
            status = "CANCELED" if number < count - 1 else ("FINISHED", "FAILED", "CANCELED", "RUNNING")[index % 4]
            console.set_status(instance, status, at=ended)
            if status == "RUNNING":
                expected[(run_id, "RUNNING")] = stamp(began)
            else:
                expected[(run_id, {"FINISHED": "COMPLETE", "FAILED": "FAIL", "CANCELED": "ABORT"}[status])] = stamp(
                    ended
                )
            moment += timedelta(minutes=30)
    return expected, scripts


def replay(urls: list[str], env: dict[str, str]) -> tuple[float, str]:
    from planlineage.cli.main import main

    saved = dict(os.environ)
    err = io.StringIO()
    began = time.monotonic()
    try:
        os.environ.update(env)
        with contextlib.redirect_stderr(err):
            code = main(["watch", "--once", "--history", *urls, "--timeout", "300"])
    finally:
        os.environ.clear()
        os.environ.update(saved)
    if code != 0:
        raise SystemExit(err.getvalue())
    return time.monotonic() - began, err.getvalue()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=500, help="StreamPark runs")
    parser.add_argument("--dinky-runs", type=int, default=500, help="Dinky runs (0: none)")
    parser.add_argument("--apps", type=int, default=50)
    parser.add_argument("--versions", type=int, default=2, help="SQL versions per app over its runs")
    parser.add_argument("--planner", choices=("real", "recorded"), default="real")
    options = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="planlineage-bench-history-"))
    env = {
        "PLANLINEAGE_HOME": str(home / "home"),
        "PLANLINEAGE_STREAMPARK_PASSWORD": WATCH_PASSWORD,
        "PLANLINEAGE_DINKY_PASSWORD": WATCH_PASSWORD,
    }
    server = PostgresServer()
    server.start()
    try:
        database = server.create_database()
        console = Console(server, database, "dev")
        console.load_schema()
        server.grant_select(database)
        made = time.monotonic()
        expected, scripts = generate(console, options.runs, options.apps, options.versions)
        urls = ["--streampark-db", server.url(database)]
        if options.dinky_runs:
            dinky_database = server.create_database()
            dinky = DinkyConsole(server, dinky_database, "1.3")
            dinky.load_schema()
            server.grant_select(dinky_database)
            more, dinky_scripts = generate_dinky(dinky, options.dinky_runs, options.apps, options.versions)
            expected.update(more)
            scripts += dinky_scripts
            urls += ["--dinky-db", server.url(dinky_database)]
            dinky.close()
        total = options.runs + options.dinky_runs
        print(
            f"generated {options.runs} StreamPark runs and {options.dinky_runs} Dinky runs "
            f"({len(set(scripts))} distinct scripts) in {time.monotonic() - made:.1f} s"
        )
        if options.planner == "recorded":
            from recorded_planner import RecordedPlanner

            planner = RecordedPlanner(home / "flink-cache", minors=("1.20",))
            for script in set(scripts):
                planner.record(script, "union_all")
            env.update(planner.env())
            print("planner: recorded stand-in (no JVM; every script answered with one recorded plan)")
        else:
            print(f"planner: Flink 1.20 from {os.environ.get('PLANLINEAGE_FLINK_CACHE', 'the default cache')}")
        with GravitinoTestServer() as gravitino:
            env["PLANLINEAGE_LINEAGE_ADDRESS"] = gravitino.address
            seconds, said = replay(urls, env)
            received = Counter((e["run"]["runId"], e["eventType"]) for e in gravitino.events)
            times = {(e["run"]["runId"], e["eventType"]): e["eventTime"] for e in gravitino.events}
            duplicates = sum(n - 1 for n in received.values() if n > 1)
            lost = [key for key in expected if key not in received]
            unexpected = [key for key in received if key not in expected]
            wrong_time = [key for key, when in expected.items() if key in times and times[key] != when]
            print(f"replay: {seconds:.1f} s wall, {len(gravitino.events)} events delivered for {total} runs")
            print(
                f"  expected {len(expected)}, duplicates {duplicates}, lost {len(lost)}, unexpected {len(unexpected)}, "
                f"eventTime not the recorded one {len(wrong_time)}"
            )
            for line in said.splitlines():
                if "history:" in line and "/" not in line.split("history:")[1][:12]:
                    print(f"  {line}")
            before = len(gravitino.events)
            again, said = replay(urls, env)
            print(f"second replay: {again:.1f} s wall, {len(gravitino.events) - before} events sent")
        console.close()
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
