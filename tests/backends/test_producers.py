"""planlineage beside the real producers of the same graph, into one real backend (Data.Rentgen).

What other producers and planlineage report of one table must be ONE dataset node in a backend,
and a Flink job that openlineage-flink's listener reports too must be one job with one run. Here
that is asserted through Data.Rentgen's REST API (the harness: :mod:`rentgen_backend`), with every
producer run for real, once for the module, as in ``tests/conformance``, whose machinery it uses:

* **Flink** (the version under test, 2.x: its own jars from planlineage's provisioned venv) runs
  two SQL jobs in one mini cluster with ``FlinkProducer.java``, the real JDBC connector and
  openlineage-flink's job-status-changed listener on the class path:

  - ``producers_big_orders_writer`` copies the big orders from one PostgreSQL table into another
    (``public.prod_big_orders``). The listener of this job writes to a file only: in the backend
    planlineage alone reports it, under its own job and run.
  - ``producers-customers-archive`` (conformance case 31's job) names the listener itself, with detached
    tracking, and the listener sends its events to Data.Rentgen's http2kafka with a personal
    token. planlineage coexists (``lineage.flink-runs`` auto): once the JobManager took the job,
    ``submit --flink-job-id --flink-start-time`` (a platform's hook) records it under the
    listener's job and run.

* **planlineage** reports both jobs through its lifecycle commands (``submit`` / ``state``, the
  compile service with the real planner of that Flink version), configured only through
  OpenLineage's own variables, one set per platform home: ``OPENLINEAGE_URL`` (+ API key,
  endpoint) to http2kafka for the first, ``OPENLINEAGE__TRANSPORT__*`` (the Kafka transport onto
  Data.Rentgen's topic) for the second.

* **openlineage-spark** (the Spark version under test) reads ``public.prod_big_orders`` through
  Spark's JDBC source and writes a parquet table, sending its events with its http transport to
  http2kafka with a personal token (``spark_producer.py``).

Runs where a Flink and a Spark version are chosen (``PLANLINEAGE_TEST_FLINK``,
``PLANLINEAGE_TEST_SPARK``; tox env ``backends``). Measured on the shared 2-core machine, the
versions provisioned and the jars resolved, the module alone with the harness's start: 55 to 75 s
at a load average of 3 to 12, 92 to 113 s at 15 to 20; 34 s after the other modules started the
harness (the Flink JVM and Spark are most of it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

FLINK = os.environ.get("PLANLINEAGE_TEST_FLINK")
SPARK = os.environ.get("PLANLINEAGE_TEST_SPARK")
if not (FLINK and SPARK):
    pytest.skip(
        "set PLANLINEAGE_TEST_FLINK=2.2 and PLANLINEAGE_TEST_SPARK=3.5 (tox env backends)", allow_module_level=True
    )

import databases  # noqa: E402 - tests/ helpers, after the skip
import maven_artifacts  # noqa: E402
from compile_services import services  # noqa: E402
from rentgen_backend import dataset_identity  # noqa: E402
from test_flink_producer import CONNECTORS, LISTENER_FACTORY, _free_port, _runner_classes, _write_case  # noqa: E402
from test_spark_producer import LISTENER as SPARK_LISTENERS  # noqa: E402
from test_spark_producer import _statements  # noqa: E402

SPARK_PRODUCER = Path(__file__).parents[1] / "conformance" / "spark_producer.py"
DATABASE = "producers"
WRITER_JOB = "producers_big_orders_writer"  # planlineage's job (the platform's name) writing public.prod_big_orders
READER_APP = "producers_big_orders_report"  # the Spark application reading it
SHARED_JOB = "producers-customers-archive"  # pipeline.name of the job both planlineage and the listener report
SHARED_NAMESPACE = "backends-coexist"
SHARED_APP = "producers_archive_app"  # the platform's name for that job: never a job of its own
SPARK_NAMESPACE = "local://planlineage-backends"
HTTP2KAFKA_ENDPOINT = "v1/openlineage"
#: The listener's name for the shared job's datagen source (Flink's fallback identity: empty
#: namespace, the catalog name), as Data.Rentgen stores it.
LISTENER_GENERATOR = ("unknown://unknown", "default_catalog.default_database.gen")

SEED = """
CREATE TABLE public.prod_orders (id INT, customer_id INT, amount DOUBLE PRECISION);
INSERT INTO public.prod_orders VALUES (1, 1, 5), (2, 1, 50), (3, 2, 70);
CREATE TABLE public.prod_big_orders (id INT, customer_id INT, amount DOUBLE PRECISION);
CREATE TABLE public.prod_customers (id INT, name TEXT);
INSERT INTO public.prod_customers VALUES (1, 'ann'), (2, 'bo');
CREATE TABLE public.prod_customers_archive (id INT, name TEXT);
"""

# The table names carry their schema on both sides: openlineage-spark names `dbtable 'public.x'`
# `producers.public.x` and a Flink `table-name` `public.x` is named the same (docs/naming.md: postgres
# never adds `public`).
WRITER_SQL = """
CREATE TABLE pg_orders (id INT, customer_id INT, amount DOUBLE) WITH ('connector' = 'jdbc', 'url' = '{pg}', 'table-name' = 'public.prod_orders', 'username' = '{pg_user}', 'password' = '{pg_password}');
CREATE TABLE pg_big_orders (id INT, customer_id INT, amount DOUBLE) WITH ('connector' = 'jdbc', 'url' = '{pg}', 'table-name' = 'public.prod_big_orders', 'username' = '{pg_user}', 'password' = '{pg_password}');
INSERT INTO pg_big_orders SELECT id, customer_id, amount FROM pg_orders WHERE amount > 10;
"""

# Conformance case 31's job, naming the listener itself. The generator's 6 seconds keep the job's
# REST API up while the listener and the runner read its start time.
SHARED_SQL = f"""
SET 'execution.job-status-changed-listeners' = '{LISTENER_FACTORY}';
SET 'openlineage.flink.enableDetachedJobTracking' = 'true';
SET 'openlineage.job.namespace' = '{SHARED_NAMESPACE}';
SET 'pipeline.name' = '{SHARED_JOB}';
SET 'rest.port' = '{{rest_port}}';
SET 'rest.bind-port' = '{{rest_port}}';
CREATE TABLE gen (id INT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '60', 'rows-per-second' = '10');
CREATE TABLE pg_customers (id INT, name STRING) WITH ('connector' = 'jdbc', 'url' = '{{pg}}', 'table-name' = 'public.prod_customers', 'username' = '{{pg_user}}', 'password' = '{{pg_password}}');
CREATE TABLE pg_archive (id INT, name STRING) WITH ('connector' = 'jdbc', 'url' = '{{pg}}', 'table-name' = 'public.prod_customers_archive', 'username' = '{{pg_user}}', 'password' = '{{pg_password}}');
INSERT INTO pg_archive SELECT g.id, UPPER(c.name) FROM gen AS g JOIN pg_customers AS c ON g.id = c.id;
"""

READER_SQL = """
CREATE TEMPORARY VIEW big_orders USING jdbc OPTIONS (url '{pg}', dbtable 'public.prod_big_orders', user '{pg_user}', password '{pg_password}');
CREATE TABLE prod_customer_totals USING parquet LOCATION '{root}/prod_customer_totals' AS SELECT customer_id, SUM(amount) AS total FROM big_orders GROUP BY customer_id;
"""


class Platform:
    """planlineage's lifecycle commands as a platform runs them: a fresh process per command, one
    home, and OpenLineage's own configuration (``openlineage``: variables) as the only lineage
    configuration. The compile service the first ``submit`` starts inherits that environment."""

    def __init__(self, home: Path, openlineage: dict[str, str]):
        self.home = home
        keep = ("PLANLINEAGE_FLINK_CACHE", "PLANLINEAGE_SPARK_CACHE")  # the provisioned versions
        self.env = {
            k: v for k, v in os.environ.items() if not k.startswith(("PLANLINEAGE_", "OPENLINEAGE")) or k in keep
        }
        self.env.update(openlineage)
        self.env["PLANLINEAGE_HOME"] = str(home)
        # Not the machine user's warm planners (and a socket path short enough: not under tmp).
        self.env["PLANLINEAGE_PLANNER_DIR"] = tempfile.mkdtemp(prefix="pl-backends-")
        # The compile service leaves soon after its work, so that the module ends with it.
        self.env["PLANLINEAGE_COMPILE_IDLE_SECONDS"] = "2"
        self.printed: list[str] = []  # what each command printed (stdout and stderr)
        home.mkdir(parents=True, exist_ok=True)

    def __call__(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        done = subprocess.run(
            [sys.executable, "-P", "-m", "planlineage", *args],
            capture_output=True,
            text=True,
            env=self.env,
            cwd=self.home,  # no ./openlineage.yml but what a test writes
            timeout=timeout,
        )
        assert done.returncode == 0, f"planlineage {args[0]} exited {done.returncode}: {done.stderr[-2000:]}"
        self.printed.append(done.stdout + done.stderr)
        return done

    def where_events_are(self) -> str:
        """What the home says of undelivered events and its compile service, for a failure."""
        listing = self("outbox", "list")
        log = self.home / "compile-service.log"
        return (
            f"planlineage's home {self.home}: outbox list: {(listing.stdout + listing.stderr).strip()!r}; "
            f"compile service running: {bool(services(self.home))}; its log: "
            f"{log.read_text(errors='replace')[-1500:] if log.exists() else '(none)'}"
        )

    def wait_services(self, timeout: float = 60) -> None:
        """The compile service of this home has left (it delivered what it had, then idled out)."""
        deadline = time.monotonic() + timeout
        while services(self.home):
            assert time.monotonic() < deadline, f"the compile service of {self.home} still runs"
            time.sleep(0.2)


@dataclass
class Reported:
    """What the module ran, for the tests to look up in the backend."""

    big_orders: tuple[str, str]  # (namespace, name) of the table between the two producers
    orders: tuple[str, str]
    customers: tuple[str, str]
    customers_archive: tuple[str, str]
    flink_version: str  # the patch release that ran the jobs and compiled them for planlineage
    flink_job_id: str  # of the shared job, as the runner read it from the REST API
    flink_start_time: int  # ms
    platforms: tuple[Platform, ...]
    token: str  # the personal token every producer sends to http2kafka


@pytest.fixture(scope="module")
def tables(rentgen_postgres) -> dict[str, str]:
    """The jobs' tables on the harness's PostgreSQL, in a database of their own."""
    rentgen_postgres.create_database(DATABASE)
    rentgen_postgres.psql(SEED, database=DATABASE)
    return {
        "port": str(rentgen_postgres.port),
        "pg": f"jdbc:postgresql://127.0.0.1:{rentgen_postgres.port}/{DATABASE}",
        "pg_user": databases.SUPERUSER,
        "pg_password": databases.PASSWORD,
    }


def _listener_to(conf_file: Path, url: str, token: str) -> None:
    """The listener of a case written by ``_write_case`` sends with its http transport to ``url``
    with a personal token, instead of writing its file (``java.util.Properties``: ':' escaped)."""
    lines = [
        line
        for line in conf_file.read_text(encoding="utf-8").splitlines()
        if not line.startswith("openlineage.transport.")
    ]
    transport = {
        "type": "http",
        "url": url.replace(":", "\\:"),
        "endpoint": "/" + HTTP2KAFKA_ENDPOINT,
        "auth.type": "api_key",
        "auth.apiKey": token,
    }
    lines += [f"openlineage.transport.{key}={value}" for key, value in transport.items()]
    conf_file.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _run_flink(folders: list[Path], work: Path, on_line: Callable[[list[str]], None]) -> None:
    """FlinkProducer over the case folders, in one JVM; ``on_line(fields)`` for each line it
    prints, as it prints it (a platform acts while the job runs)."""
    from planlineage.planner.provision import ensure, find_java_tool

    provisioned = ensure(FLINK)
    assert provisioned.flink.version.split(".")[0] != "1", (
        f"Flink {FLINK}: openlineage-flink's listener reads Flink's native lineage graph, which Flink has from 2.0 on"
    )
    flink_jars = sorted(str(jar) for jar in provisioned.lib.glob("*.jar"))
    connectors = [str(jar) for name in CONNECTORS["postgres"] for jar in maven_artifacts.resolve(name)]
    listener = [str(jar) for jar in maven_artifacts.resolve("openlineage-flink")]
    classes = _runner_classes(flink_jars, work / "runner")
    stderr = work / "flink.stderr"
    with stderr.open("w") as errors:
        process = subprocess.Popen(
            [
                "nice",
                find_java_tool("java") or "java",
                "-Xmx768m",
                "-XX:+UseSerialGC",
                "-cp",
                ":".join([str(classes), *flink_jars, *connectors, *listener]),
                "FlinkProducer",
                *map(str, folders),
            ],
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
        )
        watchdog = threading.Timer(300, process.kill)  # the cases are bounded: a hung JVM is a failure
        watchdog.start()
        try:
            for line in process.stdout:
                on_line(line.rstrip("\n").split("\t"))
        except BaseException:
            process.kill()  # the platform's side failed: the jobs still running are not waited for
            raise
        finally:
            watchdog.cancel()
            process.wait(timeout=60)
    assert process.returncode == 0, stderr.read_text(errors="replace")[-3000:]


def _run_spark(statements: list[str], conf: dict[str, str]) -> None:
    """openlineage-spark runs the statements in one Spark application named READER_APP."""
    from planlineage.spark.provision import ensure

    provisioned = ensure(SPARK)
    jars = [str(jar) for name in (SPARK_LISTENERS[SPARK], "postgresql-jdbc") for jar in maven_artifacts.resolve(name)]
    request = {"jars": jars, "cases": [{"name": READER_APP, "statements": statements, "conf": conf}]}
    done = subprocess.run(
        [str(provisioned.python), str(SPARK_PRODUCER)],
        input=json.dumps(request),  # the token on stdin, not on a command line
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYSPARK_PYTHON": str(provisioned.python)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert results == [{"name": READER_APP, "error": None}], done.stdout[-2000:]


@pytest.fixture(scope="module")
def reported(rentgen, tables, tmp_path_factory) -> Iterator[Reported]:
    """Both Flink jobs run with planlineage reporting them as a platform does, then the Spark job."""
    from planlineage.planner.provision import ensure

    work = tmp_path_factory.mktemp("producers")
    token = rentgen.personal_token("producers")
    # One platform home per OpenLineage configuration: OPENLINEAGE_URL to http2kafka ...
    by_url = Platform(
        work / "home-http",
        {
            "OPENLINEAGE_URL": rentgen.http2kafka_url,
            "OPENLINEAGE_ENDPOINT": HTTP2KAFKA_ENDPOINT,
            "OPENLINEAGE_API_KEY": token,
        },
    )
    # ... and the Kafka transport straight onto the topic Data.Rentgen's consumer reads.
    by_kafka = Platform(
        work / "home-kafka",
        {
            "OPENLINEAGE__TRANSPORT__TYPE": "kafka",
            "OPENLINEAGE__TRANSPORT__TOPIC": rentgen.topic,
            "OPENLINEAGE__TRANSPORT__CONFIG": json.dumps({"bootstrap.servers": rentgen.bootstrap}),
        },
    )
    values = {**tables, "rest_port": _free_port()}
    writer_sql = WRITER_SQL.format(**values)
    shared_sql = SHARED_SQL.format(**values)
    writer, _ = _write_case(work / "writer", WRITER_JOB, writer_sql)
    shared, _ = _write_case(work / "shared", SHARED_JOB, shared_sql)
    _listener_to(shared / "conf.properties", rentgen.http2kafka_url, token)
    (work / "writer.sql").write_text(writer_sql, encoding="utf-8")
    (work / "shared.sql").write_text(shared_sql, encoding="utf-8")

    by_url("submit", "--app-id", WRITER_JOB, "--job-name", WRITER_JOB, "--flink-version", FLINK,
           "--sql-file", str(work / "writer.sql"), "--lineage-enable")  # fmt: skip
    by_url("state", "--app-id", WRITER_JOB, "--state", "RUNNING")
    started: list[tuple[str, int]] = []

    def platform(fields: list[str]) -> None:
        kind, folder = fields[0], fields[1] if len(fields) > 1 else ""
        if kind == "JOB" and folder == str(shared):  # the JobManager took the job: the platform's hook
            job_id, start = fields[2], int(fields[3])
            started.append((job_id, start))
            by_kafka("submit", "--app-id", SHARED_APP, "--job-name", SHARED_APP, "--flink-version", FLINK,
                     "--sql-file", str(work / "shared.sql"), "--lineage-enable",
                     "--flink-job-id", job_id, "--flink-start-time", str(start))  # fmt: skip
            by_kafka("state", "--app-id", SHARED_APP, "--state", "RUNNING")
        elif kind == "CASE":
            app, home = (WRITER_JOB, by_url) if folder == str(writer) else (SHARED_APP, by_kafka)
            error = fields[2] if len(fields) > 2 else ""
            assert not error, f"Flink could not run {folder}: {error}"
            home("state", "--app-id", app, "--state", "FINISHED")

    _run_flink([writer, shared], work, platform)
    assert len(started) == 1, f"the shared job's id and start time were not read: {started}"

    spark_values = {**tables, "root": str(work / "spark")}
    spark_conf = {
        "spark.sql.warehouse.dir": str(work / "spark" / "warehouse"),
        "spark.openlineage.namespace": SPARK_NAMESPACE,
        "spark.openlineage.transport.type": "http",
        "spark.openlineage.transport.url": rentgen.http2kafka_url,
        "spark.openlineage.transport.endpoint": "/" + HTTP2KAFKA_ENDPOINT,
        "spark.openlineage.transport.auth.type": "api_key",
        "spark.openlineage.transport.auth.apiKey": token,
    }
    _run_spark(_statements(READER_SQL.format(**spark_values)), spark_conf)

    postgres = f"postgres://127.0.0.1:{tables['port']}"  # as both producers name the database
    yield Reported(
        big_orders=(postgres, f"{DATABASE}.public.prod_big_orders"),
        orders=(postgres, f"{DATABASE}.public.prod_orders"),
        customers=(postgres, f"{DATABASE}.public.prod_customers"),
        customers_archive=(postgres, f"{DATABASE}.public.prod_customers_archive"),
        flink_version=ensure(FLINK).flink.version,
        flink_job_id=started[0][0],
        flink_start_time=started[0][1],
        platforms=(by_url, by_kafka),
        token=token,
    )
    for home in (by_url, by_kafka):
        home.wait_services()


def _lineage(api, dataset_id: str, direction: str, granularity: str, depth: int = 1) -> dict:
    return api.get(
        "/v1/datasets/lineage", start_node_id=dataset_id, since=api.since(), direction=direction,
        depth=depth, granularity=granularity,
    )  # fmt: skip


def _nodes_of_table(api, table: str) -> set[tuple[str, str]]:
    """The (namespace, name) of every stored dataset whose name's last part is ``table``: every
    spelling of that table any producer sent."""
    found = api.datasets(table)
    return {dataset_identity(item) for item in found if item["data"]["name"].rsplit(".", 1)[-1] == table}


def _jobs_writing(answer: dict, dataset_id: str) -> set[tuple[str, str]]:
    """(name, type) of the jobs whose output is the dataset, in a JOB-granularity lineage answer."""
    jobs = answer["nodes"]["jobs"]
    return {
        (jobs[r["from"]["id"]]["name"], jobs[r["from"]["id"]]["type"])
        for r in answer["relations"]["outputs"]
        if r["from"]["kind"] == "JOB" and r["to"] == {"kind": "DATASET", "id": dataset_id}
    }


def _jobs_reading(answer: dict, dataset_id: str) -> set[tuple[str, str]]:
    jobs = answer["nodes"]["jobs"]
    return {
        (jobs[r["to"]["id"]]["name"], jobs[r["to"]["id"]]["type"])
        for r in answer["relations"]["inputs"]
        if r["to"]["kind"] == "JOB" and r["from"] == {"kind": "DATASET", "id": dataset_id}
    }


def test_a_table_planlineage_reports_written_and_openlineage_spark_read_is_one_dataset_node(reported, rentgen_api):
    """The Flink job planlineage reports writes public.prod_big_orders, the Spark job openlineage-spark
    reports reads it: in the backend one node, the Flink job upstream, the Spark job downstream."""
    node = rentgen_api.wait_dataset(*reported.big_orders)
    downstream = rentgen_api.wait(
        f"the Spark application reading {reported.big_orders[1]}",
        lambda: _lineage(rentgen_api, node["id"], "DOWNSTREAM", "JOB"),
        lambda answer: _jobs_reading(answer, node["id"]),
    )
    upstream = rentgen_api.wait(
        f"the Flink job writing {reported.big_orders[1]}",
        lambda: _lineage(rentgen_api, node["id"], "UPSTREAM", "JOB"),
        lambda answer: _jobs_writing(answer, node["id"]),
    )
    # Data.Rentgen types a job by its jobType facet: openlineage-flink's `FLINK` + `JOB`, which
    # planlineage writes too (a job it does not type so keeps no datasets), and a Spark application.
    assert _jobs_writing(upstream, node["id"]) == {(WRITER_JOB, "FLINK_JOB")}
    assert _jobs_reading(downstream, node["id"]) == {(READER_APP, "SPARK_APPLICATION")}

    # One node: no other spelling of the table by either producer (another location, a name
    # without the database) made a second dataset of it.
    assert _nodes_of_table(rentgen_api, "prod_big_orders") == {reported.big_orders}

    # One graph across the producers: from the table only planlineage names (the Flink job's
    # input) two hops down through the shared node to the table only openlineage-spark names.
    source = rentgen_api.wait_dataset(*reported.orders)
    graph = rentgen_api.wait(
        "the datasets two hops downstream of public.prod_orders",
        lambda: _lineage(rentgen_api, source["id"], "DOWNSTREAM", "DATASET", depth=2),
        lambda answer: any(d["name"].endswith("prod_customer_totals") for d in answer["nodes"]["datasets"].values()),
    )
    names = {d["name"] for d in graph["nodes"]["datasets"].values()}
    assert reported.big_orders[1] in names, names


def _run_datasets(api, run_id: str) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """The (namespace, name) of a run's inputs and of its outputs, from its lineage."""
    answer = api.get("/v1/runs/lineage", start_node_id=run_id, since=api.since(), direction="BOTH", granularity="RUN")
    datasets, relations = answer["nodes"]["datasets"], answer["relations"]
    run = {"kind": "RUN", "id": run_id}
    inputs = {dataset_identity(datasets[r["from"]["id"]]) for r in relations["inputs"] if r["to"] == run}
    outputs = {dataset_identity(datasets[r["to"]["id"]]) for r in relations["outputs"] if r["from"] == run}
    return inputs, outputs


