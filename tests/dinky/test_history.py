"""`planlineage watch --dinky-db … --history --once`: Dinky's past runs (its job instances)
replayed once with their original times through the history replay, on real PostgreSQL and
MariaDB servers written by the console stand-in; the recorded planner compiles (no JVM)."""

from __future__ import annotations

from datetime import datetime, timedelta

from lineages import ONE_SINK, THREE_SINKS, exactly_once, timeline

T0 = datetime(2026, 3, 1, 8, 0, 0)


def hours(n: float) -> datetime:
    return T0 + timedelta(hours=n)


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def times(server, job: str) -> list[tuple[str, str]]:
    return [(e["eventType"], e["eventTime"]) for e in server.events if e["job"]["name"] == job]


def test_history_is_replayed_once_and_the_live_watcher_neither_repeats_nor_reopens_it(dinky, watch, gravitino):
    d = dinky()
    c = d.console
    watch.recorded()
    orders = c.create_task("orders", ONE_SINK)
    first = c.submit(orders, at=hours(0))
    c.set_status(first, "RUNNING")
    c.set_status(first, "CANCELED", at=hours(1))
    second = c.submit(orders, at=hours(2))
    c.set_status(second, "FINISHED", at=hours(3))
    clicks = c.create_task("clicks", THREE_SINKS)
    c.set_status(c.submit(clicks, at=hours(0.5)), "RUNNING")  # still running
    cdc = c.create_task("whole_db", "EXECUTE CDCSOURCE demo WITH ('connector' = 'mysql-cdc');\n" + ONE_SINK)
    c.set_status(c.submit(cdc, at=hours(0.2)), "FINISHED", at=hours(0.3))
    old = c.submit(orders, at=hours(-48))  # before --since
    c.set_status(old, "FINISHED", at=hours(-47))

    result = watch.once(d.url, "--history", "--since", T0.date().isoformat())
    assert "history: 3 run(s) replayed" in result.stderr, result.stderr
    assert f"WARN dinky:{cdc} whole_db: not replayed: line 1: `EXECUTE CDCSOURCE demo" in result.stderr
    assert times(gravitino, "dinky.orders") == [
        ("START", stamp(hours(0))),
        ("ABORT", stamp(hours(1))),
        ("START", stamp(hours(2))),
        ("COMPLETE", stamp(hours(3))),
    ]
    runs = [run for run, _ in timeline(gravitino, "dinky.orders")]
    assert runs[0] == runs[1] != runs[2] == runs[3]
    assert times(gravitino, "dinky.clicks") == [("START", stamp(hours(0.5))), ("RUNNING", stamp(hours(0.5)))]
    sent = len(gravitino.events)

    again = watch.once(d.url, "--history", "--since", T0.date().isoformat())  # nothing doubled
    assert len(gravitino.events) == sent, again.stderr
    assert "history: 0 run(s) replayed" in again.stderr and "3 reported before" in again.stderr

    live = watch.once(d.url)  # first poll: adopts clicks, which is the replayed run
    assert f"dinky:{clicks} clicks: adopted run continues its replayed run" in live.stderr, live.stderr
    assert len(gravitino.events) == sent
    third = c.submit(orders)  # a live run, then a replay: never sent twice either
    c.set_status(third, "RUNNING")
    watch.once(d.url)
    watch.once(d.url, "--history", "--since", T0.date().isoformat())
    assert [t for _, t in timeline(gravitino, "dinky.orders")][4:] == ["START", "RUNNING"]
    clicks_instance = c.execute("SELECT MAX(id) FROM dinky_job_instance WHERE task_id = %s", (clicks,))[0][0]
    c.set_status(clicks_instance, "FINISHED")
    watch.once(d.url)
    clicks_runs = timeline(gravitino, "dinky.clicks")
    assert [t for _, t in clicks_runs] == ["START", "RUNNING", "COMPLETE"]
    assert len({run for run, _ in clicks_runs}) == 1
    exactly_once(gravitino)
