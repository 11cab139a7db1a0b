"""`planlineage watch --history --once`: StreamPark's past runs replayed once, with their
original times, on real PostgreSQL and MariaDB servers written by the console stand-in; the
recorded planner compiles (no JVM).  Each scenario runs on both databases."""

from __future__ import annotations

from datetime import datetime, timedelta

from console import FINISHED, RUNNING
from lineages import ONE_SINK, THREE_SINKS, datasets, exactly_once, timeline
from recorded_planner import case_sql

T0 = datetime(2026, 3, 1, 8, 0, 0)
OTHER_SINK = case_sql("regular_join")  # out_b <- orders, refunds (ONE_SINK writes out_a)


def hours(n: float) -> datetime:
    return T0 + timedelta(hours=n)


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def times(server, job: str) -> list[tuple[str, str]]:
    """``(eventType, eventTime)`` of one job, in arrival order."""
    return [(e["eventType"], e["eventTime"]) for e in server.events if e["job"]["name"] == job]


def test_history_is_replayed_once_with_original_times_and_the_live_watcher_continues_it(streampark, watch, gravitino):
    sp = streampark("dev")
    c = sp.console
    c.env("1.20.0")
    watch.recorded()
    orders = c.create_app("orders", ONE_SINK, at=hours(-1))
    c.start(orders, at=hours(0))
    c.cancel(orders, at=hours(1))
    c.start(orders, at=hours(2))
    c.set_state(orders, FINISHED, at=hours(3))
    clicks = c.create_app("clicks", THREE_SINKS, at=hours(-1))
    c.start(clicks, at=hours(0.5))
    c.set_state(clicks, RUNNING)  # still running: START and RUNNING, then the live watcher's

    first = watch.once(sp.url, "--history")
    assert "history: 3 run(s) replayed" in first.stderr, first.stderr
    assert times(gravitino, "streampark.orders") == [
        ("START", stamp(hours(0))),
        ("ABORT", stamp(hours(1))),
        ("START", stamp(hours(2))),
        ("COMPLETE", stamp(hours(3))),
    ]
    runs = [run for run, _ in timeline(gravitino, "streampark.orders")]
    assert runs[0] == runs[1] != runs[2] == runs[3]
    clicks_events = [e for e in gravitino.events if e["job"]["name"].startswith("streampark.clicks")]
    assert {(e["eventType"], e["eventTime"]) for e in clicks_events} == {
        ("START", stamp(hours(0.5))),
        ("RUNNING", stamp(hours(0.5))),
    }
    sent = len(gravitino.events)

    again = watch.once(sp.url, "--history")
    assert len(gravitino.events) == sent, again.stderr
    assert "history: 0 run(s) replayed" in again.stderr and "3 reported before" in again.stderr

    live = watch.once(sp.url)  # first poll: adopts clicks, which is the replayed run
    assert "continues its replayed run" in live.stderr, live.stderr
    assert len(gravitino.events) == sent
    c.set_state(clicks, FINISHED)
    watch.once(sp.url)
    ends = [e for e in gravitino.events[sent:] if e["job"]["name"].startswith("streampark.clicks")]
    assert ends and {e["eventType"] for e in ends} == {"COMPLETE"}
    replayed_run = {e["run"]["runId"] for e in clicks_events if e["job"]["name"] == "streampark.clicks"}
    assert {e["run"]["runId"] for e in ends if e["job"]["name"] == "streampark.clicks"} == replayed_run
    exactly_once(gravitino)


