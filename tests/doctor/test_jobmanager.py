"""`planlineage doctor --jobmanager URL`: the jobs a JobManager runs that no producer reported.

A loopback HTTP server answers the JobManager's REST shape (`GET /jobs/overview`: `{"jobs": [
{jid, name, state, start-time, end-time, duration, last-modification, tasks}]}`, Flink's
MultipleJobsDetails); the runs are recorded in a temporary state store by the lifecycle and the
watchers' ledger themselves, and the events are written as openlineage-flink and planlineage write
them."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from planlineage.cli.main import main
from planlineage.document import JobLineage, SinkLineage, TableLineage
from planlineage.emitter.run_ids import listener_run_id
from planlineage.lifecycle import runs
from planlineage.settings import Settings
from planlineage.store.sqlite import Store
from planlineage.watch import ledger

NOW_MS = int(time.time() * 1000)
MINUTE = 60_000

# Flink JobIDs: 32 hex digits
BY_FACET = "a1" * 16  # openlineage-flink named it in its flink_job run facet
BY_DERIVED_RUN = "b2" * 16  # the detached listener's run id derived from job id and start time
BY_EVENT_NAME = "c3" * 16  # an event of the same job name, 2 minutes before
BY_STATE_NAME = "d4" * 16  # a planlineage run of the same (platform-prefixed) name
BY_WATCHER = "e5" * 16  # the StreamPark watcher's snapshot names it
UNREPORTED = "f6" * 16  # nothing names it
FAR_OFF = "0a" * 16  # a run of its name, but 2 hours before
DROPPED = "1b" * 16  # the watcher follows it; planlineage dropped its run
DEFAULT_NAME = "2c" * 16  # Flink's default name, nothing reported
ENDED_UNREPORTED = "3d" * 16  # finished 5 minutes ago, nothing reported
ENDED_LONG_AGO = "4e" * 16  # finished 3 days ago


def _job(jid: str, name: str, state: str = "RUNNING", started: int = NOW_MS - 30 * MINUTE, ended: int = -1) -> dict:
    """One entry of /jobs/overview as Flink writes it (JobDetails)."""
    return {
        "jid": jid,
        "name": name,
        "start-time": started,
        "end-time": ended,
        "duration": (ended if ended > 0 else NOW_MS) - started,
        "state": state,
        "last-modification": started + 1000,
        "tasks": {
            "running": 2 if state == "RUNNING" else 0,
            "canceling": 0,
            "canceled": 0,
            "total": 2,
            "created": 0,
            "scheduled": 0,
            "deploying": 0,
            "reconciling": 0,
            "finished": 0 if state == "RUNNING" else 2,
            "initializing": 0,
            "failed": 0,
        },
        "pending-operators": 0,
    }


JOBS = [
    _job(BY_FACET, "orders-enrich"),
    _job(BY_DERIVED_RUN, "payments"),
    _job(BY_EVENT_NAME, "clicks-sessionize"),
    _job(BY_STATE_NAME, "inventory", started=NOW_MS - MINUTE),  # the run is recorded as the tests start
    _job(BY_WATCHER, "some job the platform names"),
    _job(UNREPORTED, "nightly-export"),
    _job(FAR_OFF, "fraud-score"),
    _job(DROPPED, "legacy-sync"),
    _job(DEFAULT_NAME, "insert-into_default_catalog.default_database.snk"),
    _job(ENDED_UNREPORTED, "backfill", "FINISHED", NOW_MS - 20 * MINUTE, NOW_MS - 5 * MINUTE),
    _job(ENDED_LONG_AGO, "old-batch", "FAILED", NOW_MS - 3 * 1440 * MINUTE, NOW_MS - 3 * 1440 * MINUTE + 5000),
]
START_OF = {job["jid"]: job["start-time"] for job in JOBS}


class JobManager:
    """Answers GET paths with scripted (status, body); records the requests' Authorization."""

    def __init__(self, answers: dict[str, tuple[int, bytes]]) -> None:
        self.answers = answers
        self.authorizations: list[str | None] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                owner.authorizations.append(self.headers.get("Authorization"))
                status, body = owner.answers.get(
                    self.path, (404, b'{"errors":["Not found: ' + self.path.encode() + b'"]}')
                )
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=UTF-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> JobManager:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def jobmanager():
    with JobManager({"/jobs/overview": (200, json.dumps({"jobs": JOBS}).encode())}) as server:
        yield server


