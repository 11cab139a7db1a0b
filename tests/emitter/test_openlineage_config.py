"""OpenLineage's own configuration as planlineage reads it: each source, openlineage-python's
precedence between them, planlineage's settings winning where set, OPENLINEAGE_DISABLED silencing
everything, the namespace, composite children, secrets masked in `settings list` and logs, and
the listener configuration mirroring an http or kafka transport."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from lifecycle_helpers import Cli

from planlineage import listener_conf, openlineage_config
from planlineage.emitter.transports import create_transport
from planlineage.settings import Settings, masked

SASL_PASSWORD = "FAKE-kafka-sasl-password"
API_KEY = "FAKE-ol-api-key-0123"
URL_PASSWORD = "FAKE-url-password"

KAFKA_YAML = f"""\
transport:
  type: kafka
  topic: lineage.events
  messageKey: planlineage
  config:
    bootstrap.servers: 127.0.0.1:9092
    security.protocol: SASL_PLAINTEXT
    sasl.mechanisms: PLAIN
    sasl.username: planlineage
    sasl.password: {SASL_PASSWORD}
"""


@pytest.fixture
def place(tmp_path, monkeypatch):
    """A working directory and a home of the test's own: no openlineage.yml of the machine counts."""
    cwd, user_home = tmp_path / "cwd", tmp_path / "user"
    cwd.mkdir()
    user_home.mkdir()
    monkeypatch.chdir(cwd)
    return cwd, user_home


def settings(store, user_home: Path, **env: str) -> Settings:
    return Settings(store, environ={"HOME": str(user_home), **env})


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_nothing_configured_anywhere_is_nothing(store, place):
    _, user_home = place
    s = settings(store, user_home)
    assert s.configured() is False
    assert openlineage_config.TRANSPORT_KEY not in s.list()
    assert s.transport_options() == ("gravitino", {"address": None, "token": None})
    assert not store.exists()


@pytest.mark.parametrize("where", ["OPENLINEAGE_CONFIG", "cwd", "home"])
def test_a_config_file_in_each_place_names_the_transport(store, place, tmp_path, where):
    cwd, user_home = place
    env = {}
    if where == "OPENLINEAGE_CONFIG":
        path = write(tmp_path / "elsewhere" / "any-name.yml", KAFKA_YAML)
        env["OPENLINEAGE_CONFIG"] = str(path)
    elif where == "cwd":
        path = write(cwd / "openlineage.yml", KAFKA_YAML)
    else:
        path = write(user_home / ".openlineage" / "openlineage.yml", KAFKA_YAML)
    s = settings(store, user_home, **env)
    assert s.configured() is True
    assert s.list()["lineage.transport"] == ("kafka", f"openlineage.yml: {path}")
    kind, options = s.transport_options()
    assert kind == "kafka"
    assert options["factory"] == "openlineage"
    assert options["topic"] == "lineage.events" and options["messageKey"] == "planlineage"
    assert options["config"]["sasl.password"] == SASL_PASSWORD  # raw for the transport, masked when shown


def test_the_files_are_looked_for_in_the_librarys_order(store, place, tmp_path):
    cwd, user_home = place
    write(user_home / ".openlineage" / "openlineage.yml", "transport: {type: console}\n")
    assert settings(store, user_home).config().transport == "console"
    write(cwd / "openlineage.yml", "transport: {type: file, log_file_path: /tmp/x.jsonl}\n")
    assert settings(store, user_home).config().transport == "file"
    named = write(tmp_path / "named.yml", KAFKA_YAML)
    assert settings(store, user_home, OPENLINEAGE_CONFIG=str(named)).config().transport == "kafka"
    # A named file that is not there: the next candidate, as the library does.
    missing = str(tmp_path / "missing.yml")
    assert settings(store, user_home, OPENLINEAGE_CONFIG=missing).config().transport == "file"


