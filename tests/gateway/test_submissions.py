"""The lineage side of ``planlineage gateway`` end to end, no JVM: ``Lineage.job_submitted`` with a
session's statements → the real compile service and pipeline with the recorded planner
(tests/lifecycle/recorded_planner.py: recorded CompiledPlans of Flink 2.3, the real walk and
naming) → START per sink at a Gravitino-compatible server; the job's states from a loopback
JobManager → RUNNING then COMPLETE, each once; handed over twice or after a restart, recorded
once; the JobManager down and back; the run openlineage-flink's listener derives; nothing at all
when lineage is not configured; never a raise."""

from __future__ import annotations

import importlib.util
import os
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from compile_services import services
from lifecycle_helpers import wait_for
from recorded_planner import RecordedPlanner, case_sql

from planlineage import script
from planlineage.emitter.run_ids import listener_run_id
from planlineage.gateway import job_script
from planlineage.gateway.records import JobSubmitted
from planlineage.gateway.submissions import Lineage
from planlineage.lifecycle import compile_queue, runs
from planlineage.listener_conf import FLINK_LISTENER_FACTORY, FLINK_LISTENER_OPTION
from planlineage.settings import Settings
from planlineage.store.sqlite import Store

_spec = importlib.util.spec_from_file_location(
    "gateway_fake_jobmanager", Path(__file__).with_name("fake_jobmanager.py")
)
_fake = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fake)

JOB = "fedcba9876543210fedcba9876543210"
STARTED = 1_765_000_000_123


@pytest.fixture
def jm():
    with _fake.FakeJobManager() as server:
        yield server


@pytest.fixture
def planner(clean_env, tmp_path, monkeypatch):
    """Flink 2.3 answering recorded plans; the compile services this test starts are stopped after it."""
    recorded = RecordedPlanner(tmp_path / "flink-cache", minors=("2.3",))
    for name, value in recorded.env().items():
        monkeypatch.setenv(name, value)
    folder = tempfile.mkdtemp(prefix="pl-gw-")  # short: socket paths; no warm planner of the machine answers
    monkeypatch.setenv("PLANLINEAGE_PLANNER_DIR", folder)
    monkeypatch.setenv("PLANLINEAGE_COMPILE_IDLE_SECONDS", "0.3")
    monkeypatch.setenv("PLANLINEAGE_COMPILE_FLUSH_SECONDS", "3")
    yield recorded
    for pid in services(clean_env):
        try:
            os.kill(pid, 9)
        except OSError:
            pass


@pytest.fixture
def store(clean_env, server):
    store = Store(clean_env / "state.db")
    Settings(store).set("lineage.address", server.address)
    return store


def statements(case: str) -> list[str]:
    """A fixture case as a session sends it: one statement per call, with reads in between."""
    sent = []
    for statement in script.split(case_sql(case)):
        if statement.kind in script.SINKS:
            sent += ["SELECT * FROM orders", "SHOW TABLES"]  # only read: left out of the compile
        sent.append(statement.sql)
    return sent


def submitted(sent: list[str], gateway: str, properties: dict | None = None, job_id: str = JOB) -> JobSubmitted:
    return JobSubmitted(
        gateway=gateway, session="s-1", operation="o-1", job_id=job_id, statements=tuple(sent),
        properties=dict(properties or {}), flink_version="2.3.0",
    )  # fmt: skip


def lineage(store, jm_url: str | None, lines: list[str]) -> Lineage:
    return Lineage(store, Settings(store), jm_url, say=lines.append, interval=0.2, lost_grace=30.0)


def events(server, run_id: str) -> list[tuple[str, str, tuple[str, ...]]]:
    """(job name, event type, outputs) of every event of the run and its children, in arrival order."""
    found = []
    for e in list(server.events):
        parent = ((e["run"].get("facets") or {}).get("parent") or {}).get("run", {}).get("runId")
        if run_id in (e["run"]["runId"], parent):
            found.append((e["job"]["name"], e["eventType"], tuple(sorted(d["name"] for d in e.get("outputs") or []))))
    return found


def kinds(server, run_id: str, job: str) -> list[str]:
    """The event types of one job of the run, in arrival order."""
    return [kind for name, kind, _ in events(server, run_id) if name == job]


