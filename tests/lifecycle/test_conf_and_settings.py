"""settings, spark-conf, flink-conf, and the promise that an unconfigured install is untouched."""

from __future__ import annotations

import glob
import hashlib
import json
import os
from pathlib import Path

import pytest
from lifecycle_helpers import lineage_settings

from planlineage import listener_conf
from planlineage.lifecycle import runs
from planlineage.settings import Settings
from planlineage.store.sqlite import Store

TOKEN = "tok-1234567890-abcdef"
FLINK_KEYS = {
    "execution.job-status-changed-listeners": listener_conf.FLINK_LISTENER_FACTORY,
    "openlineage.transport.type": "http",
    "openlineage.transport.url": "http://127.0.0.1:8090",
    "openlineage.transport.endpoint": "/api/lineage",
    "openlineage.transport.auth.type": "api_key",
    "openlineage.transport.auth.apiKey": TOKEN,
    "openlineage.job.namespace": "planlineage",
}


def tree(*roots: Path) -> dict[str, str]:
    found = {}
    for root in roots:
        if not root.exists():
            found[str(root)] = "absent"
            continue
        for path in sorted(root.rglob("*")):
            stat = path.lstat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
            found[str(path)] = f"{digest} {stat.st_mtime_ns} {stat.st_size}"
    return found


NOT_CONFIGURED = (
    b"planlineage: nothing is recorded for this job: lineage is not configured (no lineage.address): "
    b"`planlineage settings set lineage.address URL`, or OpenLineage's own configuration "
    b"(OPENLINEAGE_URL, openlineage.yml, OPENLINEAGE__TRANSPORT__*)\n"
)

CONF_INPUTS = [
    b'{"spark.executor.memory": "4g",\n "spark.app.name": "x"}\n',
    b"# spark defaults\nspark.executor.memory   4g\nspark.app.name=x",
    b"taskmanager.numberOfTaskSlots: 2\r\nparallelism.default: 4\r\n",
    b"",
]


@pytest.mark.parametrize("enable", [True, False])
def test_unconfigured_install_is_untouched(cli, tmp_path, private_home, enable):
    cache = Path(os.environ["PLANLINEAGE_FLINK_CACHE"])
    cache.mkdir(exist_ok=True)  # holds the recorded planner
    (cache / "marker").write_text("x")
    sql = tmp_path / "job.sql"
    sql.write_text("INSERT INTO a SELECT * FROM b;")
    flag = ["--lineage-enable"] if enable else []
    before = tree(private_home, cache, tmp_path)
    submit = cli("submit", "--app-id", "a", "--job-name", "j", "--flink-version", "1.20", "--sql-file", str(sql), *flag)
    assert submit.returncode == 0
    # Asked for lineage with nowhere to send it: one line says so and how to configure it.
    assert submit.stderr == (NOT_CONFIGURED if enable else b"")
    runs = [
        cli("state", "--app-id", "a", "--state", "RUNNING"),
        cli("state", "--app-id", "a", "--state", "FAILED", "--error", "x"),
        cli("flush"),
    ]
    for data in CONF_INPUTS:
        for args in (["spark-conf", "--app-id", "a"], ["flink-conf", "--flink-version", "2.0"]):
            result = cli(*args, *flag, input=data, PLANLINEAGE_LINEAGE_FLINK_LISTENER="true")
            assert result.stdout == data
            runs.append(result)
    assert all(r.returncode == 0 and r.stderr == b"" for r in runs)
    cli.wait_workers()
    assert tree(private_home, cache, tmp_path) == before
    assert not private_home.exists()


def test_configured_but_not_enabled_sends_and_changes_nothing(cli, server, tmp_path, private_home):
    assert cli("settings", "set", "lineage.address", server.address).returncode == 0
    assert cli("settings", "set", "lineage.flink-listener", "true").returncode == 0
    sql = tmp_path / "job.sql"
    sql.write_text("INSERT INTO a SELECT * FROM b;")
    before = tree(private_home)
    assert cli("submit", "--app-id", "a", "--job-name", "j", "--sql-file", str(sql)).returncode == 0
    assert cli("state", "--app-id", "a", "--state", "RUNNING").returncode == 0
    for data in CONF_INPUTS:
        assert cli("spark-conf", input=data).stdout == data
        assert cli("flink-conf", "--flink-version", "2.0", input=data).stdout == data
    assert tree(private_home) == before
    assert server.events == [] and server.requests == []