def test_transport_variables_nest_parse_json_and_merge_under_the_file(store, place):
    cwd, user_home = place
    env = {
        "OPENLINEAGE__TRANSPORT__TYPE": "kafka",
        "OPENLINEAGE__TRANSPORT__TOPIC": "from-env",
        "OPENLINEAGE__TRANSPORT__FLUSH": "false",
        "OPENLINEAGE__TRANSPORT__CONFIG": json.dumps({"bootstrap.servers": "127.0.0.1:9092", "acks": "all"}),
    }
    s = settings(store, user_home, **env)
    assert s.list()["lineage.transport"] == ("kafka", "OPENLINEAGE__TRANSPORT__*")
    _, options = s.transport_options()
    assert options["topic"] == "from-env"
    assert options["flush"] is False  # JSON, as the library parses it
    assert options["config"] == {"bootstrap.servers": "127.0.0.1:9092", "acks": "all"}
    # With a file: nested mappings merge, and on a key both give the file wins.
    write(cwd / "openlineage.yml", "transport:\n  topic: from-file\n  config:\n    acks: '1'\n")
    _, options = settings(store, user_home, **env).transport_options()
    assert options["topic"] == "from-file"
    assert options["config"] == {"bootstrap.servers": "127.0.0.1:9092", "acks": "1"}
    assert settings(store, user_home, **env).list()["lineage.transport"][1] == "OPENLINEAGE__TRANSPORT__*"


def test_openlineage_url_api_key_and_endpoint(store, place):
    _, user_home = place
    s = settings(store, user_home, OPENLINEAGE_URL="http://127.0.0.1:5000")
    assert s.list()["lineage.transport"] == ("http", "OPENLINEAGE_URL")
    kind, options = s.transport_options()
    assert (kind, options["url"], options["endpoint"]) == ("http", "http://127.0.0.1:5000", "api/v1/lineage")
    assert "auth" not in options
    s = settings(
        store,
        user_home,
        OPENLINEAGE_URL="http://127.0.0.1:5000",
        OPENLINEAGE_API_KEY=API_KEY,
        OPENLINEAGE_ENDPOINT="v2/ol",
    )
    _, options = s.transport_options()
    assert options["endpoint"] == "v2/ol"
    assert options["auth"] == {"type": "api_key", "apiKey": API_KEY}
    # A transport type in the variables comes first: OPENLINEAGE_URL is then not the transport.
    s = settings(store, user_home, OPENLINEAGE_URL="http://127.0.0.1:5000", OPENLINEAGE__TRANSPORT__TYPE="console")
    assert s.config().transport == "console"


def test_composite_children_in_the_single_transport_form_each_buildable(store, place, tmp_path):
    cwd, user_home = place
    events = tmp_path / "events.jsonl"
    write(
        cwd / "openlineage.yml",
        f"transport:\n  type: composite\n  continue_on_failure: true\n  transports:\n"
        f"    local:\n      type: file\n      log_file_path: {events}\n      append: true\n"
        f"    printed:\n      type: console\n",
    )
    s = settings(store, user_home, OPENLINEAGE_URL="http://127.0.0.1:5000", OPENLINEAGE_API_KEY=API_KEY)
    kind, options = s.transport_options()
    assert kind == "composite" and options["continue_on_failure"] is True
    children = {child["name"]: child for child in options["transports"]}
    # OPENLINEAGE_URL joins a composite as its `default_http` child, as openlineage-python aliases it.
    assert set(children) == {"local", "printed", "default_http"}
    assert children["default_http"]["auth"] == {"type": "api_key", "apiKey": API_KEY}
    for child in children.values():
        assert child["factory"] == "openlineage"
        with create_transport(child["type"], child) as transport:
            assert transport.describe()
    with create_transport("file", children["local"]) as transport:
        assert type(transport).__name__ == "OpenLineageTransport"
        assert transport.send(json.dumps({"eventType": "START", "job": {"namespace": "n", "name": "j"}}), 5)
    assert json.loads(events.read_text().splitlines()[0])["job"]["name"] == "j"