def test_an_insert_gets_start_per_sink_then_running_and_complete_each_once(store, planner, server, jm):
    sent = statements("union_all")
    planner.record(job_script.build(sent, {"pipeline.name": "orders-union"}).sql, "union_all")
    jm.add(JOB, "orders-union", "RUNNING", STARTED)
    lines: list[str] = []
    side = lineage(store, jm.url, lines)
    side.start_following()
    try:
        run_id = side.job_submitted(submitted(sent, jm.url, {"pipeline.name": "orders-union"}))
        assert run_id is not None
        wait_for(lambda: "RUNNING" in kinds(server, run_id, "orders-union"), what="RUNNING")
        jm.set_state(JOB, "FINISHED")
        wait_for(lambda: "COMPLETE" in kinds(server, run_id, "orders-union"), what="COMPLETE")
    finally:
        side.stop()
    # One sink: one OpenLineage job, named by pipeline.name, writing the sink's dataset.
    assert events(server, run_id) == [("orders-union", kind, ("out-a",)) for kind in ("START", "RUNNING", "COMPLETE")]
    start = next(e for e in server.events if e["eventType"] == "START")
    assert sorted(d["name"] for d in start["inputs"]) == ["orders", "refunds"]
    assert max(server.keys().values()) == 1  # every event once
    assert any("gateway:" + JOB in line and "compiling" in line for line in lines)


@pytest.mark.parametrize("syntax", ["EXECUTE STATEMENT SET", "BEGIN STATEMENT SET"])
def test_a_statement_set_gets_start_per_sink(store, planner, server, jm, syntax):
    sent = statements("statement_set")
    if syntax == "BEGIN STATEMENT SET":  # the SQL client's block: one call per statement, run at END
        inserts = [s.sql for s in script.split(sent[-1].split("BEGIN", 1)[1].rsplit("END", 1)[0])]
        sent = [*sent[:-1], "BEGIN STATEMENT SET", *inserts, "END"]
    planner.record(job_script.build(sent).sql, "statement_set")
    side = lineage(store, jm.url, [])
    run_id = side.job_submitted(submitted(sent, jm.url))
    assert run_id is not None
    name = "insert-into_" + ",".join(f"default_catalog.default_database.{t}" for t in ("out_a", "out_b", "out_s"))
    wait_for(lambda: len([e for e in events(server, run_id) if e[1] == "START"]) == 4, what="START per sink")
    starts = {(job, outputs) for job, kind, outputs in events(server, run_id) if kind == "START"}
    assert starts == {
        (name, ()),
        (f"{name}.default_catalog.default_database.out_a", ("out-a",)),
        (f"{name}.default_catalog.default_database.out_b", ("dw.public.out_b",)),
        (f"{name}.default_catalog.default_database.out_s", ()),
    }


def test_a_job_handed_over_twice_or_after_a_restart_is_recorded_and_followed_once(store, planner, server, jm):
    sent = statements("union_all")
    planner.record(job_script.build(sent).sql, "union_all")
    jm.add(JOB, "job", "RUNNING", STARTED)
    first = lineage(store, jm.url, [])
    first.start_following()
    run_id = first.job_submitted(submitted(sent, jm.url))
    assert first.job_submitted(submitted(sent, jm.url)) == run_id
    wait_for(lambda: "RUNNING" in kinds(server, run_id, "job"), what="RUNNING")
    first.stop()
    jm.set_state(JOB, "FINISHED")
    again = lineage(store, None, [])  # a restarted proxy, --jobmanager not given: the store remembers it
    assert again.job_submitted(submitted(sent, jm.url)) == run_id
    again.start_following()
    try:
        wait_for(lambda: "COMPLETE" in kinds(server, run_id, "job"), what="COMPLETE after the restart")
    finally:
        again.stop()
    assert kinds(server, run_id, "job") == ["START", "RUNNING", "COMPLETE"]
    assert max(server.keys().values()) == 1


def test_a_jobmanager_down_at_submission_and_back(store, planner, server, jm):
    sent = statements("union_all")
    planner.record(job_script.build(sent).sql, "union_all")
    jm.add(JOB, "insert-into_default_catalog.default_database.out_a", "RUNNING", STARTED)
    jm.down()
    lines: list[str] = []
    side = lineage(store, jm.url, lines)
    side.start_following()
    try:
        run_id = side.job_submitted(submitted(sent, jm.url))  # named by Flink's rule from the script
        name = "insert-into_default_catalog.default_database.out_a"
        wait_for(lambda: "START" in kinds(server, run_id, name), what="START while the JobManager is down")
        wait_for(lambda: any("cannot be reached" in line for line in lines), what="the outage said")
        jm.up()
        jm.set_state(JOB, "FINISHED")
        wait_for(lambda: "COMPLETE" in kinds(server, run_id, name), timeout=30, what="COMPLETE once back")
    finally:
        side.stop()
    assert kinds(server, run_id, name) == ["START", "RUNNING", "COMPLETE"]
    assert sum("cannot be reached" in line for line in lines) == 1  # said once per outage


