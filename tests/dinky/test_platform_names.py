"""A StreamPark app and a Dinky task of the same name, watched by one process, are two OpenLineage
jobs (``streampark.<name>``, ``dinky.<name>``) in the one namespace; a run open when planlineage
is upgraded ends under the name it started with; a history replay names its runs as the live
watcher does and says, once per run, what it did with impossible times.  Real PostgreSQL and
MariaDB servers hold both platforms' schemas, written by their console stand-ins; the recorded
planner compiles (no JVM)."""

from __future__ import annotations

from datetime import datetime, timedelta

from console import FINISHED, RUNNING
from lineages import ONE_SINK, THREE_SINKS, datasets, exactly_once, jobs, timeline, types

T0 = datetime(2026, 3, 1, 8, 0, 0)
CHILDREN = tuple(f"dinky.orders.default_catalog.default_database.{sink}" for sink in ("out_a", "out_b", "out_s"))
OLD_NAMES = {"PLANLINEAGE_LINEAGE_PLATFORM_JOB_NAMES": "false"}  # the names releases before issue #38 gave


def hours(n: float) -> datetime:
    return T0 + timedelta(hours=n)


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def both(streampark, dinky):
    sp, d = streampark("dev"), dinky()
    sp.console.env("1.20.0")
    return sp, d


def test_an_app_and_a_task_of_one_name_are_two_jobs_with_their_own_runs_and_datasets(
    streampark, dinky, watch, gravitino
):
    sp, d = both(streampark, dinky)
    watch.recorded()
    app = sp.console.create_app("orders", ONE_SINK)
    task = d.console.create_task("orders", THREE_SINKS)
    watch.once(d.url, "--streampark-db", sp.url)  # baseline: nothing runs
    sp.console.start(app)
    sp.console.set_state(app, RUNNING)
    instance = d.console.submit(task)
    d.console.set_status(instance, "RUNNING")
    result = watch.once(d.url, "--streampark-db", sp.url)
    assert f"flink:{app} orders: logged run" in result.stderr, result.stderr
    assert f"dinky:{task} orders: submitted run" in result.stderr, result.stderr

    sp.console.set_state(app, FINISHED)
    d.console.set_status(instance, "CANCELED")
    watch.once(d.url, "--streampark-db", sp.url)
    assert "orders" not in jobs(gravitino)
    assert types(gravitino, "streampark.orders") == ["START", "RUNNING", "COMPLETE"]
    assert types(gravitino, "dinky.orders") == ["START", "RUNNING", "ABORT"]
    assert datasets(gravitino, "streampark.orders") == {(("orders", "refunds"), ("out-a",))}
    assert datasets(gravitino, "dinky.orders") == {((), ())}  # a statement set's parent: its children carry them
    assert datasets(gravitino, CHILDREN[1]) == {(("refunds",), ("dw.public.out_b",))}
    streampark_runs = {run for run, _ in timeline(gravitino, "streampark.orders")}
    dinky_runs = {run for run, _ in timeline(gravitino, "dinky.orders")}
    assert len(streampark_runs) == len(dinky_runs) == 1 and streampark_runs != dinky_runs
    assert {e["job"]["namespace"] for e in gravitino.events} == {"planlineage"}  # the metalake's place, kept
    exactly_once(gravitino)


def test_runs_open_at_the_upgrade_end_under_their_names_and_new_runs_get_the_new_ones(
    streampark, dinky, watch, gravitino
):
    sp, d = both(streampark, dinky)
    watch.recorded()
    app = sp.console.create_app("orders", ONE_SINK)
    task = d.console.create_task("orders", ONE_SINK)
    watch.once(d.url, "--streampark-db", sp.url, **OLD_NAMES)
    sp.console.start(app)
    sp.console.set_state(app, RUNNING)
    first = d.console.submit(task)
    d.console.set_status(first, "RUNNING")
    watch.once(d.url, "--streampark-db", sp.url, **OLD_NAMES)  # before the upgrade: both runs are "orders"
    assert jobs(gravitino) == {"orders": ["START", "RUNNING", "START", "RUNNING"]}

    sp.console.set_state(app, FINISHED)  # upgraded: the open runs end where they started
    d.console.set_status(first, "FINISHED")
    watch.once(d.url, "--streampark-db", sp.url)
    assert sorted(types(gravitino, "orders")) == sorted(["START", "RUNNING", "COMPLETE"] * 2)
    assert "streampark.orders" not in jobs(gravitino) and "dinky.orders" not in jobs(gravitino)
    for run in {run for run, _ in timeline(gravitino, "orders")}:
        assert [t for r, t in timeline(gravitino, "orders") if r == run] == ["START", "RUNNING", "COMPLETE"]

    sp.console.start(app)  # their next runs: the new names
    sp.console.set_state(app, RUNNING)
    d.console.set_status(d.console.submit(task), "RUNNING")
    watch.once(d.url, "--streampark-db", sp.url)
    assert types(gravitino, "streampark.orders") == ["START", "RUNNING"]
    assert types(gravitino, "dinky.orders") == ["START", "RUNNING"]
    assert len(types(gravitino, "orders")) == 6  # nothing more under the old name
    exactly_once(gravitino)


