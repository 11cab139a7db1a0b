"""openlineage-spark itself, run for real, against planlineage on the same scripts.

Every case of ``cases/spark/`` is executed by Spark of the version under test with the official
OpenLineage listener (pinned in ``tests/artifacts.toml``) writing its events to a file, on local
files, a throwaway PostgreSQL and a local Iceberg catalog (a case names its own Spark conf in
``-- conf: key = value`` lines); planlineage reads the same script, with the same conf, with
Spark's parser. Each
output, its inputs and every dataset's symlinks are compared byte for byte. A difference must be
decided in ``decisions.toml`` (why it is right, or what fixes it), a decision must still match a
difference, and ``docs/conformance.md`` must show the table this run measured. The events are
compared at job and run level too (``producer_diff.JobFacts``), each difference decided once for
every case (``facet = ...``).

Runs where a Spark version is chosen (``PLANLINEAGE_TEST_SPARK``; tox env ``conformance``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

VERSION = os.environ.get("PLANLINEAGE_TEST_SPARK")
if not VERSION:
    pytest.skip("set PLANLINEAGE_TEST_SPARK=3.5 or 4.0 (tox env conformance)", allow_module_level=True)

import databases  # noqa: E402 - tests/ helpers, after the skip
import maven_artifacts  # noqa: E402
from producer_diff import (  # noqa: E402
    SPARK_DEFINITIONS,
    UNDECIDED,
    Difference,
    Placeholders,
    compare,
    compare_facts,
    decision,
    from_document,
    from_events,
    job_facts,
    load_decisions,
    plain,
    read_events,
    stale_facet_decisions,
)

HERE = Path(__file__).parent
CASES = sorted((HERE / "cases" / "spark").glob("*.sql"))
DECISIONS = load_decisions("spark")
ROOT = HERE.parents[1]
LISTENER = {"3.5": "openlineage-spark_2_12", "4.0": "openlineage-spark_2_13"}
ICEBERG = {"3.5": "iceberg-spark-runtime-3_5", "4.0": "iceberg-spark-runtime-4_0"}
#: A case's own Spark conf: ``-- conf: key = value`` lines (an Iceberg catalog, its extensions).
CONF_LINE = re.compile(r"^--\s*conf:\s*([^=\s]+)\s*=\s*(.*?)\s*$", re.MULTILINE)
PORTABLE = Placeholders()


def _statements(text: str) -> list[str]:
    from planlineage import script

    return [statement.sql for statement in script.split(text)]


@pytest.fixture(scope="module")
def postgres():
    with databases.postgres_server() as server:
        server.create_database("conformance")
        server.psql(
            "CREATE TABLE public.customers (id INT, name TEXT); INSERT INTO public.customers VALUES (1, 'ann');"
            "CREATE TABLE public.customers_archive (id INT, name TEXT);",
            database="conformance",
        )
        yield server


@pytest.fixture(scope="module")
def measured(postgres, tmp_path_factory):
    """Each case run by the producer and read by planlineage: name -> (differences, error)."""
    from planlineage.spark import extract
    from planlineage.spark.client import SparkParser
    from planlineage.spark.provision import ensure

    provisioned = ensure(VERSION)
    jars = [
        str(jar)
        for name in (LISTENER[VERSION], ICEBERG[VERSION], "postgresql-jdbc")
        for jar in maven_artifacts.resolve(name)
    ]
    values = {
        "pg": f"jdbc:postgresql://127.0.0.1:{postgres.port}/conformance",
        "pg_user": databases.SUPERUSER,
        "pg_password": databases.PASSWORD,
    }
    cases = []
    for path in CASES:
        root = tmp_path_factory.mktemp(path.stem)
        text = path.read_text(encoding="utf-8").format(root=root, **values)
        conf = {"spark.sql.warehouse.dir": f"{root}/warehouse", **dict(CONF_LINE.findall(text))}
        cases.append(
            {"name": path.stem, "text": text, "conf": conf, "events": str(root / "events.jsonl"), "root": str(root)}
        )
    request = {
        "jars": jars,
        "cases": [{**case, "statements": _statements(case["text"])} for case in cases],
    }
    env = {**os.environ, "PYSPARK_PYTHON": str(provisioned.python)}
    done = subprocess.run(
        [str(provisioned.python), str(HERE / "spark_producer.py")],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=1800,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    errors = {line["name"]: line["error"] for line in map(json.loads, done.stdout.splitlines())}
    results = {}
    with SparkParser(provisioned) as parser:
        for case in cases:
            lineage = extract(case["text"], VERSION, conf=case["conf"], parser=parser)
            document = lineage.model_dump(by_alias=True)
            producer = from_events(Path(case["events"]))
            facets = compare_facts(
                job_facts(read_events(Path(case["events"])), skip_jobs=SPARK_DEFINITIONS),
                job_facts(our_events(lineage, case["name"], case["text"])),
            )
            differences = compare(producer, from_document(document)) + facets
            results[case["name"]] = (differences, errors.get(case["name"]), producer)
            PORTABLE.by_case[case["name"]] = {case["root"]: "{root}", f"127.0.0.1:{postgres.port}": "127.0.0.1:{port}"}
    return results


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
            sql=_redacted_sql(text, "spark"),
        )
    ]


def _decision(case: str, difference) -> dict | None:
    return decision(DECISIONS, case, difference, PORTABLE)


def test_every_case_runs_for_real_through_the_producer(measured):
    assert len(measured) >= 15
    failed = {name: error for name, (_, error, _) in measured.items() if error}
    assert not failed, f"the producer could not run: {failed}"
    silent = [name for name, (_, _, producer) in measured.items() if not producer.outputs]
    assert not silent, f"the producer reported no output for: {silent}"


def test_every_difference_is_decided_and_every_decision_still_holds(measured):
    undecided = [
        f"{name}: {PORTABLE.apply(name, difference.describe())}"
        for name, (differences, _, _) in measured.items()
        for difference in differences
        if _decision(name, difference) is None
    ]
    assert not undecided, "differences from openlineage-spark nobody decided:\n" + "\n".join(undecided)
    seen = {
        (name, d.kind, PORTABLE.apply(name, " ".join(d.dataset)))
        for name, (differences, _, _) in measured.items()
        for d in differences
    }
    every = [d for differences, _, _ in measured.values() for d in differences]
    stale = stale_facet_decisions(DECISIONS, every)
    stale += [d for d in DECISIONS if "case" in d and (d["case"], d["kind"], d["dataset"]) not in seen]
    assert not stale, f"decisions whose difference is gone (remove them): {stale}"


def report(measured) -> str:
    lines = [
        f"| case (Spark {VERSION}) | outputs | verdict |",
        "|---|---|---|",
    ]
    for name, (differences, _, producer) in sorted(measured.items()):
        outputs = len(set(producer.outputs) - producer.definitions_only)
        parts = []
        for d in differences:
            decided = _decision(name, d) or UNDECIDED
            parts.append(
                f"{d.kind}: {plain(d.producer)} / {plain(d.planlineage)} (below)"
                if "facet" in decided
                else f"{PORTABLE.apply(name, d.describe())} — {decided['verdict']}"
            )
        lines.append(f"| `{name}` | {outputs} | {'; '.join(parts) or 'identical'} |")
    rows: dict[tuple[str, str, str], list[str]] = {}
    for name, (differences, _, _) in measured.items():
        for d in differences:
            decided = _decision(name, d)
            if decided is None or "facet" in decided:
                rows.setdefault((d.kind, plain(d.producer), plain(d.planlineage)), []).append(name)
    if rows:
        lines += [
            "",
            "| job / run facet | openlineage-spark | planlineage | cases | verdict |",
            "|---|---|---|---|---|",
        ]
        for (kind, theirs, ours), names in sorted(rows.items()):
            decided = _decision(names[0], Difference(kind, ("job", ""), theirs, ours)) or UNDECIDED
            lines.append(f"| {kind} | {theirs} | {ours} | {len(names)} | {decided['verdict']} |")
    return "\n".join(lines) + "\n"


def test_the_documented_table_is_this_run(measured, tmp_path):
    table = report(measured)
    target = Path(os.environ.get("PLANLINEAGE_CONFORMANCE_REPORT") or tmp_path / "conformance.md")
    target.write_text(table, encoding="utf-8")
    documented = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
    assert table in documented, f"docs/conformance.md does not show this run's table (written to {target})"