def test_the_listeners_run_and_the_jobmanager_from_the_gateways_configuration(store, planner, server, jm):
    sent = statements("union_all")
    gateway_conf = {
        FLINK_LISTENER_OPTION: FLINK_LISTENER_FACTORY,  # the cluster runs openlineage-flink's listener
        "openlineage.flink.enableDetachedJobTracking": "true",
        "rest.address": "127.0.0.1",
        "rest.port": str(jm.port),
    }
    jm.sessions["s-1"] = gateway_conf
    planner.record(job_script.build(sent, {"pipeline.name": "shared"}).sql, "union_all")
    jm.add(JOB, "shared", "RUNNING", STARTED)
    lines: list[str] = []
    side = lineage(store, None, lines)  # no --jobmanager
    side.start_following()
    try:
        run_id = side.job_submitted(submitted(sent, jm.url, {"pipeline.name": "shared"}))
        assert run_id == listener_run_id(JOB, STARTED)
        run = runs.current_run(store, "gateway:" + JOB)
        assert (run.namespace, run.job_name) == ("flink-jobs", "shared")  # the listener's job
        jm.set_state(JOB, "FINISHED")
        wait_for(lambda: "COMPLETE" in kinds(server, run_id, "shared"), what="COMPLETE")
    finally:
        side.stop()
    assert any(f"JobManager {jm.url}" in line for line in lines)


def test_nothing_at_all_when_lineage_is_not_configured(clean_env, jm):
    store = Store(clean_env / "state.db")
    side = Lineage(store, Settings(store), jm.url, say=lambda _: pytest.fail("said something"))
    side.start_following()
    assert side.job_submitted(submitted(statements("union_all"), jm.url)) is None
    side.stop()
    assert jm.calls == []
    assert not (clean_env / "state.db").exists()


