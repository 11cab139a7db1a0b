"""A watched app whose job also runs openlineage-flink's listener: its runs are recorded under the
listener's job and, where the listener derives its run id from the job (the detached listener),
under that run id (``emitter.run_ids.listener_run_id`` of ``t_flink_app.job_id`` and Flink's
start time; conformance case 31 checks that derivation against the real listener).  On PostgreSQL
(``timestamp(6)``) the id is derived; MySQL's ``datetime`` keeps whole seconds, so there the run
keeps planlineage's own id and the watcher says why, once.  Each scenario runs on both databases."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from console import FAILED, RUNNING
from lineages import ONE_SINK, jobs, timeline

from planlineage.emitter.run_ids import listener_run_id
from planlineage.listener_conf import FLINK_LISTENER_FACTORY, FLINK_LISTENER_OPTION
from planlineage.streampark import shared_runs

JOB_ID = "8f0c6f0e2b7a4c1d9e3f5a6b7c8d9e0f"
#: What the console's form passes the job: the listener, detached (derived run ids), its namespace.
DETACHED = (
    f"-D{FLINK_LISTENER_OPTION}={FLINK_LISTENER_FACTORY} -Dopenlineage.flink.enableDetachedJobTracking=true "
    "-Dopenlineage.job.namespace=flink-prod"
)
FLINK_STARTED = datetime(2026, 11, 30, 8, 15, 42, 123000)  # /jobs/overview's start-time (UTC)
FLINK_MILLIS = 1_796_026_542_123


def _of(gravitino, job: str) -> list[dict]:
    return [e for e in gravitino.events if e["job"]["name"] == job]


def parent_runs(gravitino, job: str) -> list[tuple[str, str, str]]:
    """``(job namespace, runId, eventType)`` of one job's events, in arrival order."""
    return [(e["job"]["namespace"], e["run"]["runId"], e["eventType"]) for e in _of(gravitino, job)]


def _listened_app(streampark, watch):
    """A StreamPark database, its console, and an app whose job runs the detached listener."""
    sp = streampark("dev")
    c = sp.console
    watch.recorded()
    app = c.create_app("orders_union", ONE_SINK)
    c.update("t_flink_app", app, {"dynamic_properties": DETACHED})
    return sp, c, app


def test_an_adopted_app_reports_the_listeners_job_and_run(streampark, watch, gravitino):
    sp, c, app = _listened_app(streampark, watch)
    c.start(app, JOB_ID, at=FLINK_STARTED)
    c.set_state(app, RUNNING)

    result = watch.once(sp.url)
    assert jobs(gravitino)["orders_union"] == ["START", "RUNNING"]
    namespaces = {namespace for namespace, _, _ in parent_runs(gravitino, "orders_union")}
    assert namespaces == {"flink-prod"}  # the listener's job, not lineage.namespace
    run_ids = {run for _, run, _ in parent_runs(gravitino, "orders_union")}
    derived = listener_run_id(JOB_ID, FLINK_MILLIS)
    if sp.url.startswith("postgresql"):
        assert run_ids == {derived}, result.stderr
        assert "cannot be derived" not in result.stderr
    else:
        assert len(run_ids) == 1 and derived not in run_ids
        assert (
            "the listener's run id cannot be derived (StreamPark on MySQL keeps t_flink_app.start_time" in result.stderr
        )


def test_a_submission_waits_for_flinks_start_time_before_its_start(streampark, watch, gravitino):
    """The submit writes the console's clock as start_time while the app is STARTING; the tracker
    writes Flink's with the state a few seconds later: the run starts then, with the id the
    listener derives from Flink's time."""
    sp, c, app = _listened_app(streampark, watch)
    watch.once(sp.url)  # baseline
    c.start(app, JOB_ID, at=datetime(2026, 11, 30, 8, 15, 40, 7000))  # processForSuccess: the console's now
    held = watch.once(sp.url, "--verbose")
    assert gravitino.events == []
    assert "logged run waits for the job's start time" in held.stderr
    watch.once(sp.url)  # still STARTING: still held, never started twice
    assert gravitino.events == []

    c.update("t_flink_app", app, {"start_time": FLINK_STARTED})  # persistMetrics: Flink's time and the state
    c.set_state(app, RUNNING)
    released = watch.once(sp.url)
    assert [kind for _, _, kind in parent_runs(gravitino, "orders_union")] == ["START", "RUNNING"]
    run_ids = {run for _, run, _ in parent_runs(gravitino, "orders_union")}
    if sp.url.startswith("postgresql"):
        assert run_ids == {listener_run_id(JOB_ID, FLINK_MILLIS)}, released.stderr
    else:
        assert "cannot be derived" in released.stderr and len(run_ids) == 1
    watch.once(sp.url)  # nothing moved: nothing more
    assert len(_of(gravitino, "orders_union")) == 2


