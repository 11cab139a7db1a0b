"""Flink's own lineage with openlineage-flink's listener, run for real, against planlineage.

Every case of ``cases/flink/`` is executed by Flink of the version under test (its own jars, from
planlineage's provisioned venv) in a local mini cluster, bounded (datagen with a row count, files,
a JDBC scan of a throwaway PostgreSQL, a bounded Kafka scan of a throwaway broker), by ``FlinkProducer.java`` with the job-status-changed listener of openlineage-flink
(pinned in ``tests/artifacts.toml``) writing its events to a file; the real connector jars are on
its class path. planlineage extracts the same script twice: with its stand-ins (no jars, the
default) and with ``--jar`` the same connector jars. Each output, its inputs and every dataset's
symlinks are compared byte for byte with the listener's; a difference must be decided in
``decisions.toml`` (``[[flink]]``), a decision must still match a difference, the jar run must
give what the stand-in run gives, and ``docs/conformance.md`` must show the table this run measured.
The events themselves are compared too, at job and run level (``producer_diff.JobFacts``: the
``jobType`` fields, ``processing_engine``, the ``parent`` facet, the runId's version, and the kind
of each write a backend derives): planlineage's events are built from the same document as a
submission's are; each difference is decided once for every case (``facet = ...``).

Runs where a Flink version is chosen (``PLANLINEAGE_TEST_FLINK``; tox env ``conformance``). The
listener reads Flink's native lineage graph, which Flink has from 2.0 on.
"""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

VERSION = os.environ.get("PLANLINEAGE_TEST_FLINK")
if not VERSION:
    pytest.skip("set PLANLINEAGE_TEST_FLINK=2.2 (tox env conformance)", allow_module_level=True)

import databases  # noqa: E402 - tests/ helpers, after the skip
import kafka_broker  # noqa: E402
import maven_artifacts  # noqa: E402
from producer_diff import (  # noqa: E402
    UNDECIDED,
    JobFacts,
    Lineage,
    Placeholders,
    compare,
    compare_facts,
    decision,
    from_document,
    from_events,
    job_facts,
    load_decisions,
    needs,
    plain,
    read_events,
    set_aside_in_memory_symlinks,
    stale_facet_decisions,
)

HERE = Path(__file__).parent
CASES = sorted((HERE / "cases" / "flink").glob("*.sql"))
DECISIONS = load_decisions("flink")
ROOT = HERE.parents[1]
RUNNER = HERE / "FlinkProducer.java"
LISTENER_FACTORY = "io.openlineage.flink.listener.OpenLineageJobStatusChangedListenerFactory"
#: The real connectors each kind of case needs: on the producer's class path, and planlineage's --jar.
CONNECTORS = {
    "postgres": ("flink-connector-jdbc-core", "flink-connector-jdbc-postgres", "postgresql-jdbc"),
    "kafka": ("flink-sql-connector-kafka",),
}
PORTABLE = Placeholders()


@pytest.fixture(scope="module")
def postgres():
    with databases.postgres_server() as server:
        server.create_database("conformance")
        server.psql(
            "CREATE TABLE public.customers (id INT, name TEXT); INSERT INTO public.customers VALUES (1, 'ann'), (2, 'bo');"
            "CREATE TABLE public.customers_archive (id INT, name TEXT);"
            "CREATE TABLE public.city_counts (city TEXT PRIMARY KEY, n BIGINT);"
            "CREATE SCHEMA shop; CREATE TABLE shop.orders (id INT, customer_id INT, amount DOUBLE PRECISION);"
            "INSERT INTO shop.orders VALUES (1, 1, 5), (2, 2, 50);"
            "CREATE TABLE shop.big_orders (id INT, customer_id INT, amount DOUBLE PRECISION);",
            database="conformance",
        )
        yield server


@pytest.fixture(scope="module")
def kafka(tmp_path_factory):
    with kafka_broker.kafka_broker(tmp_path_factory.mktemp("kafka")) as broker:
        yield broker