def _shared_run(rentgen_api, reported: Reported) -> tuple[dict, dict]:
    """The one job named SHARED_JOB and its one run, once that run has ended."""
    job = rentgen_api.wait_job(SHARED_JOB)
    runs = rentgen_api.wait(
        f"the ended run of {SHARED_JOB}",
        lambda: rentgen_api.runs(job_id=job["id"]),
        lambda items: items and all(item["data"]["status"] == "SUCCEEDED" for item in items),
    )
    assert len(runs) == 1, f"{SHARED_JOB}: {len(runs)} runs, not the one both producers report: {runs}"
    return job, runs[0]


def test_planlineage_reports_a_listened_flink_job_on_the_listener_job_and_run(reported, rentgen_api):
    """openlineage-flink's detached listener and planlineage (coexisting) report one Flink job: in
    the backend one job, the listener's run (its Flink JobID), and planlineage's events on it."""
    from planlineage.emitter.run_ids import listener_run_id

    job, run = _shared_run(rentgen_api, reported)
    jobs = [item for item in rentgen_api.jobs(SHARED_JOB) if item["data"]["name"] == SHARED_JOB]
    assert len(jobs) == 1, f"{SHARED_JOB} is {len(jobs)} jobs: {jobs}"
    assert job["data"]["type"] == "FLINK_JOB"
    assert (job["data"]["location"]["type"], job["data"]["location"]["name"]) == ("unknown", SHARED_NAMESPACE)
    # Both producers tag the job with the engine's version from their processing_engine facet:
    # planlineage the version of the planner it compiled with, here the cluster's own, so the job
    # keeps one flink.version. openlineage_adapter.version differs by nature (the listener's
    # 1.53.0, planlineage's own version): the job shows one of them, by the order events arrive.
    tags = {tag["name"]: {value["value"] for value in tag["values"]} for tag in job["tags"]}
    assert tags.get("flink.version") == {reported.flink_version}, tags
    # The listener's run: its flink_job run facet gives the JobID; the id is the one it derives.
    assert run["data"]["external_id"] == reported.flink_job_id
    assert run["id"] == listener_run_id(reported.flink_job_id, reported.flink_start_time)

    # planlineage's events on that run: what only planlineage sends (the SQL job facet, redacted;
    # column lineage) is on the run's operation and its outputs.
    operations = rentgen_api.wait(
        f"the SQL of {SHARED_JOB}'s run",
        lambda: rentgen_api.operations(run["id"]),
        lambda items: any(item["data"].get("sql_query") for item in items),
    )
    queries = [item["data"]["sql_query"] for item in operations if item["data"].get("sql_query")]
    assert any("INSERT INTO pg_archive" in query for query in queries), queries
    assert not any(databases.PASSWORD in query for query in queries), "the SQL facet carries the password"
    archive = rentgen_api.wait_dataset(*reported.customers_archive)
    lineage = rentgen_api.wait(
        "column lineage into public.prod_customers_archive",
        lambda: rentgen_api.dataset_lineage(archive["id"]),
        lambda answer: answer["relations"].get("direct_column_lineage"),
    )
    customers = rentgen_api.wait_dataset(*reported.customers)
    edges = {
        (relation["from"]["id"], target, tuple(sorted(source["field"] for source in sources)))
        for relation in lineage["relations"]["direct_column_lineage"]
        if relation["to"]["id"] == archive["id"]
        for target, sources in relation["fields"].items()
    }
    assert (customers["id"], "name", ("name",)) in edges, edges

    # The run's tables: both producers name the JDBC tables identically, one node each. The
    # datagen source has no storage: planlineage names no dataset for it (docs/conformance.md),
    # while the listener reports it by Flink's fallback identity (empty namespace, the catalog
    # name), which Data.Rentgen files under its `unknown` location and no other producer of any
    # job could ever share. A third input would be planlineage inventing a name for it.
    for identity in (reported.customers, reported.customers_archive):
        assert _nodes_of_table(rentgen_api, identity[1].rsplit(".", 1)[1]) == {identity}
    inputs, outputs = _run_datasets(rentgen_api, run["id"])
    assert outputs == {reported.customers_archive}
    assert inputs == {reported.customers, LISTENER_GENERATOR}

    # planlineage reported the job only under the listener's job: the platform's name is no job.
    for platform in reported.platforms:
        platform.wait_services()
    assert not [item for item in rentgen_api.jobs(SHARED_APP) if item["data"]["name"] == SHARED_APP]


