"""Identity configuration end to end through `extract`: user rules, resolvers, symlinks, profiles."""

import json
import subprocess
import sys

from planlineage.pipeline import extract
from planlineage.registry import load_config

D = "default_catalog.default_database."
SCRIPT = """
CREATE TABLE events (id BIGINT, v STRING) WITH ('connector' = 'kafka', 'topic' = 'events',
  'properties.bootstrap.servers' = 'kafka-1.prod:9092,kafka-2.prod:9092', 'format' = 'json');
CREATE TABLE facts (id BIGINT, v STRING) WITH ('connector' = 'doris', 'fenodes' = 'fe1.prod:8030',
  'table.identifier' = 'dw.facts', 'username' = 'u', 'password' = 'doris-FAKE-secret');
INSERT INTO facts SELECT id, v FROM events;
"""
RULES = """
[connectors.doris]
namespace = "doris://{fenodes}"
name = "{table.identifier}"

[dataset.namespaceResolvers.kafka-prod]
type = "hostList"
hosts = ["kafka-1.prod", "kafka-2.prod"]
schema = "kafka"
"""


def test_without_rules_an_unknown_connector_warns(planner):
    lineage = extract(SCRIPT, planner=planner)
    (sink,) = lineage.sinks
    assert sink.connector == "doris" and sink.datasets == []
    assert lineage.warnings == [f"table {D}facts: no identity rule for connector 'doris'"]


def test_user_rules_and_resolvers_apply_with_symlinks(planner, tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text(RULES)
    lineage = extract(SCRIPT, planner=planner, identity=load_config(rules))
    (sink,) = lineage.sinks
    assert lineage.warnings == []
    assert [(d.namespace, d.name) for d in sink.datasets] == [("doris://fe1.prod:8030", "dw.facts")]
    assert sink.datasets[0].symlinks == []  # a default_catalog table: its name is no symlink (issue #37)
    (source,) = sink.inputs
    assert [(d.namespace, d.name) for d in source.datasets] == [("kafka://kafka-prod:9092", "events")]


def test_gravitino_profile_names_by_metalake_and_keeps_the_physical_address(planner, tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text(RULES)
    lineage = extract(SCRIPT, planner=planner, identity=load_config(rules, profile="gravitino", metalake="lake"))
    (sink,) = lineage.sinks
    assert [(d.namespace, d.name) for d in sink.datasets] == [("lake", D + "facts")]
    assert ("doris://fe1.prod:8030", "dw.facts") in [(s.namespace, s.name) for s in sink.datasets[0].symlinks]
    assert [(d.namespace, d.name) for d in sink.inputs[0].datasets] == [("lake", D + "events")]


def test_cli_rules_and_no_secret_in_any_output(provisioned, tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text(RULES)
    for fmt in ("json", "table"):
        result = subprocess.run(
            [
                sys.executable,
                "-P",
                "-m",
                "planlineage",
                "extract",
                "-",
                "--flink-version",
                provisioned.flink.minor,
                "--rules",
                str(rules),
                "--format",
                fmt,
            ],
            input=SCRIPT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert result.returncode == 0, result.stderr
        assert "doris-FAKE-secret" not in result.stdout + result.stderr
        if fmt == "json":
            assert json.loads(result.stdout)["sinks"][0]["datasets"][0]["namespace"] == "doris://fe1.prod:8030"
