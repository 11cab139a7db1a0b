"""The JobManager follower of ``planlineage gateway`` (planlineage.gateway.jobmanager) against a
loopback JobManager answering as Flink does: each state once on the job's run, with the
JobManager's times; restart-safe through the store; a JobManager down and back; a job the
JobManager forgot ended with ABORT after the grace period."""

from __future__ import annotations

import importlib.util
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from planlineage.errors import SourceError
from planlineage.gateway import jobmanager
from planlineage.lifecycle import runs
from planlineage.settings import Settings
from planlineage.store.sqlite import Store
from planlineage.watch import ledger


def load_fake():
    """tests/gateway/fake_jobmanager.py (tests/gateway is no import root: it would shadow ``gateway``)."""
    spec = importlib.util.spec_from_file_location(
        "gateway_fake_jobmanager", Path(__file__).with_name("fake_jobmanager.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FakeJobManager = load_fake().FakeJobManager
JOB = "0123456789abcdef0123456789abcdef"
STARTED = int(time.time() * 1000) + 3_600_000  # the JobManager's start-time (epoch ms), after the run's START


@pytest.fixture
def jm():
    with FakeJobManager() as server:
        yield server


@pytest.fixture
def store(clean_env):
    store = Store(clean_env / "state.db")
    Settings(store).set("lineage.address", "http://127.0.0.1:9")  # configured; nothing is delivered here
    return store


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def follower(store, jm, grace: float = 60.0, clock=None, lines=None) -> jobmanager.Follower:
    return jobmanager.Follower(
        jobmanager.JobManagerTarget(jm.url), store, Settings(store),
        jobmanager.Options(lost_grace=grace), say=(lines.append if lines is not None else lambda _: None),
        clock=clock or Clock(),
    )  # fmt: skip


def submitted(store, jm, job_id: str = JOB) -> str:
    """A run of the job as the lineage side records it, followed at ``jm`` (its watch_jobs row)."""
    key = jobmanager.job_key(job_id)

    def follow(conn, run_id: str) -> None:
        conn.execute(
            "INSERT INTO watch_jobs (source, job_key, state, job_id, run_job_id, lost_since, lost_sent) "
            "VALUES (?, ?, NULL, ?, ?, NULL, 0)",
            (jobmanager.source_key(jm.url), key, job_id, run_id),
        )

    run_id = runs.record_pending_submission(store, key, "my job", None, Settings(store), also=follow)
    assert run_id is not None
    return run_id


def told(store, job_id: str = JOB) -> list[tuple[str, str, str | None]]:
    """(event, time, error) of every transition the lifecycle queued for the job's run."""
    run = runs.current_run(store, jobmanager.job_key(job_id))
    return [(p["event"], p["time"], p["error"]) for p in run.pending]


def test_running_then_complete_each_once_at_the_jobmanagers_times(store, jm):
    submitted(store, jm)
    jm.add(JOB, "my job", "RUNNING", STARTED)
    follow = follower(store, jm)
    follow.poll()
    stamp = ledger.stamp(store, jobmanager.source_key(jm.url))
    follow.poll()  # nothing moved: nothing told again, nothing written
    assert ledger.stamp(store, jobmanager.source_key(jm.url)) == stamp is not None
    jm.set_state(JOB, "FINISHED", at=STARTED + 60_000)
    follow.poll()
    follow.poll()
    assert [(event, error) for event, _, error in told(store)] == [("RUNNING", None), ("COMPLETE", None)]
    running_at, finished_at = (t for _, t, _ in told(store))
    assert running_at == iso(STARTED + 5)  # the JobManager's RUNNING timestamp
    assert finished_at == iso(STARTED + 60_000)  # its end-time
    assert follow.followed() == {}  # ended: no longer followed


def test_no_event_is_dated_before_the_runs_start(store, jm):
    submitted(store, jm)
    jm.add(JOB, "my job", "RUNNING", 1_765_000_000_123)  # running before the proxy recorded its run
    follower(store, jm).poll()
    assert told(store)[0][1] == runs.current_run(store, jobmanager.job_key(JOB)).created


def iso(millis: int) -> str:
    return datetime.fromtimestamp(millis / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def test_a_job_that_ran_and_ended_between_two_polls_gets_running_first(store, jm):
    submitted(store, jm)
    jm.add(JOB, "my job", "RUNNING")
    jm.set_state(JOB, "FINISHED")
    follower(store, jm).poll()
    assert [event for event, _, _ in told(store)] == ["RUNNING", "COMPLETE"]


@pytest.mark.parametrize(
    ("state", "event", "flink2"), [("FAILED", "FAIL", False), ("FAILED", "FAIL", True), ("CANCELED", "ABORT", False)]
)
def test_a_failed_or_cancelled_job_ends_its_run_once(store, jm, state, event, flink2):
    jm.flink2_exceptions = flink2
    submitted(store, jm)
    jm.add(JOB, "my job", "RUNNING")
    follow = follower(store, jm)
    follow.poll()
    jm.set_state(JOB, "CANCELLING" if state == "CANCELED" else "FAILING")
    follow.poll()  # a passing state: remembered, nothing told
    jm.set_state(JOB, state)
    follow.poll()
    follow.poll()
    assert [e for e, _, _ in told(store)] == ["RUNNING", event]
    error = told(store)[-1][2]
    assert (error == "java.lang.RuntimeException: boom") if state == "FAILED" else error is None


def test_a_restarted_follower_continues_from_the_store_without_resending(store, jm):
    submitted(store, jm)
    jm.add(JOB, "my job", "RUNNING")
    follower(store, jm).poll()
    row = ledger.load(store, jobmanager.source_key(jm.url))[1][jobmanager.job_key(JOB)]
    assert jobmanager.FLINK_STATES[row.state] == "RUNNING"
    again = follower(store, jm)  # a new process on the same store
    again.poll()
    assert [e for e, _, _ in told(store)] == ["RUNNING"]
    jm.set_state(JOB, "FINISHED")
    again.poll()
    assert [e for e, _, _ in told(store)] == ["RUNNING", "COMPLETE"]


def test_a_jobmanager_that_is_down_is_an_outage_not_an_end(store, jm):
    submitted(store, jm)
    jm.add(JOB, "my job", "RUNNING")
    follow = follower(store, jm)
    jm.down()
    with pytest.raises(SourceError, match=f"JobManager at {jm.url} cannot be reached"):
        follow.poll()  # the watch loop says it once and backs off
    assert told(store) == []
    jm.up()
    jm.set_state(JOB, "FINISHED")
    follow.poll()
    assert [e for e, _, _ in told(store)] == ["RUNNING", "COMPLETE"]


def test_a_job_the_jobmanager_forgot_ends_with_abort_after_the_grace_period(store, jm):
    submitted(store, jm)
    jm.add(JOB, "my job", "RUNNING")
    clock = Clock()
    follow = follower(store, jm, grace=30.0, clock=clock)
    follow.poll()
    jm.forget(JOB)  # the cluster restarted without HA
    follow.poll()
    clock.now += 29
    follow.poll()
    assert [e for e, _, _ in told(store)] == ["RUNNING"]
    clock.now += 2
    follow.poll()
    follow.poll()
    assert [e for e, _, _ in told(store)] == ["RUNNING", "ABORT"]
    assert "no longer knows" not in (told(store)[-1][2] or "")  # ABORT carries no error facet
    assert follow.followed() == {}


def test_a_job_back_within_the_grace_period_keeps_its_run(store, jm):
    submitted(store, jm)
    jm.add(JOB, "my job", "RUNNING")
    clock = Clock()
    follow = follower(store, jm, grace=30.0, clock=clock)
    follow.poll()
    saved = dict(jm.jobs[JOB])
    jm.forget(JOB)
    follow.poll()
    clock.now += 20
    jm.jobs[JOB] = saved  # a JobManager failover recovered it
    follow.poll()
    clock.now += 60
    follow.poll()
    assert [e for e, _, _ in told(store)] == ["RUNNING"]


def test_a_replaced_run_is_not_told_and_nothing_is_asked_without_jobs(store, jm):
    follow = follower(store, jm)
    follow.poll()
    assert jm.calls == []  # nothing followed: the JobManager is not asked
    submitted(store, jm)
    runs.record_pending_submission(store, jobmanager.job_key(JOB), "other", None, Settings(store))  # replaced
    jm.add(JOB, "my job", "RUNNING")
    follow.poll()
    assert told(store) == []
    assert follow.followed() == {}


def test_a_run_dropped_without_lineage_is_no_longer_followed(store, jm):
    run_id = submitted(store, jm)
    jm.add(JOB, "my job", "RUNNING")
    assert runs.abandon_lineage(store, jobmanager.job_key(JOB), run_id)  # its compile failed
    follow = follower(store, jm)
    follow.poll()
    assert follow.followed() == {}
    assert [call for call in jm.calls if JOB in call] == []  # its state is never asked for


def test_the_jobmanagers_address_keeps_no_credentials():
    assert jobmanager.clean_url("HTTP://user:secret@JM.example:8081/") == "http://jm.example:8081"
    assert jobmanager.source_key("127.0.0.1:8081") == "gateway:http://127.0.0.1:8081"
    assert "secret" not in jobmanager.JobManager("http://user:secret@127.0.0.1:1").url


def test_the_watch_loop_follows_in_any_thread_and_names_the_jobmanagers_rest_api(store, jm):
    """planlineage gateway runs the loop on a thread of its own (no signal handler can be set
    there): an outage is one line, and its end names the JobManager's REST API, not a database."""
    import threading

    from planlineage.watch import loop

    submitted(store, jm)
    jm.add(JOB, "my job", "RUNNING")
    lines: list[str] = []
    follow = follower(store, jm, lines=lines)
    jm.down()
    stop = threading.Event()
    thread = threading.Thread(target=loop.watch, args=([follow], 0.05, stop), daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not any("cannot be reached" in line for line in lines) and time.monotonic() < deadline:
            time.sleep(0.02)
        jm.up()
        while not any("readable again" in line for line in lines) and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive()
    [outage] = [line for line in lines if "cannot be reached" in line]
    assert outage.startswith(f"the JobManager at {jm.url} cannot be reached") and outage.endswith(
        "; retrying with backoff"
    )
    assert "back to normal: the JobManager REST API is readable again" in lines
    assert not any("database" in line for line in lines)
    assert [e for e, _, _ in told(store)] == ["RUNNING"]


def test_a_jobmanager_address_with_credentials_is_asked_with_them_and_shown_without(jm):
    import base64
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    jm.add("a" * 32, "job")
    assert jobmanager.JobManager(jm.url.replace("://", "://flink:s3cr%40t@")).overview().keys() == {"a" * 32}
    seen: list[str | None] = []

    class Guarded(BaseHTTPRequestHandler):  # a JobManager behind Basic authentication
        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:
            seen.append(self.headers.get("Authorization"))
            self.send_response(401)
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Guarded)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.raises(SourceError) as refused:
            jobmanager.JobManager(f"http://flink:s3cr%40t@127.0.0.1:{server.server_address[1]}").overview()
    finally:
        server.shutdown()
        server.server_close()
    assert seen == ["Basic " + base64.b64encode(b"flink:s3cr@t").decode()]
    assert "401" in str(refused.value) and "s3cr" not in str(refused.value)


def test_a_restarted_proxy_follows_a_remembered_jobmanager_with_the_credentials_given(jm, tmp_path):
    from planlineage.gateway.submissions import Lineage

    store = Store(tmp_path / "state.db")
    Settings(store).set("lineage.address", "http://127.0.0.1:9/")
    given = jm.url.replace("://", "://flink:s3cret@")
    store.write(
        lambda c: (
            ledger._ensure(c),
            c.execute(
                "INSERT INTO watch_jobs (source, job_key, state, job_id, run_job_id, lost_since, lost_sent) "
                "VALUES (?, 'gateway:x', NULL, 'x', 'r', NULL, 0)",
                (jobmanager.source_key(jm.url),),  # stored without its credentials
            ),
        )
    )
    for _ in range(5):  # whatever order a set would have given
        side = Lineage(store, Settings(store), given, say=lambda line: None, interval=60)
        side.start_following()
        try:
            (follower,) = side._followers.values()
            assert follower.source._headers.get("Authorization", "").startswith("Basic ")
        finally:
            side.stop()