def test_planlineage_settings_win_where_set(store, place):
    cwd, user_home = place
    write(cwd / "openlineage.yml", KAFKA_YAML)
    s = settings(store, user_home)
    s.set("lineage.address", "http://127.0.0.1:8090")
    assert s.list()["lineage.transport"] == ("gravitino", "default")
    assert s.transport_options() == ("gravitino", {"address": "http://127.0.0.1:8090", "token": None})
    env = {"PLANLINEAGE_LINEAGE_TRANSPORT": "file", "PLANLINEAGE_LINEAGE_FILE": "/tmp/own.jsonl"}
    assert settings(store, user_home, **env).transport_options() == ("file", {"path": "/tmp/own.jsonl"})


def test_a_library_kind_named_by_planlineage_takes_its_options_from_openlineage_config_and_its_own_setting(
    store, place
):
    cwd, user_home = place
    write(cwd / "openlineage.yml", KAFKA_YAML)
    s = settings(store, user_home)
    s.set("lineage.transport", "KAFKA")
    s.set("lineage.transport-options", '{"topic": "own-topic"}')
    assert s.list()["lineage.transport"] == ("kafka", "store")
    kind, options = s.transport_options()
    assert kind == "kafka" and options["topic"] == "own-topic"
    assert options["config"]["bootstrap.servers"] == "127.0.0.1:9092"  # the rest from openlineage.yml
    # A dotted class path keeps its case: Python imports it as written.
    s.set("lineage.transport", "my_company.lineage.Transport")
    assert s.transport_options()[0] == "my_company.lineage.Transport"
    assert s.configured() is True


def test_disabled_silences_everything_including_planlineage_settings(store, place):
    cwd, user_home = place
    write(cwd / "openlineage.yml", KAFKA_YAML)
    s = settings(store, user_home)
    s.set("lineage.address", "http://127.0.0.1:8090")
    for value in ("true", "TRUE", " True "):
        off = settings(store, user_home, OPENLINEAGE_DISABLED=value)
        assert off.configured() is False
        assert off.list()["lineage.transport"][1] == "OPENLINEAGE_DISABLED=true"
    for value in ("false", "1", "yes", ""):  # the library takes only `true`
        assert settings(store, user_home, OPENLINEAGE_DISABLED=value).configured() is True


def test_disabled_install_writes_sends_and_injects_nothing(server, tmp_path, clean_env):
    """The whole command line under OPENLINEAGE_DISABLED=true with planlineage configured and an
    openlineage.yml: no event reaches the server, no file changes, the conf comes back as it was."""
    cli = Cli(clean_env, tmp_path)
    cli.env["HOME"] = str(tmp_path / "user")
    write(tmp_path / "openlineage.yml", f"transport:\n  type: file\n  log_file_path: {tmp_path / 'ol.jsonl'}\n")
    assert cli("settings", "set", "lineage.address", server.address).returncode == 0
    assert cli("settings", "set", "lineage.flink-listener", "true").returncode == 0
    sql = write(tmp_path / "job.sql", "INSERT INTO a SELECT * FROM b;")
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    off = {"OPENLINEAGE_DISABLED": "true"}
    results = [
        cli("submit", "--app-id", "a", "--job-name", "j", "--sql-file", str(sql), "--lineage-enable", **off),
        cli("state", "--app-id", "a", "--state", "RUNNING", **off),
        cli("flush", **off),
    ]
    conf = b"spark.app.name=x\n"
    spark = cli("spark-conf", "--lineage-enable", input=conf, **off)
    flink = cli("flink-conf", "--flink-version", "2.0", "--lineage-enable", input=b"a: 1\n", **off)
    assert (spark.stdout, flink.stdout) == (conf, b"a: 1\n")
    assert all(r.returncode == 0 for r in [*results, spark, flink])
    cli.wait_workers()
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before
    assert server.requests == [] and not (tmp_path / "ol.jsonl").exists()
    listed = cli("settings", "list", **off).stdout.decode()
    assert "(OPENLINEAGE_DISABLED=true)" in listed
    assert cli("spark-conf", "--lineage-enable", input=conf).stdout != conf  # on again without it