def _lineage(*sinks: str) -> JobLineage:
    """A job reading a datagen table and writing a Kafka topic per sink (`snk` by default)."""
    from planlineage.registry import resolve

    source = TableLineage(table="default_catalog.default_database.src", connector="datagen", datasets=[])
    written = []
    for name in sinks or ("snk",):
        options = {"connector": "kafka", "topic": name, "properties.bootstrap.servers": "kafka:9092"}
        table = f"default_catalog.default_database.{name}"
        datasets = resolve(options, table=table).datasets
        written.append(SinkLineage(table=table, connector="kafka", datasets=datasets, inputs=[source]))
    return JobLineage(flink_version="2.1.0", sinks=written)


@pytest.fixture
def state(clean_env, tmp_path):
    """Runs recorded by the lifecycle (lineage known, one pending, one dropped) and the watcher's
    snapshot naming Flink job ids, in the home's SQLite store."""
    store = Store()
    settings = Settings(store)
    settings.set("lineage.transport", "file")
    settings.set("lineage.file", str(tmp_path / "sent.jsonl"))
    assert runs.record_submission(store, "flink:7", "streampark.inventory", _lineage(), "INSERT ...", settings)
    assert runs.record_submission(store, "flink:8", "streampark.platform-job", _lineage(), "INSERT ...", settings)
    ledger.save_app(store, "mysql://streampark-db/streampark", "flink:8", ledger.Snap(state=5, job_id=BY_WATCHER))
    # far off: a run of this name recorded, but 2 hours before the job the JobManager runs
    assert runs.record_submission(store, "flink:9", "fraud-score", _lineage(), "INSERT ...", settings)
    long_before = _iso(START_OF[FAR_OFF] - 120 * MINUTE)
    store.write(lambda conn: conn.execute("UPDATE runs SET created = ? WHERE app_id = 'flink:9'", (long_before,)))
    # dropped: the compile failed, the run left the runs table; the watcher still follows the job
    dropped_run = runs.record_pending_submission(store, "flink:10", "streampark.legacy-sync", "INSERT ...", settings)
    assert dropped_run
    assert runs.abandon_lineage(store, "flink:10", dropped_run, "did not compile: Object 'x' not found")
    ledger.save_app(store, "mysql://streampark-db/streampark", "flink:10", ledger.Snap(state=5, job_id=DROPPED))
    return clean_env


