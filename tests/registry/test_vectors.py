"""Every identity vector, byte for byte: the shared conformance set (OpenLineage's own unit
tests) and our extra set (more ported OpenLineage cases and this registry's edge cases)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planlineage.registry import load_config, resolve

DATA = Path(__file__).resolve().parents[1] / "data"
FAKE_SECRET = "hunter2-FAKE"

BASE = json.loads((DATA / "identity-vectors.json").read_text())
EXTRA_FILE = json.loads((DATA / "identity-vectors-extra.json").read_text())
EXTRA = EXTRA_FILE["vectors"]


def _id(v: dict) -> str:
    o = v["options"]
    return f"{o.get('connector')}:{o.get('url') or o.get('path') or o.get('topic') or o.get('hostname') or ''}"[:80]


def _config(vector: dict, tmp_path: Path):
    spec = vector.get("config")
    if spec is None:
        return None
    path = None
    if "toml" in spec:
        path = tmp_path / "identity.toml"
        path.write_text(spec["toml"])
    return load_config(
        path,
        profile=spec.get("profile", "openlineage"),
        metalake=spec.get("metalake"),
        properties=spec.get("properties"),
    )


def _check(vector: dict, tmp_path: Path, catalog_kind: str | None = None) -> None:
    """The vector as openlineage-flink names it when the table lives in a persistent catalog
    (`catalog_kind` "hive", or a catalog the resolver is not told of); in Flink's `default_catalog`
    the same, less the TABLE symlink named after the Flink table, which names nothing outside the
    job (issue #37)."""
    table = vector.get("table", "")
    res = resolve(
        vector["options"],
        table=table,
        connector=vector.get("connector"),
        config=_config(vector, tmp_path),
        catalog_kind=catalog_kind,
    )
    got = [(d.namespace, d.name) for d in res.datasets]
    want = [(e["namespace"], e["name"]) for e in vector["expected"]]
    assert got == want
    for dataset, expected in zip(res.datasets, vector["expected"]):
        if "symlinks" in expected:
            links = expected["symlinks"]
            if catalog_kind is None and table.startswith("default_catalog."):
                links = [s for s in links if not (s["type"] == "TABLE" and s["name"] == table)]
            assert [s.model_dump() for s in dataset.symlinks] == links
        elif not table:
            assert dataset.symlinks == []
    assert res.warnings == vector.get("warnings", [])
    dumped = json.dumps([d.model_dump() for d in res.datasets]) + json.dumps(res.warnings)
    assert FAKE_SECRET not in dumped


def test_every_vector_names_its_reference():
    assert all(v.get("reference") for v in BASE)
    assert EXTRA_FILE.get("reference") and all(v.get("reference") for v in EXTRA)


@pytest.mark.parametrize("vector", BASE, ids=[_id(v) for v in BASE])
def test_conformance_vector(vector, tmp_path):
    _check(vector, tmp_path)


@pytest.mark.parametrize("vector", EXTRA, ids=[_id(v) for v in EXTRA])
def test_extra_vector(vector, tmp_path):
    _check(vector, tmp_path)


@pytest.mark.parametrize("vector", BASE + EXTRA, ids=[_id(v) for v in BASE + EXTRA])
def test_vector_in_a_persistent_catalog_keeps_the_flink_table_symlink(vector, tmp_path):
    _check(vector, tmp_path, catalog_kind="hive")


def test_only_a_persistent_catalogs_table_name_is_a_symlink():
    """default_catalog / any generic_in_memory catalog / a temporary table: no TABLE symlink of
    the Flink name (a backend would store it as a second dataset); a Hive or Paimon catalog's
    table: the symlink, as openlineage-flink's Kafka visitor attaches it."""
    from planlineage.registry.identity import catalog_kind_of

    options = {"connector": "kafka", "topic": "t", "properties.bootstrap.servers": "b1:9092"}
    in_memory = resolve(options, table="default_catalog.default_database.t")
    assert [d.symlinks for d in in_memory.datasets] == [[]]
    mem = catalog_kind_of(options, {"mem": "generic_in_memory"}, "mem.db.t")
    assert resolve(options, table="mem.db.t", catalog_kind=mem).datasets[0].symlinks == []
    hive = catalog_kind_of(options, {"h": "hive", "mem": "generic_in_memory"}, "h.db.t")
    assert hive == "hive"
    [linked] = resolve(options, table="h.db.t", catalog_kind=hive).datasets
    assert [(s.namespace, s.name, s.type) for s in linked.symlinks] == [("kafka://b1:9092", "h.db.t", "TABLE")]
    # A stood-in catalog's table says its catalog's type in its options.
    assert catalog_kind_of({**options, "planlineage.catalog-type": "paimon"}, {}, "p.db.t") == "paimon"
    # A catalog the script does not create is defined outside it (a catalog store): a real one.
    assert catalog_kind_of(options, {}, "elsewhere.db.t") == "unknown"
    assert resolve(options, table="elsewhere.db.t").datasets[0].symlinks != []


@pytest.mark.parametrize("vector", BASE + EXTRA, ids=[_id(v) for v in BASE + EXTRA])
def test_secret_options_never_leave(vector, tmp_path):
    """Add every kind of secret option to every vector: none may show up anywhere."""
    options = dict(vector["options"])
    options.update(
        {
            "password": FAKE_SECRET,
            "properties.sasl.jaas.config": f'PlainLoginModule required username="u" password="{FAKE_SECRET}";',
            "fs.s3a.secret.key": FAKE_SECRET,
            "token": FAKE_SECRET,
        }
    )
    res = resolve(
        options, table=vector.get("table", ""), connector=vector.get("connector"), config=_config(vector, tmp_path)
    )
    assert FAKE_SECRET not in json.dumps([d.model_dump() for d in res.datasets]) + json.dumps(res.warnings)
    assert [(d.namespace, d.name) for d in res.datasets] == [(e["namespace"], e["name"]) for e in vector["expected"]]