def test_a_history_replay_names_runs_as_the_live_watcher_and_the_watcher_continues_them(
    streampark, dinky, watch, gravitino
):
    sp, d = both(streampark, dinky)
    watch.recorded()
    app = sp.console.create_app("orders", ONE_SINK, at=hours(-1))
    sp.console.start(app, at=hours(0))
    sp.console.set_state(app, RUNNING)  # still running
    task = d.console.create_task("orders", ONE_SINK)
    done = d.console.submit(task, at=hours(0.5))
    d.console.set_status(done, "FINISHED", at=hours(1))
    alive = d.console.submit(task, at=hours(2))
    d.console.set_status(alive, "RUNNING")  # still running

    replayed = watch.once(d.url, "--streampark-db", sp.url, "--history")
    assert "history: 1 run(s) replayed" in replayed.stderr and "history: 2 run(s) replayed" in replayed.stderr
    assert types(gravitino, "streampark.orders") == ["START", "RUNNING"]
    assert types(gravitino, "dinky.orders") == ["START", "COMPLETE", "START", "RUNNING"]
    assert "orders" not in jobs(gravitino)
    sent = len(gravitino.events)

    live = watch.once(d.url, "--streampark-db", sp.url)  # adopts both still-running runs: the replayed ones
    assert live.stderr.count("adopted run continues its replayed run") == 2, live.stderr
    assert len(gravitino.events) == sent
    sp.console.set_state(app, FINISHED)
    d.console.set_status(alive, "FINISHED")
    watch.once(d.url, "--streampark-db", sp.url)
    assert types(gravitino, "streampark.orders") == ["START", "RUNNING", "COMPLETE"]
    assert len({run for run, _ in timeline(gravitino, "streampark.orders")}) == 1
    dinky_runs = [run for run, _ in timeline(gravitino, "dinky.orders")]
    assert types(gravitino, "dinky.orders")[4:] == ["COMPLETE"] and dinky_runs[2] == dinky_runs[3] == dinky_runs[4]
    exactly_once(gravitino)


def test_a_replay_sends_impossible_times_in_order_and_says_so_once_per_run(streampark, dinky, watch, gravitino):
    sp, d = both(streampark, dinky)
    watch.recorded()
    future = datetime.now().replace(microsecond=0) + timedelta(days=30)  # the console's clock is ahead
    app = sp.console.create_app("orders", ONE_SINK, at=hours(-1))
    sp.console.start(app, at=future)
    sp.console.set_state(app, FINISHED, at=future + timedelta(hours=1))
    task = d.console.create_task("orders", ONE_SINK)
    backwards = d.console.submit(task, at=hours(2))
    d.console.set_status(backwards, "FAILED", at=hours(1))  # a finish time before its creation: a bad row
    fine = d.console.submit(task, at=hours(3))
    d.console.set_status(fine, "FINISHED", at=hours(4))

    before = datetime.utcnow()
    result = watch.once(d.url, "--streampark-db", sp.url, "--history")
    after = datetime.utcnow() + timedelta(seconds=1)
    warnings = [line for line in result.stderr.splitlines() if "WARN history:" in line]
    assert len(warnings) == 2, result.stderr
    streampark_warning = next(w for w in warnings if f"flink:{app} orders" in w)
    assert f"recorded start {stamp(future)} is in the future" in streampark_warning
    dinky_warning = next(w for w in warnings if f"dinky:{task} orders" in w)
    assert f"recorded end {stamp(hours(1))} precedes its start {stamp(hours(2))}" in dinky_warning
    assert "had a time in the future or an end before its start" in result.stderr

    (start, start_time), (end, end_time) = [(e["eventType"], e["eventTime"]) for e in gravitino.events
                                            if e["job"]["name"] == "streampark.orders"]  # fmt: skip
    assert (start, end) == ("START", "COMPLETE") and start_time == end_time
    assert stamp(before.replace(microsecond=0))[:16] <= start_time[:16] <= stamp(after)[:16]  # now, not in 30 days
    dinky_events = [(e["eventType"], e["eventTime"]) for e in gravitino.events if e["job"]["name"] == "dinky.orders"]
    assert dinky_events == [
        ("START", stamp(hours(2))),
        ("FAIL", stamp(hours(2))),  # at its start: never before it
        ("START", stamp(hours(3))),
        ("COMPLETE", stamp(hours(4))),
    ]
    again = watch.once(d.url, "--streampark-db", sp.url, "--history")  # said once per run: nothing is resent
    assert "WARN history:" not in again.stderr
    exactly_once(gravitino)