def test_history_since_and_the_sql_version_effective_at_each_start(streampark, watch, gravitino):
    sp = streampark("dev")
    c = sp.console
    c.env("1.20.0")
    watch.recorded().record(OTHER_SINK, "regular_join")
    app = c.create_app("orders", ONE_SINK, at=hours(-1))
    c.start(app, at=hours(0))
    c.cancel(app, at=hours(1))
    c.edit_sql(app, OTHER_SINK, at=hours(24))  # a new version, started the next day
    c.start(app, at=hours(25))
    c.set_state(app, FINISHED, at=hours(26))
    old = c.create_app("old_job", ONE_SINK, at=hours(-1))
    c.start(old, at=hours(0))
    c.cancel(old, at=hours(2))

    since = (T0 + timedelta(days=1)).strftime("%Y-%m-%d")
    watch.once(sp.url, "--history", "--since", since)
    assert times(gravitino, "streampark.orders") == [("START", stamp(hours(25))), ("COMPLETE", stamp(hours(26)))]
    assert times(gravitino, "streampark.old_job") == []  # started before --since
    assert {outputs for _, outputs in datasets(gravitino, "streampark.orders")} == {("dw.public.out_b",)}

    sent = len(gravitino.events)
    watch.once(sp.url, "--history")  # the earlier runs now, with the version effective then
    new = gravitino.events[sent:]
    assert sorted((e["job"]["name"], e["eventType"], e["eventTime"]) for e in new) == [
        ("streampark.old_job", "ABORT", stamp(hours(2))),
        ("streampark.old_job", "START", stamp(hours(0))),
        ("streampark.orders", "ABORT", stamp(hours(1))),
        ("streampark.orders", "START", stamp(hours(0))),
    ]
    first_run = {tuple(d["name"] for d in e["outputs"]) for e in new if e["job"]["name"] == "streampark.orders"}
    assert first_run == {("out-a",)}  # version 1's sink (a Kafka topic), not version 2's
    exactly_once(gravitino)


def test_a_run_the_live_watcher_started_is_not_replayed(streampark, watch, gravitino):
    sp = streampark("dev")
    c = sp.console
    c.env("1.20.0")
    watch.recorded()
    app = c.create_app("orders", ONE_SINK)
    watch.once(sp.url)  # baseline
    c.start(app)
    c.set_state(app, RUNNING)
    watch.once(sp.url)
    sent = len(gravitino.events)
    assert sent == 2

    replay = watch.once(sp.url, "--history")
    assert len(gravitino.events) == sent, replay.stderr
    assert "1 reported before" in replay.stderr


def test_history_is_bounded_by_a_cap_per_invocation_and_a_rate(streampark, watch, gravitino, monkeypatch):
    from planlineage.history import replay

    sp = streampark("dev")
    c = sp.console
    c.env("1.20.0")
    watch.recorded()
    app = c.create_app("orders", ONE_SINK, at=hours(-1))
    for n in range(4):
        c.start(app, at=hours(2 * n))
        c.cancel(app, at=hours(2 * n + 1))
    waits: list[float] = []
    monkeypatch.setattr(replay, "_pause", waits.append)  # the rate limit's pauses, not slept

    capped = watch.once(sp.url, "--history", PLANLINEAGE_LINEAGE_HISTORY_MAX_RUNS="1")
    assert "3 older run(s) over lineage.history-max-runs" in capped.stderr, capped.stderr
    assert times(gravitino, "streampark.orders") == [("START", stamp(hours(0))), ("ABORT", stamp(hours(1)))]
    assert waits == []  # the first run of an invocation goes at once

    rest = watch.once(sp.url, "--history", PLANLINEAGE_LINEAGE_HISTORY_RATE="0.5")  # one run per 2 s
    assert "history: 3 run(s) replayed" in rest.stderr, rest.stderr
    assert [when for t, when in times(gravitino, "streampark.orders") if t == "START"] == [
        stamp(hours(h)) for h in (0, 2, 4, 6)
    ]
    # paced: the 2nd run 2 s after the 1st began, the 3rd 2 s later (less the time each took)
    assert len(waits) == 2 and 0.5 < waits[0] <= 2 and 1.5 < waits[1] - waits[0] <= 2, waits
    exactly_once(gravitino)


def test_history_of_a_2_1_install_reads_t_flink_log_option_time(streampark, watch, gravitino):
    sp = streampark("2.1.x")
    c = sp.console
    c.env("1.20.0")
    watch.recorded()
    app = c.create_app("orders", ONE_SINK, at=hours(-1))
    c.start(app, at=hours(0))
    c.cancel(app, at=hours(1))
    watch.once(sp.url, "--history", "--streampark-timezone", "Asia/Shanghai")  # UTC+8 wall times
    assert times(gravitino, "streampark.orders") == [("START", stamp(hours(-8))), ("ABORT", stamp(hours(-7)))]
    watch.once(sp.url, "--history")
    assert len(gravitino.events) == 2
