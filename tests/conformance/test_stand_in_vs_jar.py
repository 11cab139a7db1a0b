"""Stand-in versus real connector: every example (examples/) and every plan-fixture script
(tests/fixtures/sql, each after its _tables.sql) is extracted by planlineage on Flink 2.2 twice:
with its stand-ins (no jars, the default) and with ``--jar`` the real connector jars pinned in
tests/artifacts.toml for the connectors the script uses (kafka and upsert-kafka:
flink-sql-connector-kafka; jdbc: flink-connector-jdbc-core with the PostgreSQL dialect and driver;
filesystem, datagen, print and blackhole are Flink's own, in both runs; a script with a JDBC URL
of a dialect that has no pinned jar, MySQL or ClickHouse, keeps the JDBC stand-in in both runs,
as the real connector refuses a URL without its dialect jar). Sinks, inputs, every
dataset's identity and symlinks, and the column lineage must be the same; a difference must be
decided in decisions.toml (``[[jar]]``, per script and table) and still happen.

CI runs the examples and every fourth fixture script (in name order) to keep the conformance env's
time; ``PLANLINEAGE_CONFORMANCE_SCRIPTS=all`` runs every script.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

VERSION = os.environ.get("PLANLINEAGE_TEST_FLINK")
if not VERSION:
    pytest.skip("set PLANLINEAGE_TEST_FLINK=2.2 (tox env conformance)", allow_module_level=True)

import maven_artifacts  # noqa: E402 - tests/ helpers, after the skip
from producer_diff import load_decisions  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "sql"
DECISIONS = load_decisions("jar")
#: connector -> the pinned artifacts that are its real jar (Flink's built-in connectors have none)
JARS = {
    "kafka": ("flink-sql-connector-kafka",),
    "upsert-kafka": ("flink-sql-connector-kafka",),
    "jdbc": ("flink-connector-jdbc-core", "flink-connector-jdbc-postgres", "postgresql-jdbc"),
}
CONNECTOR = re.compile(r"'connector'\s*=\s*'([^']+)'")
JDBC_URL = re.compile(r"'url'\s*=\s*'jdbc:([a-z0-9]+):")
#: JDBC dialects with a pinned jar; flink-connector-jdbc-mysql 4.0.0-2.0 is not served by the
#: registry this project's machines reach, and the connector has no ClickHouse dialect
PINNED_DIALECTS = {"postgresql"}


def scripts() -> dict[str, str]:
    shared = (FIXTURES / "_tables.sql").read_text(encoding="utf-8")
    fixtures = sorted(p for p in FIXTURES.glob("*.sql") if not p.name.startswith("_"))
    if os.environ.get("PLANLINEAGE_CONFORMANCE_SCRIPTS") != "all":
        fixtures = fixtures[::4]
    found = {f"examples/{p.name}": p.read_text(encoding="utf-8") for p in sorted((ROOT / "examples").glob("*.sql"))}
    found.update({f"fixtures/{p.name}": shared + "\n" + p.read_text(encoding="utf-8") for p in fixtures})
    return found


def _view(document: dict) -> dict:
    """What must be the same: per sink its datasets (with symlinks), method and lifecycle, its
    inputs (table, connector, datasets) and its column lineage."""

    def datasets(use):
        return sorted(
            (d["namespace"], d["name"], tuple(sorted((s["namespace"], s["name"], s["type"]) for s in d["symlinks"])))
            for d in use["datasets"]
        )

    return {
        sink["table"]: {
            "connector": sink["connector"],
            "datasets": datasets(sink),
            "method": sink.get("method"),
            "lifecycle": sink.get("lifecycleStateChange", sink.get("lifecycle_state_change")),
            "inputs": sorted((i["table"], i["connector"] or "", str(datasets(i))) for i in sink["inputs"]),
            "columns": sink.get("columns"),
        }
        for sink in document["sinks"]
    }


def _differences(stand_in: dict, real: dict) -> list[tuple[str, str]]:
    """(table, what differs) between the two runs; ("*", "refused") when only the jar run's compile
    fails, ("*", "refused by stand-ins") when only the stand-in run's does (both refusing agree)."""
    if "refused" in real or "refused" in stand_in:
        if "refused" in real and "refused" in stand_in:
            return []
        return [("*", "refused" if "refused" in real else "refused by stand-ins")]
    stand_in, real = _view(stand_in), _view(real)
    out = []
    for table in sorted(set(stand_in) | set(real)):
        a, b = stand_in.get(table), real.get(table)
        if a is None or b is None:
            out.append((table, "sink only with " + ("--jar" if a is None else "stand-ins")))
            continue
        out += [(table, key) for key in a if a[key] != b[key]]
    return out


@pytest.fixture(scope="module")
def runs():
    from planlineage.errors import ExtractError
    from planlineage.pipeline import extract
    from planlineage.planner.compiler import Planner
    from planlineage.planner.provision import ensure

    provisioned = ensure(VERSION)
    jar_paths = {name: [str(j) for j in maven_artifacts.resolve(name)] for names in JARS.values() for name in names}
    results = {}
    with Planner(provisioned) as planner:
        for name, text in scripts().items():
            used = set(CONNECTOR.findall(text))
            unpinned = set(JDBC_URL.findall(text)) - PINNED_DIALECTS
            real = used & set(JARS) - ({"jdbc"} if unpinned else set())
            jars = sorted({j for c in real for artifact in JARS[c] for j in jar_paths[artifact]})
            try:
                stand_in = extract(text, planner=planner, columns=True).model_dump(by_alias=True)
            except ExtractError as refused:  # a sink refuses the query's changes, as the real one would
                stand_in = {"sinks": [], "refused": str(refused).split(": ", 1)[-1][:300]}
            try:
                with_jars = extract(text, jars=jars, planner=planner, columns=True).model_dump(by_alias=True)
            except ExtractError as refused:  # the real connector refuses what the stand-in accepts
                with_jars = {"sinks": [], "refused": str(refused).split(": ", 1)[-1][:300]}
            results[name] = (real, stand_in, with_jars)
    return results


def _decided(script: str, table: str, what: str) -> dict | None:
    return next(
        (d for d in DECISIONS if d["script"] == script and d["table"] == table and d["what"] == what),
        None,
    )


def test_every_script_with_a_real_jar_connector_is_run_both_ways(runs):
    with_jar = [name for name, (used, _, _) in runs.items() if used & set(JARS)]
    assert any(n.startswith("examples/") for n in with_jar) and any(n.startswith("fixtures/") for n in with_jar)
    empty = [name for name, (_, stand_in, _) in runs.items() if not stand_in["sinks"] and "refused" not in stand_in]
    assert not empty, f"no sink read from: {empty}"


def test_stand_ins_and_real_jars_give_the_same_lineage(runs):
    undecided = []
    seen = set()
    for name, (_, stand_in, real) in runs.items():
        for table, what in _differences(stand_in, real):
            seen.add((name, table, what))
            if _decided(name, table, what) is None:
                a = stand_in.get("refused") or _view(stand_in).get(table, {}).get(what)
                b = real.get("refused") or _view(real).get(table, {}).get(what)
                undecided.append(f"{name} {table} {what}: stand-ins {a!r}, --jar {b!r}")
    assert not undecided, "stand-ins and real jars differ, undecided:\n" + "\n".join(undecided)
    sampled = set(scripts())
    stale = [d for d in DECISIONS if d["script"] in sampled and (d["script"], d["table"], d["what"]) not in seen]
    assert not stale, f"decisions whose difference is gone (remove them): {stale}"