def test_openlineage_namespace_is_the_job_namespace_when_planlineage_names_none(store, place):
    _, user_home = place
    assert settings(store, user_home, OPENLINEAGE_NAMESPACE="ol-jobs").config().namespace == "ol-jobs"
    s = settings(store, user_home)
    s.set("lineage.metalake", "lake")
    assert settings(store, user_home, OPENLINEAGE_NAMESPACE="ol-jobs").config().namespace == "lake"
    s.set("lineage.namespace", "own")
    assert settings(store, user_home, OPENLINEAGE_NAMESPACE="ol-jobs").config().namespace == "own"


def test_settings_version_changes_with_the_openlineage_file(store, place):
    cwd, user_home = place
    s = settings(store, user_home)
    before = s.version()
    path = write(cwd / "openlineage.yml", KAFKA_YAML)
    assert s.version() != before
    now = s.version()
    path.write_text(KAFKA_YAML.replace("lineage.events", "other.topic.name"), encoding="utf-8")
    assert s.version() != now
    assert s.transport_options()[1]["topic"] == "other.topic.name"


def test_an_unreadable_file_is_no_configuration_and_is_said(store, place, caplog):
    cwd, user_home = place
    write(cwd / "openlineage.yml", "transport: [unclosed\n")
    s = settings(store, user_home)
    with caplog.at_level(logging.WARNING):
        assert s.configured() is False
    assert any("openlineage.yml" in p for p in s.problems)


# -- secrets ------------------------------------------------------------------------------------


def run_settings_list(tmp_path: Path, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    environment = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "user"), "PLANLINEAGE_HOME": str(tmp_path / "h")}
    return subprocess.run(
        [sys.executable, "-P", "-m", "planlineage", "settings", "list"],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**environment, **env},
        timeout=60,
    )


@pytest.mark.parametrize(
    "source",
    ["file", "variables", "url"],
)
def test_secrets_of_every_source_are_masked_in_settings_list(tmp_path, place, source):
    cwd, _ = place
    env: dict[str, str] = {}
    secrets = [API_KEY, URL_PASSWORD]
    if source == "file":
        write(cwd / "openlineage.yml", KAFKA_YAML)
        secrets = [SASL_PASSWORD]
        origin = f"(openlineage.yml: {cwd / 'openlineage.yml'})"
    elif source == "variables":
        env = {
            "OPENLINEAGE__TRANSPORT__TYPE": "http",
            "OPENLINEAGE__TRANSPORT__URL": f"http://ol:{URL_PASSWORD}@127.0.0.1:5000",
            "OPENLINEAGE__TRANSPORT__AUTH": json.dumps({"type": "api_key", "apiKey": API_KEY}),
        }
        origin = "(OPENLINEAGE__TRANSPORT__*)"
    else:
        env = {"OPENLINEAGE_URL": f"http://ol:{URL_PASSWORD}@127.0.0.1:5000", "OPENLINEAGE_API_KEY": API_KEY}
        origin = "(OPENLINEAGE_URL)"
    result = run_settings_list(tmp_path, cwd, env)
    assert result.returncode == 0, result.stderr
    transport_line = next(line for line in result.stdout.splitlines() if line.startswith("lineage.transport "))
    assert transport_line.endswith(origin)
    options_line = next(line for line in result.stdout.splitlines() if line.startswith("openlineage.transport"))
    assert "******" in options_line
    for secret in secrets:
        assert secret not in result.stdout + result.stderr


def test_transport_options_setting_is_masked_when_shown(store, place):
    _, user_home = place
    s = settings(store, user_home)
    stored = s.set("lineage.transport-options", json.dumps({"topic": "t", "config": {"sasl.password": SASL_PASSWORD}}))
    shown = masked("lineage.transport-options", stored)
    assert SASL_PASSWORD not in shown and '"topic": "t"' in shown
    assert SASL_PASSWORD not in json.dumps(s.list_masked())


# -- the listener's configuration ----------------------------------------------------------------


def entries(values) -> dict[str, str]:
    return dict(listener_conf.spark_entries(values, {}, lambda line: None))


