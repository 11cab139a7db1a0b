import json
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
    assert document == {
        "datasets": [
            {
                "namespace": "mysql://h:3306",
                "name": "db.t",
                "symlinks": [{"namespace": "mysql://h:3306", "name": "c.d.t", "type": "TABLE"}],
            }
        ],
        "warnings": [],
    }
    assert "hunter2-FAKE" not in result.stdout + result.stderr


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
    result = run("extract", "-", "--flink-version", "1.17")
    assert result.returncode == 3 and "supported versions" in result.stderr and "Traceback" not in result.stderr
