"""The doctor on a multi-producer corpus (tests/doctor/data, written by generate.py from the
producers' own naming): every known split is one group, no distinct tables are joined, the JSON
shape and exit codes are the documented ones, and recorded runs are read without a write."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from planlineage.cli.main import main
from planlineage.doctor import diagnose
from planlineage.document import JobLineage, SinkLineage, TableLineage
from planlineage.errors import UnreadableInput
from planlineage.lifecycle import runs
from planlineage.registry import resolve
from planlineage.settings import Settings
from planlineage.store.sqlite import Store

DATA = Path(__file__).resolve().parent / "data"
CORPUS = [
    str(DATA / n)
    for n in ("gravitino_lineage.log", "planlineage_file_transport.jsonl", "dbt_events.json", "custom_emitter.jsonl")
]

SPLITS = {
    frozenset(
        {("kafka://kafka-1.prod:9092", "orders"), ("kafka://kafka-2.prod:9092", "orders")}
    ): "Kafka broker of the same bootstrap list",
    frozenset(
        {
            ("postgres://Warehouse.Prod:5432", "analytics.public.orders_summary"),
            ("postgres://warehouse.prod:5432", "analytics.public.orders_summary"),
        }
    ): "host case",
    frozenset(
        {
            ("postgres://warehouse.prod:5432", "analytics.enriched_orders"),
            ("postgres://warehouse.prod:5432", "analytics.public.enriched_orders"),
        }
    ): "JDBC schema defaulting",
    frozenset(
        {
            ("postgres://warehouse.prod:5432", "analytics.public.daily_revenue"),
            ("postgresql://warehouse.prod", "analytics.public.daily_revenue"),
        }
    ): "scheme alias",
    frozenset(
        {
            ("postgres://warehouse.prod:5432", "analytics.public.payments"),
            ("prod_metalake", "pg_catalog.public.payments"),
        }
    ): "Gravitino logical name",
    frozenset({("s3://datalake", "audit/payments"), ("s3a://datalake", "audit/payments")}): "s3/s3a/s3n",
    frozenset(
        {("postgres://warehouse.prod:5432", "analytics.public.refunds"), ("prod_metalake", "pg_catalog.public.refunds")}
    ): "Gravitino logical name",
    frozenset({("s3://datalake", "reports/orders"), ("s3://datalake", "reports/orders/")}): "trailing or leading slash",
    frozenset(
        {
            ("snowflake://xy12345.eu-west-1", "SALES.PUBLIC.ORDERS"),
            ("snowflake://xy12345.eu-west-1", "sales.public.orders"),
        }
    ): "name case",
}

# Same name on another host, another table on the same host, topic and MySQL name case: never one table.
DISTINCT = [
    ("postgres://warehouse.staging:5432", "analytics.public.enriched_orders"),
    ("postgres://warehouse.prod:5432", "analytics.public.orders_archive"),
    ("s3://datalake-staging", "reports/orders"),
    ("kafka://kafka-1.staging:9092", "orders"),
    ("kafka://kafka-1.prod:9092", "Orders"),
    ("mysql://mysql.prod:3306", "crm.Customers"),
    ("mysql://mysql.prod:3306", "crm.customers"),
    ("hdfs://namenode:8020", "/user/hive/warehouse/sales.db/orders_mirror"),
    ("prod_metalake", "pg_catalog.public.refunds_daily"),
    # a TABLE symlink of Flink's default_catalog names no Gravitino table
    ("kafka://kafka-1.prod:9092", "sessions"),
]


def test_corpus_splits_and_non_splits():
    report = diagnose(CORPUS)
    found = {frozenset(d.key for d in s.datasets): s for s in report.splits}
    assert set(found) == set(SPLITS)
    for members, reason in SPLITS.items():
        assert reason in found[members].reason
        assert found[members].fix
    in_a_split = {d.key for s in report.splits for d in s.datasets}
    for key in DISTINCT:
        assert key in report.datasets, key  # the corpus really holds it
        assert key not in in_a_split, key


def test_producers_and_jobs_per_side():
    report = diagnose(CORPUS)
    split = next(s for s in report.splits if "JDBC schema defaulting" in s.reason)
    sides = {d.name: d for d in split.datasets}
    assert sides["analytics.enriched_orders"].producers == {"https://github.com/planlineage/planlineage"}
    assert sides["analytics.enriched_orders"].jobs == {"orders-enrichment"}
    assert {p.split("/")[-1] for p in sides["analytics.public.enriched_orders"].producers} == {"spark", "dbt"}
    assert "'table-name'" in split.fix or "Flink table" in split.fix
    kafka = next(s for s in report.splits if "Kafka" in s.reason)
    assert 'type = "hostList"' in kafka.fix and "kafka-1.prod" in kafka.fix and "kafka-2.prod" in kafka.fix


def test_kafka_brokers_are_joined_only_on_evidence():
    # Without the planlineage events (whose SQL facet holds the bootstrap list) the two brokers
    # are just two hosts: no split.
    report = diagnose([str(DATA / "gravitino_lineage.log")])
    assert not any("Kafka" in s.reason for s in report.splits)
    assert ("kafka://kafka-2.prod:9092", "orders") in report.datasets


def test_rules_file_resolver_counts(tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text(
        '[dataset.namespaceResolvers.kafka-prod]\ntype = "hostList"\nhosts = ["kafka-1.prod", "kafka-2.prod"]\nschema = "kafka"\n'
    )
    spark = tmp_path / "spark.jsonl"
    ours = tmp_path / "ours.jsonl"
    event = json.loads((DATA / "planlineage_file_transport.jsonl").read_text().splitlines()[0])
    event["job"]["facets"].pop("sql")
    event["inputs"][0]["namespace"] = "kafka://kafka-prod:9092"  # planlineage applied the resolver
    ours.write_text(json.dumps(event) + "\n")
    line = next(x for x in (DATA / "gravitino_lineage.log").read_text().splitlines() if "kafka-2.prod" in x)
    spark.write_text(line + "\n")
    assert not diagnose([str(ours), str(spark)]).splits
    report = diagnose([str(ours), str(spark)], rules=str(rules))
    assert [sorted(d.namespace for d in s.datasets) for s in report.splits] == [
        ["kafka://kafka-2.prod:9092", "kafka://kafka-prod:9092"]
    ]
    assert "resolver `kafka-prod`" in report.splits[0].reason
    assert "spark.openlineage.dataset.namespaceResolvers.kafka-prod.type=hostList" in report.splits[0].fix
    assert (
        "spark.openlineage.dataset.namespaceResolvers.kafka-prod.hosts=[kafka-1.prod;kafka-2.prod]"
        in report.splits[0].fix
    )


def test_json_output_and_exit_codes(capsys):
    assert main(["doctor", "--events", *CORPUS, "--format", "json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"splits"}
    assert len(out["splits"]) == len(SPLITS)
    for split in out["splits"]:
        assert set(split) == {"datasets", "reason", "fix"}
        for dataset in split["datasets"]:
            assert set(dataset) == {"namespace", "name", "producers", "jobs"}
            assert isinstance(dataset["producers"], list) and isinstance(dataset["jobs"], list)
    assert main(["doctor", "--events", str(DATA / "dbt_events.json"), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"splits": []}


@pytest.mark.parametrize("name", ["not_events.log", "missing.jsonl"])
def test_unreadable_input_exits_2(name, capsys):
    assert main(["doctor", "--events", str(DATA / name)]) == 2
    err = capsys.readouterr().err
    assert str(DATA / name) in err and "Traceback" not in err


def test_binary_input_exits_2(tmp_path, capsys):
    blob = tmp_path / "blob.log"
    blob.write_bytes(b"\xff\xfe\x00garbage")
    assert main(["doctor", "--events", str(blob)]) == 2
    assert "not UTF-8" in capsys.readouterr().err


def test_text_output_names_sides_reason_and_fix(capsys):
    assert main(["doctor", "--events", *CORPUS]) == 1
    out = capsys.readouterr().out
    assert "9 split(s)" in out
    assert "producers: planlineage   jobs: orders-enrichment" in out
    assert out.count("fix: ") == 9
    assert "2 other line(s) skipped" in out  # the log sink's non-event lines


def _resolved(table: str, options: dict) -> TableLineage:
    return TableLineage(table=table, connector=options["connector"], datasets=resolve(options, table=table).datasets)


RUN_ID = "01890000-0000-7000-8000-000000000001"


def _statement_set() -> JobLineage:
    orders = _resolved(
        "default_catalog.default_database.orders",
        {
            "connector": "kafka",
            "topic": "orders",
            "properties.bootstrap.servers": "kafka-1.prod:9092,kafka-2.prod:9092",
        },
    )
    pg = _resolved(
        "default_catalog.default_database.enriched_orders",
        {
            "connector": "jdbc",
            "url": "jdbc:postgresql://warehouse.prod:5432/analytics",
            "table-name": "enriched_orders",
            "password": "FAKE-secret-pw",
        },
    )
    archive = _resolved(
        "default_catalog.default_database.archive",
        {"connector": "filesystem", "path": "s3a://datalake/archive/orders/"},
    )
    sinks = [
        SinkLineage(table=pg.table, connector="jdbc", datasets=pg.datasets, inputs=[orders]),
        SinkLineage(table=archive.table, connector="filesystem", datasets=archive.datasets, inputs=[orders]),
    ]
    return JobLineage(flink_version="1.20.5", sinks=sinks)


@pytest.fixture
def recorded_state(clean_env, tmp_path):
    home = clean_env
    store = Store()
    settings = Settings(store)
    settings.set("lineage.transport", "file")
    settings.set("lineage.file", str(tmp_path / "events.jsonl"))
    sql = "CREATE TABLE orders (...) WITH ('properties.bootstrap.servers' = 'kafka-1.prod:9092,kafka-2.prod:9092');"
    run_id = runs.record_submission(store, "app-1", "orders-pipeline", _statement_set(), sql, settings)
    assert run_id
    runs.record_state(store, "app-1", "RUNNING")
    return home


def _snapshot(folder: Path) -> dict:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir()}


def test_state_runs_are_read_read_only(recorded_state, capsys):
    before = _snapshot(recorded_state)
    spark = str(DATA / "gravitino_lineage.log")
    assert main(["doctor", "--events", spark, "--state", "--format", "json"]) == 1
    assert _snapshot(recorded_state) == before  # nothing created, nothing written
    out = json.loads(capsys.readouterr().out)
    by_members = {frozenset((d["namespace"], d["name"]) for d in s["datasets"]): s for s in out["splits"]}
    schema = by_members[
        frozenset(
            {
                ("postgres://warehouse.prod:5432", "analytics.enriched_orders"),
                ("postgres://warehouse.prod:5432", "analytics.public.enriched_orders"),
            }
        )
    ]
    ours = next(d for d in schema["datasets"] if d["name"] == "analytics.enriched_orders")
    # the STATEMENT SET child job that writes it, as the emitter names it
    assert ours["jobs"] == ["orders-pipeline.default_catalog.default_database.enriched_orders"]
    assert ours["producers"] == ["https://github.com/planlineage/planlineage"]
    # the recorded SQL is Kafka evidence: Spark's kafka-2.prod and our kafka-1.prod are one cluster
    assert frozenset({("kafka://kafka-1.prod:9092", "orders"), ("kafka://kafka-2.prod:9092", "orders")}) in by_members
    assert "FAKE-secret-pw" not in json.dumps(out)


def test_state_without_store_creates_nothing(tmp_path, monkeypatch, capsys):
    home = tmp_path / "nothing-here"
    monkeypatch.setenv("PLANLINEAGE_HOME", str(home))
    assert main(["doctor", "--state"]) == 0
    assert not home.exists()
    assert "0 recorded run(s)" in capsys.readouterr().out


def test_corrupt_state_is_unreadable_and_left_alone(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    home.mkdir()
    (home / "state.db").write_bytes(b"this is not a database" * 100)
    monkeypatch.setenv("PLANLINEAGE_HOME", str(home))
    assert main(["doctor", "--state"]) == 2
    assert "cannot be read" in capsys.readouterr().err
    assert sorted(p.name for p in home.iterdir()) == ["state.db"]  # not quarantined: read-only


def test_sqlite_read_only_really_refuses_writes(recorded_state):
    from planlineage.doctor.sources import _connect_read_only

    conn = _connect_read_only(recorded_state / "state.db")
    with pytest.raises(sqlite3.OperationalError):
        conn.execute("DELETE FROM runs")
    conn.close()


def test_no_input_is_a_usage_error(capsys):
    assert main(["doctor"]) == 2
    assert "--events" in capsys.readouterr().err


def test_unreadable_raises_for_api_users():
    with pytest.raises(UnreadableInput):
        diagnose([str(DATA / "not_events.log")])


def test_secrets_of_other_producers_never_reach_a_report_or_page(tmp_path, capsys):
    event = {
        "eventType": "START", "eventTime": "2026-11-30T10:00:00Z", "producer": "https://example.test/etl",
        "run": {"runId": "01890000-0000-7000-8000-000000000002", "facets": {"spark_properties": {"properties": {"spark.jdbc.password": "FAKE-prop-pw-77"}}}},
        "job": {"namespace": "etl", "name": "copy", "facets": {"sql": {"query": "CREATE TABLE t WITH ('password' = 'FAKE-sql-pw-42')"}}},
        "inputs": [{"namespace": "postgres://etl:FAKE-url-pw-13@warehouse.prod:5432", "name": "analytics.public.orders"}],
        "outputs": [{"namespace": "s3://datalake", "name": "copy"}],
    }  # fmt: skip
    events = tmp_path / "secret.jsonl"
    events.write_text(json.dumps(event) + "\n")
    page = tmp_path / "page.html"
    assert main(["doctor", "--events", str(events), "--format", "json"]) == 0
    assert main(["graph", "--events", str(events), "--out", str(page)]) == 0
    assert main(["graph", "--events", str(events), "--format", "dot"]) == 0
    everything = capsys.readouterr().out + page.read_text()
    for secret in ("FAKE-prop-pw-77", "FAKE-sql-pw-42", "FAKE-url-pw-13"):
        assert secret not in everything
    assert "warehouse.prod:5432" in everything  # the address itself stays readable


def test_rolled_gzip_log_is_read(tmp_path):
    import gzip

    rolled = tmp_path / "gravitino_lineage_20261130.log.gz"
    rolled.write_bytes(gzip.compress((DATA / "gravitino_lineage.log").read_bytes()))
    plain = diagnose([str(DATA / "gravitino_lineage.log")])
    packed = diagnose([str(rolled)])
    assert packed.event_count == plain.event_count == 9
    assert [s.to_json() for s in packed.splits] == [s.to_json() for s in plain.splits]
    broken = tmp_path / "broken.log.gz"
    broken.write_bytes(gzip.compress(b"x" * 1000)[:20])
    with pytest.raises(UnreadableInput, match="damaged gzip"):
        diagnose([str(broken)])


def test_host_case_of_kafka_and_hdfs_but_never_topic_or_path_case(tmp_path):
    def event(job, ns, name):
        return {
            "eventType": "COMPLETE", "eventTime": "2026-11-30T10:00:00Z", "producer": f"https://example.test/{job}",
            "run": {"runId": "01890000-0000-7000-8000-000000000009"}, "job": {"namespace": "x", "name": job},
            "inputs": [{"namespace": ns, "name": name}], "outputs": [],
        }  # fmt: skip

    events = tmp_path / "hosts.jsonl"
    pairs = [
        ("a", "kafka://Kafka-1.PROD:9092", "clicks"), ("b", "kafka://kafka-1.prod:9092", "clicks"),
        ("c", "hdfs://NameNode:8020", "/data/events"), ("d", "hdfs://namenode:8020", "/data/events"),
        ("e", "kafka://kafka-1.prod:9092", "Clicks"), ("f", "hdfs://namenode:8020", "/data/Events"),
    ]  # fmt: skip
    events.write_text("".join(json.dumps(event(*p)) + "\n" for p in pairs))
    report = diagnose([str(events)])
    groups = sorted(sorted(d.key for d in s.datasets) for s in report.splits)
    assert groups == [
        [("hdfs://NameNode:8020", "/data/events"), ("hdfs://namenode:8020", "/data/events")],
        [("kafka://Kafka-1.PROD:9092", "clicks"), ("kafka://kafka-1.prod:9092", "clicks")],
    ]
    assert all("host case" in s.reason for s in report.splits)
    assert all(
        "make it write `kafka://kafka-1.prod:9092`" in s.fix or "`hdfs://namenode:8020`" in s.fix for s in report.splits
    )


def test_relative_and_unresolved_file_paths_are_no_split(tmp_path):
    """A `file` dataset whose name has no leading `/` (a relative path, an unsubstituted
    `${path}`) was read as a host: every such name became `/`, and unrelated tables one split."""

    def event(job, ns, name):
        return {
            "eventType": "COMPLETE", "eventTime": "2026-11-30T10:00:00Z", "producer": f"https://example.test/{job}",
            "run": {"runId": "01890000-0000-7000-8000-000000000009"}, "job": {"namespace": "x", "name": job},
            "inputs": [{"namespace": ns, "name": name}], "outputs": [],
        }  # fmt: skip

    events = tmp_path / "files.jsonl"
    pairs = [
        ("a", "file", "${path}"), ("b", "file", "orders"), ("c", "file", "relative/x"), ("d", "file", "/data/a"),
        ("e", "file", "/"), ("f", "file", "other/x"), ("g", "file", "/data/a/"),
    ]  # fmt: skip
    events.write_text("".join(json.dumps(event(*p)) + "\n" for p in pairs))
    report = diagnose([str(events)])
    groups = [sorted(d.key for d in s.datasets) for s in report.splits]
    assert groups == [[("file", "/data/a"), ("file", "/data/a/")]]  # the one real split: a trailing `/`


def test_the_listeners_fallback_name_joins_a_recorded_run_whose_events_carry_no_catalog_name(
    recorded_state, tmp_path, capsys
):
    """The events sent no longer carry the in-memory catalog's name as a symlink (it names nothing
    outside the job); the recorded document still says which Flink table each dataset is, so the
    listener's fallback dataset of that table is still joined to planlineage's file dataset."""
    listener = {
        "eventType": "START", "eventTime": "2026-12-02T06:37:37.301Z",
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.53.0/integration/flink",
        "run": {"runId": "01a23579-04f7-7b0b-ae42-1fd315358690"},
        "job": {"namespace": "planlineage", "name": "orders-pipeline.default_catalog.default_database.archive"},
        "inputs": [], "outputs": [{"namespace": "", "name": "default_catalog.default_database.archive"}],
    }  # fmt: skip
    events = tmp_path / "listener.jsonl"
    events.write_text(json.dumps(listener) + "\n")
    from planlineage.emitter.events import build_events, to_dict

    sent = [
        to_dict(e)
        for e in build_events(_statement_set(), job_name="j", job_namespace="n", run_id=RUN_ID, event_type="START")
    ]
    assert all("symlinks" not in (d.get("facets") or {}) for e in sent for d in e.get("outputs") or [])
    assert main(["doctor", "--events", str(events), "--state", "--format", "json"]) == 1
    out = json.loads(capsys.readouterr().out)
    members = [{(d["namespace"], d["name"]) for d in s["datasets"]} for s in out["splits"]]
    assert {("", "default_catalog.default_database.archive"), ("s3://datalake", "archive/orders")} in members