def test_listener_config_mirrors_an_http_transport_from_openlineage_config(store, place):
    cwd, user_home = place
    write(
        cwd / "openlineage.yml",
        f"transport:\n  type: http\n  url: https://marquez.example:5000/base/\n  endpoint: api/v1/lineage\n"
        f"  timeout: 2.5\n  compression: gzip\n  auth:\n    type: api_key\n    api_key: {API_KEY}\n"
        f"  custom_headers:\n    X-Team: data\n",
    )
    got = entries(settings(store, user_home, OPENLINEAGE_NAMESPACE="ol-jobs").config())
    assert got == {
        "spark.extraListeners": listener_conf.SPARK_LISTENER,
        "spark.openlineage.transport.type": "http",
        # the URL openlineage-python posts to (urljoin), split as the Java client reads it
        "spark.openlineage.transport.url": "https://marquez.example:5000",
        "spark.openlineage.transport.endpoint": "/base/api/v1/lineage",
        "spark.openlineage.transport.timeoutInMillis": "2500",
        "spark.openlineage.transport.auth.type": "api_key",
        "spark.openlineage.transport.auth.apiKey": API_KEY,
        "spark.openlineage.transport.headers.X-Team": "data",
        "spark.openlineage.transport.compression": "gzip",
        "spark.openlineage.namespace": "ol-jobs",
    }


def test_listener_config_mirrors_a_kafka_transport_from_openlineage_config(store, place):
    cwd, user_home = place
    write(cwd / "openlineage.yml", KAFKA_YAML)
    values = settings(store, user_home, PLANLINEAGE_LINEAGE_FLINK_LISTENER="true").config()
    got = dict(listener_conf.flink_entries(values, "2.0", {}, lambda line: None))
    assert got["openlineage.transport.type"] == "kafka"
    assert got["openlineage.transport.topicName"] == "lineage.events"
    assert got["openlineage.transport.messageKey"] == "planlineage"
    assert got["openlineage.transport.properties.bootstrap.servers"] == "127.0.0.1:9092"
    assert got["openlineage.transport.properties.sasl.mechanism"] == "PLAIN"
    assert got["openlineage.transport.properties.sasl.jaas.config"] == (
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="planlineage" password="{SASL_PASSWORD}";'
    )
    assert got["openlineage.transport.properties.key.serializer"].endswith("StringSerializer")
    assert not any(k.endswith(("sasl.password", "sasl.username", "sasl.mechanisms")) for k in got)


def test_a_transport_without_a_mirror_adds_no_listener(store, place):
    cwd, user_home = place
    write(cwd / "openlineage.yml", "transport: {type: console}\n")
    said: list[str] = []
    assert listener_conf.spark_entries(settings(store, user_home).config(), {}, said.append) == []
    assert said and "console" in said[0]


def run_cli(tmp_path: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    environment = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "user"), "PLANLINEAGE_HOME": str(tmp_path / "h")}
    return subprocess.run(
        [sys.executable, "-P", "-m", "planlineage", *args],
        capture_output=True,
        text=True,
        input=stdin,
        cwd=tmp_path,
        env=environment,
        timeout=60,
    )


def test_settings_set_takes_any_kind_the_library_builds_and_refuses_a_typo(tmp_path):
    assert run_cli(tmp_path, "settings", "set", "lineage.transport", "Kafka").stdout == "lineage.transport = kafka\n"
    refused = run_cli(tmp_path, "settings", "set", "lineage.transport", "kafak")
    assert refused.returncode == 2
    assert "'kafak' is not a transport" in refused.stderr and "kafka" in refused.stderr
    path = "my_company.lineage.Transport"  # imported where events are sent, not where it is set
    assert run_cli(tmp_path, "settings", "set", "lineage.transport", path).returncode == 0
    options = json.dumps({"topic": "t", "config": {"sasl.password": SASL_PASSWORD}})
    result = run_cli(tmp_path, "settings", "set", "lineage.transport-options", "-", stdin=options + "\n")
    assert result.returncode == 0 and SASL_PASSWORD not in result.stdout + result.stderr
    listed = run_cli(tmp_path, "settings", "list")
    assert "my_company.lineage.Transport" in listed.stdout and SASL_PASSWORD not in listed.stdout