def test_nothing_raises_into_the_proxy(store, jm, monkeypatch):
    lines: list[str] = []
    side = lineage(store, jm.url, lines)
    assert side.job_submitted(submitted(["INSERT INTO t SELECT 1"], jm.url, job_id="not-a-job-id")) is None
    assert side.job_submitted(submitted(["SELECT 1"], jm.url)) is None  # a query's job: quiet
    assert not any("writes no table" in line for line in lines)
    assert side.job_submitted(submitted(["INSERT INTO t SELECT 1", "END"], jm.url)) is None
    assert side.job_submitted(JobSubmitted("", "", "", JOB, statements=None)) is None  # type: ignore[arg-type]

    def broken(*_args, **_kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(compile_queue, "start", broken)
    assert side.job_submitted(submitted(["CREATE TABLE t (a INT)", "INSERT INTO t SELECT 1"], jm.url)) is None
    assert any("closes no BEGIN STATEMENT SET" in line for line in lines)
    assert any("disk on fire" in line for line in lines)
    talkative = lineage(store, jm.url, lines)
    talkative.verbose = True
    assert talkative.job_submitted(submitted(["SELECT 1"], jm.url, job_id="1" * 32)) is None
    assert any("writes no table" in line for line in lines)
    assert Counter(line.split(":")[0] for line in lines)  # each said, none raised


@pytest.fixture(scope="module")
def postgres():
    from databases import postgres_server

    with postgres_server() as started:
        yield started


def test_two_proxies_on_one_postgresql_store_report_a_job_once(planner, server, jm, postgres, monkeypatch):
    from planlineage.store import open_store

    monkeypatch.setenv("PLANLINEAGE_STORE", postgres.create_database(f"gw{os.getpid()}"))
    monkeypatch.setenv("PLANLINEAGE_LINEAGE_ADDRESS", server.address)
    sent = statements("union_all")
    planner.record(job_script.build(sent).sql, "union_all")
    jm.add(JOB, "job", "RUNNING", STARTED)
    one, two = open_store(), open_store()  # two proxies behind a balancer, one shared store
    first, second = lineage(one, jm.url, []), lineage(two, jm.url, [])
    run_id = first.job_submitted(submitted(sent, jm.url))
    assert run_id is not None
    assert second.job_submitted(submitted(sent, jm.url)) == run_id  # the job was recorded by the first
    first.start_following()
    second.start_following()
    try:
        wait_for(lambda: "RUNNING" in kinds(server, run_id, "job"), what="RUNNING")
        jm.set_state(JOB, "FINISHED")
        wait_for(lambda: "COMPLETE" in kinds(server, run_id, "job"), what="COMPLETE")
    finally:
        first.stop()
        second.stop()
    assert kinds(server, run_id, "job") == ["START", "RUNNING", "COMPLETE"]
    assert max(server.keys().values()) == 1


def test_a_hand_over_the_store_refuses_is_kept_in_the_spool_and_reported_once_it_is_back(
    clean_env, planner, server, jm
):
    """The state store refuses writes at hand-over (its SQLite file held by another writer past
    the proxy's busy timeout): the job is kept in the node's spool as `submit` keeps a submission,
    then recorded, compiled and followed once the store takes writes: START, RUNNING, COMPLETE once."""
    import sqlite3

    store = Store(clean_env / "state.db", busy_timeout=0.2)
    Settings(store).set("lineage.address", server.address)
    sent = statements("union_all")
    planner.record(job_script.build(sent, {"pipeline.name": "kept-job"}).sql, "union_all")
    jm.add(JOB, "kept-job", "RUNNING", STARTED)
    lines: list[str] = []
    side = lineage(store, jm.url, lines)
    side.start_following()
    store.write(lambda conn: None)  # the database and its tables exist: only the hand-over's write is refused
    holder = sqlite3.connect(store.path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # every other write now waits, then fails: the store refuses writes
    try:
        run_id = side.job_submitted(submitted(sent, jm.url, {"pipeline.name": "kept-job"}))
        assert run_id is not None
        assert side.job_submitted(submitted(sent, jm.url, {"pipeline.name": "kept-job"})) == run_id  # twice: once
        assert runs.current_run(store, "gateway:" + JOB) is None  # nothing recorded: the store refused it
        assert len(list((clean_env / "spool").glob("*.json"))) == 1  # kept, with its run id
        assert [line for line in lines if "kept in this node's spool" in line] == [
            f"gateway:{JOB} kept-job: the state store cannot be written (state database {store.path}: database is "
            "locked): kept in this node's spool, reported once the store takes it"
        ]
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    try:
        wait_for(lambda: "RUNNING" in kinds(server, run_id, "kept-job"), timeout=60, what="START, RUNNING once back")
        jm.set_state(JOB, "FINISHED")
        wait_for(lambda: "COMPLETE" in kinds(server, run_id, "kept-job"), timeout=30, what="COMPLETE")
    finally:
        side.stop()
    assert [kind for _, kind, _ in events(server, run_id) if kind != "START"] == ["RUNNING", "COMPLETE"]
    assert kinds(server, run_id, "kept-job").count("START") == 1
    assert runs.current_run(store, "gateway:" + JOB).run_id == run_id
    assert list((clean_env / "spool").glob("*.json")) == []


def test_a_hand_over_kept_in_the_spool_by_a_proxy_that_stopped_is_followed_by_the_next_one(
    clean_env, planner, server, jm
):
    """The proxy stops while its hand-over waits in the spool (the store refused it): the next
    proxy on that store records the spool and follows the job at its JobManager, so its states
    are not lost: START, RUNNING, COMPLETE once."""
    import sqlite3

    store = Store(clean_env / "state.db", busy_timeout=0.2)
    Settings(store).set("lineage.address", server.address)
    sent = statements("union_all")
    planner.record(job_script.build(sent, {"pipeline.name": "kept-job"}).sql, "union_all")
    jm.add(JOB, "kept-job", "RUNNING", STARTED)
    first = lineage(store, jm.url, [])
    store.write(lambda conn: None)
    holder = sqlite3.connect(store.path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        run_id = first.job_submitted(submitted(sent, jm.url, {"pipeline.name": "kept-job"}))
        assert run_id is not None and runs.current_run(store, "gateway:" + JOB) is None
    finally:
        first.stop()  # stopped before the store took the hand-over: only the spool has it
        holder.execute("ROLLBACK")
        holder.close()
    again = lineage(store, jm.url, [])
    again.start_following()
    try:
        wait_for(lambda: "RUNNING" in kinds(server, run_id, "kept-job"), timeout=60, what="START, RUNNING")
        jm.set_state(JOB, "FINISHED")
        wait_for(lambda: "COMPLETE" in kinds(server, run_id, "kept-job"), timeout=30, what="COMPLETE")
    finally:
        again.stop()
    assert kinds(server, run_id, "kept-job") == ["START", "RUNNING", "COMPLETE"]
    assert list((clean_env / "spool").glob("*.json")) == []