def test_every_event_planlineage_reported_was_delivered_and_no_secret_was_kept(reported, rentgen_api):
    """Nothing waits in either home's outbox once the runs ended: each transport delivered all.
    Neither the personal token (OPENLINEAGE_API_KEY) nor the database password of the jobs' SQL is
    in anything planlineage printed or in any file of its homes (state, logs, job files)."""
    # Only planlineage reports the writer: its run ends in the backend when planlineage's COMPLETE
    # arrives, sent by the compile service after the platform's last command, with no other.
    writer = rentgen_api.wait_job(WRITER_JOB)
    try:
        rentgen_api.wait(
            f"{WRITER_JOB}'s run ended by planlineage's COMPLETE",
            lambda: rentgen_api.runs(job_id=writer["id"]),
            lambda items: items and all(item["data"]["status"] == "SUCCEEDED" for item in items),
        )
    except AssertionError as error:
        raise AssertionError(f"{error}\n{reported.platforms[0].where_events_are()}") from None
    _shared_run(rentgen_api, reported)
    for platform in reported.platforms:
        platform.wait_services()
        listing = platform("outbox", "list")
        assert not listing.stdout, f"undelivered in {platform.home}: {listing.stdout}"
        assert "no lineage events are waiting" in listing.stderr, listing.stderr
        secrets = [reported.token, databases.PASSWORD]
        printed = [text for text in platform.printed if any(secret in text for secret in secrets)]
        assert not printed, f"a secret in planlineage's output: {printed}"
        kept = [
            path
            for path in platform.home.rglob("*")
            if path.is_file() and any(secret.encode() in path.read_bytes() for secret in secrets)
        ]
        assert not kept, f"a secret in planlineage's files: {kept}"