def test_settings_set_get_list_mask_the_token(cli):
    result = cli("settings", "set", "lineage.token", TOKEN)
    assert result.returncode == 0 and TOKEN.encode() not in result.stdout
    assert cli("settings", "set", "lineage.address", "http://user:pw@127.0.0.1:8090/").returncode == 0
    for args in (("settings", "get", "lineage.token"), ("settings", "list"), ("settings", "get", "lineage.address")):
        result = cli(*args)
        assert result.returncode == 0
        assert TOKEN.encode() not in result.stdout + result.stderr
        assert b"pw@" not in result.stdout
    assert cli("settings", "get", "lineage.namespace").stdout.strip() == b"planlineage"
    result = cli("settings", "get", "lineage.namespace", PLANLINEAGE_LINEAGE_NAMESPACE="from-env")
    assert result.stdout.strip() == b"from-env"
    assert b"(env)" in cli("settings", "list", PLANLINEAGE_LINEAGE_NAMESPACE="from-env").stdout
    bad = cli("settings", "set", "lineage.nope", "x")
    assert bad.returncode == 2 and b"unknown setting" in bad.stderr
    assert cli("settings", "set", "lineage.flink-listener", "maybe").returncode == 2


def test_submission_records_a_pending_run_with_a_uuid7(private_home):
    store = Store(private_home / "state.db")
    settings = Settings(store, environ={"PLANLINEAGE_LINEAGE_ADDRESS": "http://127.0.0.1:9"})
    run_id = runs.record_pending_submission(store, "b", "job", None, settings)
    runs.record_state(store, "b", "RUNNING")
    assert runs.current_run(store, "b").pending[0]["event"] == "RUNNING"
    import uuid

    assert uuid.UUID(run_id).version == 7


# -- conf merging -----------------------------------------------------------------------------


def values(**settings):
    return lineage_settings(TOKEN, **settings)


def merge(data: bytes, kind="spark", version="2.0", **settings):
    """What `spark-conf` (properties, `=`) or `flink-conf` (YAML) makes of `data`, and its warnings."""
    warnings: list[str] = []
    if kind == "spark":
        fn, style = listener_conf.spark_entries, "="
    else:

        def fn(v, existing, w):
            return listener_conf.flink_entries(v, version, existing, w)

        style = ":"
    out = listener_conf.merge_bytes(data, fn, values(**settings), warn=warnings.append, default_style=style)
    return out, warnings


def test_spark_json_adds_listener_transport_and_namespace():
    out, warnings = merge(b'{\n  "spark.app.name": "x"\n}\n')
    data = json.loads(out)
    assert data == {
        "spark.app.name": "x",
        "spark.extraListeners": listener_conf.SPARK_LISTENER,
        "spark.openlineage.transport.type": "http",
        "spark.openlineage.transport.url": "http://127.0.0.1:8090",
        "spark.openlineage.transport.endpoint": "/api/lineage",
        "spark.openlineage.transport.auth.type": "api_key",
        "spark.openlineage.transport.auth.apiKey": TOKEN,
        "spark.openlineage.namespace": "planlineage",
    }
    assert out.startswith(b'{\n  "spark.app.name"') and out.endswith(b"}\n") and not warnings


def test_spark_never_overrides_user_keys_and_warns_on_listeners():
    text = b"spark.extraListeners=com.acme.Listener\nspark.openlineage.namespace=mine\n"
    out, warnings = merge(text)
    assert out.startswith(text)
    added = out[len(text) :].decode()
    assert "spark.extraListeners" not in added and "spark.openlineage.namespace" not in added
    assert "spark.openlineage.transport.url=http://127.0.0.1:8090\n" in added
    assert len(warnings) == 1 and "spark.extraListeners" in warnings[0] and TOKEN not in warnings[0]


def test_spark_user_transport_is_left_alone_and_no_token_no_auth():
    out, warnings = merge(b"spark.openlineage.transport.type=kafka\n")
    assert b"transport.url" not in out and len(warnings) == 1
    out, _ = merge(b"a 1\n", **{"lineage.token": None})
    assert b"auth" not in out and b"spark.openlineage.transport.url http://127.0.0.1:8090\n" in out