def _iso(ms: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _event(name: str, run_id: str, at_ms: int, facets: dict | None = None, event_type: str = "START") -> dict:
    return {
        "eventType": event_type,
        "eventTime": _iso(at_ms),
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.40.0/integration/flink",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "job": {"namespace": "flink-jobs", "name": name},
        "run": {"runId": run_id, "facets": facets or {}},
        "inputs": [],
        "outputs": [{"namespace": "kafka://kafka:9092", "name": "out"}],
    }


@pytest.fixture
def events(tmp_path) -> Path:
    path = tmp_path / "openlineage.jsonl"
    lines = [
        # openlineage-flink: the flink_job run facet (FlinkJobDetailsFacet) names the job; its name differs
        _event(
            "renamed-by-openlineage.job.name",
            "01930000-0000-7000-8000-0000000000a1",
            NOW_MS - 29 * MINUTE,
            {"flink_job": {"jobId": BY_FACET}},
        ),
        # the detached listener: the run id derived from the job id and start time, no facet
        _event("payments-renamed", listener_run_id(BY_DERIVED_RUN, START_OF[BY_DERIVED_RUN]), NOW_MS - 20 * MINUTE),
        # no job id anywhere (openlineage-flink #3788 behind a gateway): the name, 2 minutes before the start
        _event("clicks-sessionize", "01930000-0000-7000-8000-0000000000c3", START_OF[BY_EVENT_NAME] - 2 * MINUTE),
        _event(
            "clicks-sessionize",
            "01930000-0000-7000-8000-0000000000c3",
            START_OF[BY_EVENT_NAME] + 5 * MINUTE,
            event_type="RUNNING",
        ),
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _json_report(capsys, *argv: str) -> tuple[int, dict]:
    code = main(["doctor", *argv, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def test_unreported_jobs_are_listed_and_reported_ones_are_not(jobmanager, state, events, capsys):
    code, report = _json_report(capsys, "--jobmanager", jobmanager.url, "--events", str(events), "--state")
    assert code == 1
    listed = {spot["job_id"]: spot for spot in report["blind_spots"]}
    assert set(listed) == {UNREPORTED, FAR_OFF, DROPPED, DEFAULT_NAME}
    matched = {m["job_id"]: m["by"] for m in report["matched"]}
    assert matched == {
        BY_FACET: "job id",
        BY_DERIVED_RUN: "run id",
        BY_EVENT_NAME: "name and start time",
        BY_STATE_NAME: "name and start time",
        BY_WATCHER: "job id",
    }
    assert listed[UNREPORTED]["name"] == "nightly-export"
    assert listed[UNREPORTED]["state"] == "RUNNING"
    assert listed[UNREPORTED]["started"] == _iso(START_OF[UNREPORTED])[:19] + "Z"
    assert "no run of a job named 'nightly-export' was reported" in listed[UNREPORTED]["why"]
    assert "started 120 min before it (beyond the 10 min window)" in listed[FAR_OFF]["why"]
    assert "dropped its run" in listed[DROPPED]["why"] and "Object 'x' not found" in listed[DROPPED]["why"]
    assert "Flink's default" in listed[DEFAULT_NAME]["why"]
    assert report["jobs_checked"] == 9  # the ended jobs are not checked by default


def test_each_source_alone_matches_what_it_holds(jobmanager, state, events, capsys):
    _, from_events = _json_report(capsys, "--jobmanager", jobmanager.url, "--events", str(events))
    assert {m["job_id"] for m in from_events["matched"]} == {BY_FACET, BY_DERIVED_RUN, BY_EVENT_NAME}
    _, from_state = _json_report(capsys, "--jobmanager", jobmanager.url, "--state")
    assert {m["job_id"] for m in from_state["matched"]} == {BY_STATE_NAME, BY_WATCHER}
    assert {s["job_id"] for s in from_state["blind_spots"]} >= {BY_FACET, BY_EVENT_NAME, UNREPORTED}


def test_the_window_decides_a_name_match(jobmanager, events, clean_env, capsys):
    _, narrow = _json_report(capsys, "--jobmanager", jobmanager.url, "--events", str(events), "--match-window", "1m")
    assert BY_EVENT_NAME in {s["job_id"] for s in narrow["blind_spots"]}  # its run started 2 minutes before
    assert BY_FACET not in {s["job_id"] for s in narrow["blind_spots"]}  # the job id needs no window


def test_one_run_is_one_job(tmp_path, clean_env, capsys):
    """A name submitted twice, lineage reported once: the job nearest the run is matched, the other listed."""
    first, second = "11" * 16, "22" * 16
    jobs = [_job(first, "etl", started=NOW_MS - 10 * MINUTE), _job(second, "etl", started=NOW_MS - 8 * MINUTE)]
    path = tmp_path / "events.jsonl"
    path.write_text(json.dumps(_event("etl", "01930000-0000-7000-8000-000000000011", NOW_MS - 9 * MINUTE + 20_000)))
    with JobManager({"/jobs/overview": (200, json.dumps({"jobs": jobs}).encode())}) as server:
        code, report = _json_report(capsys, "--jobmanager", server.url, "--events", str(path))
    assert code == 1
    assert [m["job_id"] for m in report["matched"]] == [second]  # 40 s from the run; the first is 80 s away
    assert [s["job_id"] for s in report["blind_spots"]] == [first]
    assert "belongs to another job" in report["blind_spots"][0]["why"]


def test_recently_finished_jobs_with_the_option(jobmanager, state, events, capsys):
    _, report = _json_report(
        capsys, "--jobmanager", jobmanager.url, "--events", str(events), "--state", "--finished-within", "1h"
    )
    listed = {s["job_id"]: s for s in report["blind_spots"]}
    assert ENDED_UNREPORTED in listed and listed[ENDED_UNREPORTED]["ended"]
    assert ENDED_LONG_AGO not in listed
    assert report["jobs_checked"] == 10


def test_text_table_and_exit_0_when_everything_was_reported(tmp_path, clean_env, capsys):
    jobs = [_job(BY_FACET, "orders-enrich")]
    path = tmp_path / "events.jsonl"
    path.write_text(
        json.dumps(_event("x", "01930000-0000-7000-8000-0000000000a1", NOW_MS, {"flink_job": {"jobId": BY_FACET}}))
    )
    with JobManager({"/jobs/overview": (200, json.dumps({"jobs": jobs}).encode())}) as server:
        assert main(["doctor", "--jobmanager", server.url, "--events", str(path)]) == 0
    out = capsys.readouterr().out
    assert "1 reported, 0 without lineage: no blind spot" in out


def test_text_table_lists_the_blind_spots(jobmanager, state, events, capsys):
    assert main(["doctor", "--jobmanager", jobmanager.url, "--events", str(events), "--state"]) == 1
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if line.startswith("JOB ID"))
    assert header.split() == ["JOB", "ID", "NAME", "STATE", "STARTED", "WHY", "UNMATCHED"]
    row = next(line for line in lines if line.startswith(UNREPORTED))
    assert "nightly-export" in row and "RUNNING" in row and "nothing reported names its job id" in row
    assert not any(line.startswith(BY_FACET) for line in lines)
    assert f"JobManager {jobmanager.url}: 11 job(s) listed, 9 checked" in "\n".join(lines)


def test_the_state_store_is_only_read(jobmanager, state, capsys):
    before = {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in state.iterdir()}
    main(["doctor", "--jobmanager", jobmanager.url, "--state"])
    assert {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in state.iterdir()} == before


def test_a_store_the_watch_rename_has_not_reached_is_read(jobmanager, clean_env, capsys):
    """A store written before store step 9 keeps `streampark_apps(app_key)`; the doctor never migrates."""
    import sqlite3

    clean_env.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(clean_env / "state.db")
    conn.executescript(
        "CREATE TABLE runs (app_id TEXT PRIMARY KEY, run_id TEXT NOT NULL, job_name TEXT NOT NULL, namespace TEXT "
        "NOT NULL, lineage TEXT, sql TEXT, platform_state TEXT, last_event TEXT, pending TEXT NOT NULL DEFAULT '[]', "
        "created TEXT NOT NULL, updated TEXT NOT NULL);"
        "CREATE TABLE streampark_apps (source TEXT NOT NULL, app_key TEXT NOT NULL, state INTEGER, job_id TEXT NOT "
        "NULL DEFAULT '', run_job_id TEXT, lost_since REAL, lost_sent INTEGER NOT NULL DEFAULT 0, PRIMARY KEY "
        "(source, app_key));"
    )
    conn.execute(
        "INSERT INTO runs VALUES ('flink:8', '01930000-0000-7000-8000-000000000008', 'streampark.x', 'ns', '{}', "
        "NULL, 'RUNNING', 'RUNNING', '[]', '2020-01-01T00:00:00.000Z', '2020-01-01T00:00:00.000Z')"
    )
    conn.execute("INSERT INTO streampark_apps VALUES ('db', 'flink:8', 5, ?, NULL, NULL, 0)", (BY_WATCHER,))
    conn.commit()
    conn.close()
    _, report = _json_report(capsys, "--jobmanager", jobmanager.url, "--state")
    assert {m["job_id"]: m["by"] for m in report["matched"]} == {BY_WATCHER: "job id"}


def test_a_coexisting_run_is_matched_by_its_derived_run_id(jobmanager, clean_env, tmp_path, capsys):
    store = Store()
    settings = Settings(store)
    settings.set("lineage.transport", "file")
    settings.set("lineage.file", str(tmp_path / "sent.jsonl"))
    derived = listener_run_id(UNREPORTED, START_OF[UNREPORTED])
    runs.record_submission(store, "app-1", "other-name", _lineage(), "INSERT ...", settings, run_id=derived)
    _, report = _json_report(capsys, "--jobmanager", jobmanager.url, "--state")
    assert {m["job_id"]: m["by"] for m in report["matched"]} == {UNREPORTED: "run id"}


def test_a_jobmanager_that_is_down(clean_env, tmp_path, capsys):
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://admin:FAKE-jm-password@127.0.0.1:{port}"
    assert main(["doctor", "--jobmanager", url, "--state"]) == 2
    captured = capsys.readouterr()
    assert f"cannot reach the JobManager at http://127.0.0.1:{port}" in captured.err
    assert "rest.port" in captured.err
    assert "FAKE-jm-password" not in captured.out + captured.err and "admin" not in captured.err


def test_not_a_jobmanager(clean_env, capsys):
    with JobManager({"/": (200, b"<html>hello</html>")}) as server:
        assert main(["doctor", "--jobmanager", server.url, "--state"]) == 2
    err = capsys.readouterr().err
    assert "answered /jobs/overview with HTTP 404: not a Flink JobManager's REST API" in err
    assert "8081" in err


def test_the_sql_gateway_given_instead_is_named(clean_env, capsys):
    versions = json.dumps({"versions": ["V1", "V2", "V3", "V4"]}).encode()
    with JobManager({"/api_versions": (200, versions)}) as server:
        assert main(["doctor", "--jobmanager", server.url, "--state"]) == 2
    assert "It is a Flink SQL Gateway: give the JobManager of the cluster it submits to" in capsys.readouterr().err


def test_an_answer_that_is_json_but_not_jobs(clean_env, capsys):
    with JobManager({"/jobs/overview": (200, b'{"status": "ok"}')}) as server:
        assert main(["doctor", "--jobmanager", server.url, "--state"]) == 2
    assert "JSON without a list of jobs" in capsys.readouterr().err


def test_credentials_are_sent_and_never_shown(clean_env, tmp_path, capsys):
    answers = {"/flink/jobs/overview": (200, json.dumps({"jobs": [_job(UNREPORTED, "nightly-export")]}).encode())}
    with JobManager(answers) as server:
        url = server.url.replace("http://", "http://ops:FAKE-s3cret@") + "/flink/"
        code, report = _json_report(capsys, "--jobmanager", url, "--state")
        assert server.authorizations == ["Basic b3BzOkZBS0UtczNjcmV0"]  # ops:FAKE-s3cret
    assert code == 1
    assert report["jobmanager"] == f"{server.url}/flink/"  # as given, without its credentials
    assert "FAKE-s3cret" not in json.dumps(report)


def test_nothing_to_match_against_is_a_usage_error(jobmanager, clean_env, capsys):
    assert main(["doctor", "--jobmanager", jobmanager.url]) == 2
    assert "--events FILE" in capsys.readouterr().err


def test_a_script_is_not_a_report(jobmanager, clean_env, tmp_path, capsys):
    script = tmp_path / "job.sql"
    script.write_text("INSERT INTO snk SELECT * FROM src;\n", encoding="utf-8")
    assert main(["doctor", "--jobmanager", jobmanager.url, str(script)]) == 2
    assert "not against scripts" in capsys.readouterr().err


def test_the_options_of_jobmanager_go_with_it(clean_env, tmp_path, capsys):
    assert main(["doctor", "--state", "--finished-within", "1h"]) == 2
    assert "go with --jobmanager" in capsys.readouterr().err


def test_the_sql_gateway_proxys_runs_and_jobs(clean_env, tmp_path, capsys):
    """The proxy records a job's run as app `gateway:<JobID>` and the job ids it took in
    gateway_jobs_seen; one taken but never recorded as a run is listed, saying so."""
    from planlineage.doctor.reported import GATEWAY_APP_PREFIX
    from planlineage.gateway import ledger as gateway_ledger
    from planlineage.gateway.jobmanager import job_key

    assert job_key(UNREPORTED) == GATEWAY_APP_PREFIX + UNREPORTED  # the doctor reads the proxy's key
    recorded, taken_only = "5f" * 16, "6a" * 16
    store = Store()
    settings = Settings(store)
    settings.set("lineage.transport", "file")
    settings.set("lineage.file", str(tmp_path / "sent.jsonl"))
    assert runs.record_submission(store, job_key(recorded), "insert-into_x", _lineage(), "INSERT ...", settings)
    gateway = "http://127.0.0.1:8083"
    for job_id in (recorded, taken_only):
        store.write(lambda conn, j=job_id: gateway_ledger.claim_job(conn, j, gateway, "session-1", "op-" + j, 1.0))
    jobs = [_job(recorded, "insert-into_x", started=NOW_MS - 3 * 60 * MINUTE), _job(taken_only, "adhoc")]
    with JobManager({"/jobs/overview": (200, json.dumps({"jobs": jobs}).encode())}) as server:
        code, report = _json_report(capsys, "--jobmanager", server.url, "--state")
    assert code == 1
    assert {m["job_id"]: m["by"] for m in report["matched"]} == {recorded: "job id"}
    [spot] = report["blind_spots"]
    assert spot["job_id"] == taken_only
    assert spot["why"].startswith("the SQL Gateway proxy took its submission (gateway http://127.0.0.1:8083, session")
    assert spot["why"].endswith("but no run of it is recorded")


def test_planlineages_own_statement_set_events_match_on_the_parents_name(tmp_path, clean_env, capsys):
    """planlineage's events of a STATEMENT SET: a parent run and one child job per sink (named
    `<job>.<sink>`, its parent facet naming the parent); they are one run, matched on the parent's name."""
    from planlineage.emitter.events import build_events, to_dict

    two = _lineage("snk", "snk2")
    job_id, started = "7b" * 16, NOW_MS - 4 * MINUTE
    built = build_events(
        two,
        job_name="orders-set",
        job_namespace="planlineage",
        run_id="01930000-0000-7000-8000-0000000000b7",
        event_type="START",
        event_time=_iso(started - 30_000),
    )
    children = [e for e in built if e.job.name != "orders-set"]
    assert children  # the test reads real child events
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(to_dict(e)) + "\n" for e in children), encoding="utf-8")
    with JobManager(
        {"/jobs/overview": (200, json.dumps({"jobs": [_job(job_id, "orders-set", started=started)]}).encode())}
    ) as server:
        code, report = _json_report(capsys, "--jobmanager", server.url, "--events", str(path))
    assert code == 0
    assert [(m["job_id"], m["by"], m["run_id"]) for m in report["matched"]] == [
        (job_id, "name and start time", "01930000-0000-7000-8000-0000000000b7")
    ]


@pytest.fixture(scope="module")
def postgres():
    from databases import postgres_server

    with postgres_server() as server:
        yield server


def test_a_shared_postgresql_store_is_read(postgres, jobmanager, clean_env, tmp_path, monkeypatch, capsys):
    """The node's shared store (PLANLINEAGE_STORE): its runs and the watchers' snapshot, as on SQLite."""
    from planlineage.store import open_store

    url = postgres.create_database(f"doctor_jm_{tmp_path.name[-20:].replace('-', '_')}")
    monkeypatch.setenv("PLANLINEAGE_STORE", url)
    store = open_store()
    settings = Settings(store)
    settings.set("lineage.transport", "file")
    settings.set("lineage.file", str(tmp_path / "sent.jsonl"))
    assert runs.record_submission(store, "flink:7", "streampark.inventory", _lineage(), "INSERT ...", settings)
    assert runs.record_submission(store, "flink:8", "streampark.platform-job", _lineage(), "INSERT ...", settings)
    ledger.save_app(store, "mysql://streampark-db/streampark", "flink:8", ledger.Snap(state=5, job_id=BY_WATCHER))
    code, report = _json_report(capsys, "--jobmanager", jobmanager.url, "--state")
    assert code == 1
    assert {m["job_id"]: m["by"] for m in report["matched"]} == {
        BY_STATE_NAME: "name and start time",
        BY_WATCHER: "job id",
    }
    assert "FAKE" not in json.dumps(report)  # the store named without its password
    assert any(
        "PostgreSQL" in source and "2 recorded run(s), 1 watched job id(s)" in source for source in report["sources"]
    )