def test_own_mode_and_a_job_without_the_listener_keep_planlineages_job(streampark, watch, gravitino):
    sp = streampark("dev")
    c = sp.console
    watch.recorded()
    plain = c.create_app("orders_union", ONE_SINK)
    c.start(plain, JOB_ID, at=FLINK_STARTED)
    c.set_state(plain, RUNNING)
    watch.once(sp.url)
    assert {e["job"]["namespace"] for e in _of(gravitino, "streampark.orders_union")} == {"planlineage"}
    assert listener_run_id(JOB_ID, FLINK_MILLIS) not in {
        run for run, _ in timeline(gravitino, "streampark.orders_union")
    }
    assert "orders_union" not in jobs(gravitino)  # the listener's job is its alone: no prefix, no second node


def test_a_held_start_of_a_job_that_fails_is_started_with_its_failure(streampark, watch, gravitino):
    sp, c, app = _listened_app(streampark, watch)
    watch.once(sp.url)  # baseline
    c.start(app, JOB_ID, at=datetime(2026, 11, 30, 8, 15, 40))
    watch.once(sp.url)  # held
    c.update("t_flink_app", app, {"start_time": FLINK_STARTED})
    c.set_state(app, FAILED)
    watch.once(sp.url)
    assert [kind for _, _, kind in parent_runs(gravitino, "orders_union")] == ["START", "FAIL"]


def test_the_configuration_streampark_gives_the_job():
    row = {
        "options": '{"pipeline.name": "orders", "parallelism.default": 2, "x": null}',
        "dynamic_properties": "-Dopenlineage.job.name='orders daily'\n-Dstate.backend=rocksdb  -Dbroken",
    }
    assert shared_runs.platform_conf(row) == {
        "pipeline.name": "orders",
        "parallelism.default": "2",
        "openlineage.job.name": "orders daily",
        "state.backend": "rocksdb",
    }
    assert shared_runs.platform_conf({"options": "not json", "dynamic_properties": "-Da='unbalanced"}) == {
        "a": "'unbalanced"
    }
    assert shared_runs.platform_conf(None) == {}


def test_a_start_time_is_read_in_the_consoles_zone_and_needs_milliseconds_on_mysql():
    shanghai = ZoneInfo("Asia/Shanghai")
    assert shared_runs.start_millis(datetime(2026, 11, 30, 16, 15, 42, 123000), shanghai, "postgresql") == FLINK_MILLIS
    assert shared_runs.start_millis(FLINK_STARTED, UTC, "mysql") == FLINK_MILLIS  # datetime(3): has them
    assert shared_runs.start_millis(datetime(2026, 11, 30, 8, 15, 42), UTC, "mysql") is None  # whole seconds
    assert shared_runs.start_millis(datetime(2026, 11, 30, 8, 15, 42), UTC, "postgresql") == FLINK_MILLIS - 123
    assert shared_runs.start_millis(None, UTC, "postgresql") is None


def test_the_held_mark_round_trips():
    assert shared_runs.held(shared_runs.held_mark("logged", 42)) == ("logged", 42)
    assert shared_runs.held(shared_runs.held_mark("job", None)) == ("job", None)
    assert shared_runs.held("logged:42") is None and shared_runs.held(None) is None


def test_a_replayed_run_of_an_app_given_the_listener_is_on_the_listeners_job_as_live(streampark, watch, gravitino):
    """The listener is in the app's dynamic properties, not its script: the history replay names
    the run as the live watcher does (the listener's job, never ``streampark.orders_union``)."""
    sp, c, app = _listened_app(streampark, watch)
    c.start(app, JOB_ID, at=datetime(2026, 3, 1, 8, 0, 0))
    c.set_state(app, FAILED, at=datetime(2026, 3, 1, 9, 0, 0))

    result = watch.once(sp.url, "--history")
    assert "history: 1 run(s) replayed" in result.stderr, result.stderr
    assert [kind for namespace, _, kind in parent_runs(gravitino, "orders_union")] == ["START", "FAIL"]
    assert {namespace for namespace, _, _ in parent_runs(gravitino, "orders_union")} == {"flink-prod"}
    assert "streampark.orders_union" not in jobs(gravitino)