def _runner_classes(classpath: list[str], folder: Path) -> Path:
    """FlinkProducer.java compiled against this Flink version's own jars."""
    from planlineage.planner.provision import find_java_tool

    javac = find_java_tool("javac")
    assert javac, "javac (a JDK) is needed to compile the producer's runner"
    done = subprocess.run(
        [javac, "-nowarn", "-d", str(folder), "-cp", ":".join(classpath), str(RUNNER)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return folder


def _write_case(folder: Path, name: str, text: str) -> tuple[Path, dict[str, str]]:
    from planlineage import script

    statements = folder / "statements"
    statements.mkdir(parents=True)
    settings = {}
    for number, statement in enumerate(script.split(text)):
        if statement.kind is script.Kind.SET and statement.set_pair:
            # as the SQL client and StreamPark do: a SET is the job's configuration, not a statement
            settings[statement.set_pair[0]] = statement.set_pair[1]
            continue
        (statements / f"{number:04d}.sql").write_text(statement.sql, encoding="utf-8")
    conf = {
        "openlineage.job.namespace": "conformance",
        "pipeline.name": name,
        **settings,  # a case may name its job itself
        "execution.job-status-changed-listeners": LISTENER_FACTORY,
        "openlineage.transport.type": "file",
        "openlineage.transport.location": str(folder / "events.jsonl"),
        "rest.bind-address": "127.0.0.1",
        "rest.address": "127.0.0.1",
        "parallelism.default": "1",
    }
    # java.util.Properties: '\', ':' and '=' in a value are escaped
    escaped = {k: v.replace("\\", "\\\\").replace(":", "\\:").replace("=", "\\=") for k, v in conf.items()}
    (folder / "conf.properties").write_text("".join(f"{k}={v}\n" for k, v in escaped.items()), encoding="utf-8")
    return folder, conf


@dataclass
class Measured:
    differences: list  # after the decided catalog-name splits are set aside
    error: str | None  # the producer's, running the case
    producer: Lineage  # as the listener reported it
    splits: Counter  # connector -> tables the listener named by catalog name only
    ours: Lineage  # planlineage with its stand-ins
    with_jars: Lineage | None  # planlineage with --jar the real connectors (cases that need them)
    shared: dict | None = None  # a case that gave the job's id: both producers' (type, job, run) per event
    in_memory_links: int = 0  # the listener's TABLE symlinks named after an in-memory catalog's table


#: What Data.Rentgen's Flink extractor assumes of a write no facet types (OutputTypeDTO.APPEND).
FLINK_DEFAULT_KIND = "APPEND"
IN_MEMORY_LINKS = "in-memory catalog"


def in_memory_tables(document: dict, text: str) -> set[str]:
    """The tables of the case that live in Flink's in-memory catalog (planlineage's own reading)."""
    from planlineage import script
    from planlineage.planner.sink_statements import script_writes
    from planlineage.registry.identity import IN_MEMORY, catalog_kind_of

    catalog_types = script_writes(script.split(text)).catalog_types
    names = {use["table"] for sink in document["sinks"] for use in (sink, *sink["inputs"])}
    return {name for name in names if catalog_kind_of({}, catalog_types, name) == IN_MEMORY}


def our_events(lineage, name: str, text: str) -> list[dict]:
    """planlineage's events of the case, as a submission's: START and COMPLETE, the script as SQL."""
    from planlineage.emitter.events import build_events, new_run_id, to_dict
    from planlineage.lifecycle.sql_facet import redacted as _redacted_sql

    run_id = new_run_id()
    return [
        to_dict(event)
        for event_type in ("START", "COMPLETE")
        for event in build_events(
            lineage,
            job_name=name,
            job_namespace="conformance",
            run_id=run_id,
            event_type=event_type,
            sql=_redacted_sql(text),
        )
    ]


def listener_facts(events: list[dict], document: dict) -> JobFacts:
    """The listener's facts, its outputs named as planlineage names them where the listener knows a
    table only by Flink's fallback identity (as set_aside_catalog_names does for datasets)."""
    facts = job_facts(events)
    tables = {
        ("", use["table"]): [(d["namespace"], d["name"]) for d in use["datasets"]]
        for sink in document["sinks"]
        for use in (sink, *sink["inputs"])
    }
    kinds: dict = {}
    for key, found in facts.output_kinds.items():
        for mapped in tables.get(key, [key]):
            kinds.setdefault(mapped, set()).update(found)
    facts.output_kinds = kinds
    return facts


def set_aside_catalog_names(producer: Lineage, document: dict) -> tuple[Lineage, Counter]:
    """The listener's lineage with each table it names only by Flink's fallback identity (empty
    namespace, ``catalog.database.table``: no identifier visitor knows the connector) replaced by
    the datasets planlineage gives that table, and how many such tables per connector. Those
    splits are decided per connector; what remains is compared byte for byte."""
    tables: dict[tuple[str, str], tuple[str, set]] = {}
    for sink in document["sinks"]:
        for use in (sink, *sink["inputs"]):
            tables[("", use["table"])] = (use["connector"], {(d["namespace"], d["name"]) for d in use["datasets"]})
    splits: Counter = Counter()
    for key in producer.symlinks:
        if key in tables:
            splits[tables[key][0]] += 1

    def mapped(key):
        return tables[key][1] if key in tables else {key}

    result = Lineage()
    for output, inputs in producer.outputs.items():
        for key in mapped(output):
            result.outputs.setdefault(key, set()).update(k for i in inputs for k in mapped(i))
    result.symlinks = {key: links for key, links in producer.symlinks.items() if key not in tables}
    return result, splits


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _shared_runs(case: dict, document: dict, jobs: list, extract, planner) -> dict:
    """The (event type, job namespace, job name, run id) of the listener's events of the case and of
    planlineage's, which coexists (lineage.flink-runs auto: the job's configuration names the
    listener) and reports the job under the listener's job and run, from the JobID and start time."""
    import json

    from planlineage.emitter.events import build_events, to_dict
    from planlineage.listener_conf import coexist

    assert len(jobs) == 1, f"a coexistence case runs one job, not {len(jobs)}"
    job_id, start = jobs[0]
    assert coexist.mode(None, case["conf"]) == "coexist"
    run = coexist.shared_run(case["conf"], case["name"], job_id, start)
    lineage = extract(case["text"], planner=planner, columns=True)
    ours = [
        to_dict(event)
        for event_type in ("START", "COMPLETE")
        for event in build_events(
            lineage, job_name=run.job_name, job_namespace=run.job_namespace, run_id=run.run_id, event_type=event_type
        )
    ]
    events = case["folder"] / "events.jsonl"
    theirs = [json.loads(line) for line in events.read_text(encoding="utf-8").splitlines() if line.strip()]

    def key(event):
        return (event["eventType"], event["job"]["namespace"], event["job"]["name"], event["run"]["runId"])

    return {"listener": [key(e) for e in theirs], "planlineage": [key(e) for e in ours], "events": ours}


@pytest.fixture(scope="module")
def measured(postgres, kafka, tmp_path_factory) -> dict[str, Measured]:
    """Each case run by the producer and read by planlineage, with stand-ins and with jars."""
    from planlineage.pipeline import extract
    from planlineage.planner.compiler import Planner
    from planlineage.planner.provision import ensure, find_java_tool

    provisioned = ensure(VERSION)
    assert provisioned.flink.version.split(".")[0] != "1", (
        f"Flink {VERSION}: openlineage-flink's listener reads Flink's native lineage graph, which Flink has from 2.0 on"
    )
    flink_jars = sorted(str(jar) for jar in provisioned.lib.glob("*.jar"))
    connector_jars = {
        need: [str(jar) for name in names for jar in maven_artifacts.resolve(name)]
        for need, names in CONNECTORS.items()
    }
    listener = [str(jar) for jar in maven_artifacts.resolve("openlineage-flink")]
    every_connector = [jar for jars in connector_jars.values() for jar in jars]
    classes = _runner_classes(flink_jars, tmp_path_factory.mktemp("runner"))
    values = {
        "pg": f"jdbc:postgresql://127.0.0.1:{postgres.port}/conformance",
        "pg_user": databases.SUPERUSER,
        "pg_password": databases.PASSWORD,
        "kafka": kafka.bootstrap,
        "rest_port": _free_port(),  # a case that sets rest.port: the listener asks that REST API
    }
    cases = []
    for path in CASES:
        root = tmp_path_factory.mktemp(path.stem)
        raw = path.read_text(encoding="utf-8")
        text = raw.format(root=root, **values)
        folder, conf = _write_case(root / "case", path.stem, text)
        jars = [jar for need in sorted(needs(raw)) for jar in connector_jars[need]]
        cases.append({"name": path.stem, "text": text, "folder": folder, "root": str(root), "jars": jars, "conf": conf})
    done = subprocess.run(
        [
            "nice",
            find_java_tool("java") or "java",
            "-Xmx768m",
            "-XX:+UseSerialGC",
            "-cp",
            ":".join([str(classes), *flink_jars, *every_connector, *listener]),
            "FlinkProducer",
            *(str(case["folder"]) for case in cases),
        ],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    errors = dict(line.split("\t")[1:3] for line in done.stdout.splitlines() if line.startswith("CASE\t"))
    started = {}  # case folder -> (Flink JobID, start time in ms) of its jobs, where the case asked
    for line in done.stdout.splitlines():
        if line.startswith("JOB\t"):
            folder, job_id, start = line.split("\t")[1:4]
            started.setdefault(folder, []).append((job_id, int(start)))
    results = {}
    with Planner(provisioned) as planner:
        for case in cases:
            events = case["folder"] / "events.jsonl"
            producer = from_events(events) if events.exists() else Lineage()
            lineage = extract(case["text"], planner=planner)
            document = lineage.model_dump(by_alias=True)
            ours = from_document(document)
            with_jars = None
            if case["jars"]:
                with_jars = from_document(
                    extract(case["text"], jars=case["jars"], planner=planner).model_dump(by_alias=True)
                )
            compared, splits = set_aside_catalog_names(producer, document)
            compared, links = set_aside_in_memory_symlinks(compared, in_memory_tables(document, case["text"]))
            error = errors.get(str(case["folder"])) or None
            shared = None
            if str(case["folder"]) in started:
                shared = _shared_runs(case, document, started[str(case["folder"])], extract, planner)
            facets = compare_facts(
                listener_facts(read_events(events), document),
                job_facts(our_events(lineage, case["name"], case["text"])),
                default_kind=FLINK_DEFAULT_KIND,
            )
            results[case["name"]] = Measured(
                compare(compared, ours) + facets, error, producer, splits, ours, with_jars, shared, links
            )
            PORTABLE.by_case[case["name"]] = {
                case["root"]: "{root}",
                f"127.0.0.1:{postgres.port}": "127.0.0.1:{port}",
                kafka.bootstrap: "127.0.0.1:{kafka_port}",
            }
    return results


def _decision(case: str, difference) -> dict | None:
    return decision(DECISIONS, case, difference, PORTABLE)


def _split_decision(connector: str) -> dict | None:
    return next((d for d in DECISIONS if d.get("split") == connector), None)


def _links_decision() -> dict | None:
    return next((d for d in DECISIONS if d.get("symlinks") == IN_MEMORY_LINKS), None)


def test_every_case_runs_for_real_through_the_producer(measured):
    assert len(measured) >= 25
    failed = {name: m.error for name, m in measured.items() if m.error}
    assert not failed, f"the producer could not run: {failed}"
    silent = [name for name, m in measured.items() if not m.producer.outputs]
    assert not silent, f"the producer reported no output for: {silent}"


def test_every_difference_is_decided_and_every_decision_still_holds(measured):
    undecided = [
        f"{name}: {PORTABLE.apply(name, difference.describe())}"
        for name, m in measured.items()
        for difference in m.differences
        if _decision(name, difference) is None
    ]
    undecided += [
        f"{name}: the listener names {n} {connector} table(s) by catalog name only"
        for name, m in measured.items()
        for connector, n in m.splits.items()
        if _split_decision(connector) is None
    ]
    links = sum(m.in_memory_links for m in measured.values())
    if links and _links_decision() is None:
        undecided.append(f"the listener attaches {links} TABLE symlink(s) named after in-memory catalog tables")
    assert not undecided, "differences from openlineage-flink nobody decided:\n" + "\n".join(undecided)
    seen = {
        (name, d.kind, PORTABLE.apply(name, " ".join(d.dataset))) for name, m in measured.items() for d in m.differences
    }
    split = {connector for m in measured.values() for connector in m.splits}
    every = [d for m in measured.values() for d in m.differences]
    stale = stale_facet_decisions(DECISIONS, every)
    stale += [d for d in DECISIONS if "split" in d and d["split"] not in split]
    stale += [d for d in DECISIONS if d.get("symlinks") == IN_MEMORY_LINKS and not links]
    stale += [d for d in DECISIONS if "case" in d and (d["case"], d["kind"], d["dataset"]) not in seen]
    assert not stale, f"decisions whose difference is gone (remove them): {stale}"


def test_the_real_connector_jars_give_what_the_stand_ins_give(measured):
    jar_cases = {name: m for name, m in measured.items() if m.with_jars is not None}
    assert jar_cases, "no case runs planlineage with the real connector jars"
    differing = {
        name: [PORTABLE.apply(name, d.describe()) for d in compare(m.with_jars, m.ours)]
        for name, m in jar_cases.items()
        if compare(m.with_jars, m.ours)
    }
    assert not differing, f"--jar and the stand-ins disagree: {differing}"


def report(measured) -> str:
    lines = [
        f"| case (Flink {VERSION}) | outputs | listener names by catalog only | `--jar` run | verdict |",
        "|---|---|---|---|---|",
    ]
    for name, m in sorted(measured.items()):
        jar_run = "—" if m.with_jars is None else ("same" if not compare(m.with_jars, m.ours) else "**differs**")
        split = ", ".join(f"{connector} ×{n}" for connector, n in sorted(m.splits.items())) or "—"
        verdict = case_verdict(name, m.differences, "identical" if not m.splits else "identical apart from those")
        lines.append(f"| `{name}` | {len(m.producer.outputs)} | {split} | {jar_run} | {verdict} |")
    lines += ["", "| connector the listener names by catalog only | verdict |", "|---|---|"]
    for connector in sorted({c for m in measured.values() for c in m.splits}):
        lines.append(f"| {connector} | {(_split_decision(connector) or UNDECIDED)['verdict']} |")
    links = sum(m.in_memory_links for m in measured.values())
    if links:
        lines.append(
            f"| TABLE symlinks named after in-memory catalog tables (×{links}) | {(_links_decision() or UNDECIDED)['verdict']} |"
        )
    lines += facet_table([(name, d) for name, m in measured.items() for d in m.differences])
    return "\n".join(lines) + "\n"


def case_verdict(name: str, differences: list, identical: str) -> str:
    """A case's verdict: each dataset difference with its decision; job- and run-level facets only
    named (their decisions hold for every case: the table below)."""
    if not differences:
        return identical
    parts = []
    for d in differences:
        decided = _decision(name, d) or UNDECIDED
        parts.append(
            f"{d.kind}: {plain(d.producer)} / {plain(d.planlineage)} (below)"
            if "facet" in decided
            else f"{PORTABLE.apply(name, d.describe())} — {decided['verdict']}"
        )
    return "; ".join(parts)


def facet_table(differences: list) -> list[str]:
    """One row per job- or run-level difference (listener / planlineage), the cases, the verdict."""
    rows: dict[tuple[str, str, str], list[str]] = {}
    for name, d in differences:
        decided = _decision(name, d)
        if decided is None or "facet" in decided:
            rows.setdefault((d.kind, plain(d.producer), plain(d.planlineage)), []).append(name)
    if not rows:
        return []
    lines = ["", "| job / run facet | listener | planlineage | cases | verdict |", "|---|---|---|---|---|"]
    for (kind, theirs, ours), names in sorted(rows.items()):
        from producer_diff import Difference

        decided = _decision(names[0], Difference(kind, ("job", ""), theirs, ours)) or UNDECIDED
        lines.append(f"| {kind} | {theirs} | {ours} | {len(names)} | {decided['verdict']} |")
    return lines


def test_the_documented_table_is_this_run(measured, tmp_path):
    table = report(measured)
    target = Path(os.environ.get("PLANLINEAGE_CONFORMANCE_FLINK_REPORT") or tmp_path / "conformance-flink.md")
    target.write_text(table, encoding="utf-8")
    documented = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
    assert table in documented, f"docs/conformance.md does not show this run's table (written to {target})"


def test_planlineage_coexists_with_the_listener_on_one_job_and_one_run(measured):
    """lineage.flink-runs auto: a job whose configuration names openlineage-flink's listener is
    reported under the listener's job, and with its detached tracking under the listener's run id
    (derived from the JobID and the start time the platform reads from Flink's REST API); what
    planlineage adds (column lineage, per-sink child jobs) hangs off that one run."""
    shared = {name: m.shared for name, m in measured.items() if m.shared}
    assert shared, "no case gives the job's id and start time (rest.port) to check the shared run"
    for name, runs in shared.items():
        listener = {(job_ns, job, run) for _, job_ns, job, run in runs["listener"]}
        assert len(listener) == 1, f"{name}: the listener's events are not one job and one run: {listener}"
        assert {kind for kind, *_ in runs["listener"]} >= {"START"}, f"{name}: no START from the listener"
        parents = {(job_ns, job, run) for _, job_ns, job, run in runs["planlineage"] if job == next(iter(listener))[1]}
        assert parents == listener, f"{name}: planlineage's run {parents} is not the listener's {listener}"
        children = [e for e in runs["events"] if "parent" in e["run"]["facets"]]
        assert all(e["run"]["facets"]["parent"]["run"]["runId"] == next(iter(listener))[2] for e in children)
        assert any("columnLineage" in out.get("facets", {}) for e in runs["events"] for out in e.get("outputs", [])), (
            f"{name}: planlineage's events carry no column lineage"
        )
        complete = [e for e in runs["events"] if e["eventType"] == "COMPLETE" and e["outputs"]]
        assert complete, f"{name}: planlineage's COMPLETE events carry no datasets"