def test_spark_everything_already_set_is_byte_identical():
    text = (
        b'{"spark.extraListeners": "io.openlineage.spark.agent.OpenLineageSparkListener",'
        b' "spark.openlineage.transport.type": "http", "spark.openlineage.namespace": "x"}'
    )
    assert merge(text)[0] == text


def test_http_transport_endpoint_and_unusable_transports():
    out, _ = merge(b"{}", **{"lineage.transport": "http", "lineage.endpoint": "api/v1/lineage"})
    assert json.loads(out)["spark.openlineage.transport.endpoint"] == "/api/v1/lineage"
    out, warnings = merge(b"a=1\n", **{"lineage.transport": "file", "lineage.file": "/tmp/x"})
    assert out == b"a=1\n" and warnings


def test_flink_adds_listener_only_with_toggle_and_known_version():
    text = b"taskmanager.numberOfTaskSlots: 2\n"
    out, warnings = merge(text, "flink", "2.0")
    parsed, style = listener_conf.parse_properties(out.decode())
    assert style == ":" and {k: parsed[k] for k in FLINK_KEYS} == FLINK_KEYS and not warnings
    assert merge(text, "flink", "2.0", **{"lineage.flink-listener": "false"}) == (text, [])
    out, warnings = merge(text, "flink", "1.20")
    assert out == text and "2.0" in warnings[0]


def test_flink_respects_user_keys_flat_and_nested_yaml():
    nested = (
        b"execution:\n  job-status-changed-listeners: com.acme.Factory\nopenlineage:\n  job:\n    namespace: mine\n"
    )
    out, warnings = merge(nested, "flink", "2.1")
    added = out[len(nested) :].decode()
    assert out.startswith(nested)
    assert "job-status-changed-listeners" not in added and "openlineage.job.namespace" not in added
    assert "openlineage.transport.type: http" in added and len(warnings) == 1
    out, _ = merge(b'{"parallelism.default": 4}', "flink", "2.3")
    assert json.loads(out)["openlineage.transport.auth.type"] == "api_key"


def test_unreadable_input_is_echoed():
    for data in (b"{not json", b"[1, 2]", b"\xff\xfe\x00garbage"):
        assert merge(data)[0] == data


def test_conf_commands_through_the_cli(cli):
    env = {"PLANLINEAGE_LINEAGE_ADDRESS": "http://127.0.0.1:8090", "PLANLINEAGE_LINEAGE_TOKEN": TOKEN}
    result = cli("spark-conf", "--app-id", "a", "--lineage-enable", input=b"spark.extraListeners=x\n", **env)
    assert result.returncode == 0 and b"spark.openlineage.transport.auth.apiKey=" + TOKEN.encode() in result.stdout
    assert len(result.stderr.splitlines()) == 1 and TOKEN.encode() not in result.stderr
    result = cli(
        "flink-conf",
        "--flink-version",
        "2.0",
        "--lineage-enable",
        input=b"a: 1\n",
        PLANLINEAGE_LINEAGE_FLINK_LISTENER="true",
        **env,
    )
    assert result.returncode == 0 and listener_conf.FLINK_LISTENER_FACTORY.encode() in result.stdout


def _flink_dists():
    # The cache tox provisions every version into (read at collection, before fixtures clear it).
    cache = os.environ.get("PLANLINEAGE_FLINK_CACHE")
    if not cache:
        return []
    return sorted(glob.glob(f"{cache}/*/venv/lib/python3*/site-packages/pyflink/lib/flink-dist-*.jar"))


@pytest.mark.skipif(not _flink_dists(), reason="no provisioned Flink version in PLANLINEAGE_FLINK_CACHE")
@pytest.mark.parametrize("jar", _flink_dists())
def test_listener_option_gate_matches_each_flink_dist(jar):
    import re
    import zipfile

    version = re.search(r"flink-dist-([\d.]+)\.jar", jar).group(1)
    with zipfile.ZipFile(jar) as archive:
        knows = listener_conf.FLINK_LISTENER_OPTION.encode() in archive.read(
            "org/apache/flink/configuration/DeploymentOptions.class"
        )
    assert listener_conf.flink_knows_listener_option(version) == knows, version
