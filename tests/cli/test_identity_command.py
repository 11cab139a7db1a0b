import json
import os
import subprocess
import sys


def run(*args):
    return subprocess.run(
        [sys.executable, "-P", "-m", "planlineage", *args], capture_output=True, text=True, timeout=60
    )


def test_identity_prints_datasets_with_symlinks():
    result = run(
        "identity",
        json.dumps({"connector": "jdbc", "url": "jdbc:mysql://h/db", "table-name": "t", "password": "hunter2-FAKE"}),
        "--table",
        "c.d.t",
    )
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    # A JDBC table gets no TABLE symlink: openlineage-flink's JDBC visitor attaches none.
    assert document == {
        "datasets": [{"namespace": "mysql://h:3306", "name": "db.t", "symlinks": []}],
        "warnings": [],
    }
    assert "hunter2-FAKE" not in result.stdout + result.stderr
    kafka = run(
        "identity",
        json.dumps({"connector": "kafka", "topic": "orders", "properties.bootstrap.servers": "k1:9092"}),
        "--table",
        "c.d.t",
    )
    assert json.loads(kafka.stdout)["datasets"] == [
        {
            "namespace": "kafka://k1:9092",
            "name": "orders",
            "symlinks": [{"namespace": "kafka://k1:9092", "name": "c.d.t", "type": "TABLE"}],
        }
    ]


def test_identity_of_an_unknown_connector_warns():
    result = run("identity", json.dumps({"connector": "acme-queue"}), "--table", "c.d.t")
    assert result.returncode == 0
    assert json.loads(result.stdout) == {
        "datasets": [],
        "warnings": ["table c.d.t: no identity rule for connector 'acme-queue'"],
    }


def test_bad_options_and_bad_rules_exit_2_without_traceback(tmp_path):
    result = run("identity", "[1, 2]")
    assert result.returncode == 2 and "Traceback" not in result.stderr and "JSON object" in result.stderr
    rules = tmp_path / "rules.toml"
    rules.write_text('[connectors.doris]\nnamespace = "doris://{fenodes"\nname = "x"\n')
    result = run("identity", '{"connector": "doris"}', "--rules", str(rules))
    assert result.returncode == 2 and "Traceback" not in result.stderr and "doris" in result.stderr


def test_unsupported_flink_version_is_a_clear_error():
    result = run("extract", "-", "--flink-version", "1.99")
    assert result.returncode == 3 and "supported versions" in result.stderr and "Traceback" not in result.stderr


def test_a_flink_older_than_1_15_is_read_from_the_text_with_a_warning(tmp_path):
    """No CompiledPlan before Flink 1.15: the tables the SQL names, marked static, a WARN naming the
    limit, and no planner of another version (nothing provisioned, no JVM)."""
    script = tmp_path / "job.sql"
    script.write_text(
        "CREATE TABLE src (id INT) WITH ('connector' = 'kafka', 'topic' = 'orders', "
        "'properties.bootstrap.servers' = 'k1:9092', 'properties.sasl.jaas.config' = 's3cr3t-test-only');\n"
        "CREATE TABLE dst (id INT) WITH ('connector' = 'jdbc', 'url' = 'jdbc:mysql://db:3306/shop', "
        "'table-name' = 'out');\n"
        "SET 'execution.runtime-mode' = 'batch';\n"
        "INSERT INTO dst SELECT id FROM src;\n"
    )
    cache = tmp_path / "flink-cache"
    for version in ("1.14", "1.13.6"):
        result = subprocess.run(
            [sys.executable, "-P", "-m", "planlineage", "extract", str(script), "--flink-version", version],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PLANLINEAGE_FLINK_CACHE": str(cache)},
        )
        assert result.returncode == 0, result.stderr
        document = json.loads(result.stdout)
        assert document["flink_version"] == version and document["runtime_mode"] == "batch"
        (sink,) = document["sinks"]
        assert sink["method"] == "static"
        assert [(d["namespace"], d["name"]) for d in sink["datasets"]] == [("mysql://db:3306", "shop.out")]
        assert [(d["namespace"], d["name"]) for i in sink["inputs"] for d in i["datasets"]] == [
            ("kafka://k1:9092", "orders")
        ]
        (warning,) = document["warnings"]
        assert f"Flink {version} has no CompiledPlan (it arrived in Flink 1.15)" in warning
        assert "s3cr3t-test-only" not in result.stdout + result.stderr
    assert not cache.exists()  # no other version's planner was provisioned in its place
