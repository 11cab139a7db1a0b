"""What a replayed run is sent as, without a database: the job it is named (kept apart by
platform, as the live watchers name it), the times its events carry when the platform recorded
impossible ones, and run ids that never change across releases."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from planlineage.history import job_names
from planlineage.history.ledger import run_id_for
from planlineage.history.records import PastRun
from planlineage.history.replay import Report, event_times, job_of
from planlineage.settings import Settings

NOW = datetime(2026, 6, 1, 12, 0, 0, tzinfo=UTC)
SCRIPT = "CREATE TABLE o (id INT) WITH ('connector' = 'blackhole');\nINSERT INTO o SELECT 1;\n"


def past(start: datetime, end: datetime | None, platform: str = "dinky", event: str | None = "COMPLETE") -> PastRun:
    return PastRun(
        platform=platform, run_key="dinky:instance=77", app_id="dinky:1", job_name="orders", sql=SCRIPT,
        flink_version="1.20", started_at=start, ended_at=end, end_event=event if end else None,
    )  # fmt: skip


@pytest.fixture
def settings(tmp_path, monkeypatch):
    for name in list(__import__("os").environ):
        if name.startswith(("PLANLINEAGE_", "OPENLINEAGE_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("PLANLINEAGE_HOME", str(tmp_path))
    return Settings()


def test_a_run_with_possible_times_is_sent_as_recorded():
    run = past(NOW - timedelta(hours=2), NOW - timedelta(hours=1))
    assert event_times(run, NOW) == (run.started_at, run.ended_at, None)
    still = past(NOW - timedelta(hours=2), None)
    assert event_times(still, NOW) == (still.started_at, None, None)


def test_an_end_before_its_start_is_sent_at_the_start_and_said():
    run = past(NOW - timedelta(hours=1), NOW - timedelta(hours=3))
    start, end, warning = event_times(run, NOW)
    assert (start, end) == (run.started_at, run.started_at)  # START, then its end: never the other way
    assert "recorded end 2026-06-01T09:00:00.000Z precedes its start 2026-06-01T11:00:00.000Z" in warning
    assert "sent START at 2026-06-01T11:00:00.000Z, COMPLETE at 2026-06-01T11:00:00.000Z" in warning


def test_times_in_the_future_are_sent_at_the_replays_time_and_said():
    run = past(NOW + timedelta(days=3), NOW + timedelta(days=4))
    start, end, warning = event_times(run, NOW)
    assert (start, end) == (NOW, NOW)
    assert "recorded start 2026-06-04T12:00:00.000Z is in the future" in warning
    assert "recorded end 2026-06-05T12:00:00.000Z is in the future" in warning
    assert "(the platform's clock or time zone, or a bad row)" in warning
    running = past(NOW + timedelta(minutes=5), None)
    start, end, warning = event_times(running, NOW)
    assert (start, end) == (NOW, None) and warning.endswith("sent START at 2026-06-01T12:00:00.000Z")
    ended_late = past(NOW - timedelta(hours=1), NOW + timedelta(hours=1), event="FAIL")
    start, end, warning = event_times(ended_late, NOW)
    assert (start, end) == (ended_late.started_at, NOW) and "FAIL at 2026-06-01T12:00:00.000Z" in warning
    assert "recorded start" not in warning


def test_the_summary_counts_the_runs_whose_times_were_clamped():
    assert not any("in the future" in line for line in Report(replayed=2).lines())
    lines = Report(replayed=2, clamped=1).lines()
    assert any(
        line.startswith("history: 1 run(s) had a time in the future or an end before its start") for line in lines
    )


def test_run_ids_are_those_every_earlier_release_derived():
    """Pinned: a replay after an upgrade must recognise the runs sent before it."""
    start = datetime(2026, 3, 1, 8, 0, 0, 123000, tzinfo=UTC)
    assert run_id_for("streampark:app=100001:log=7", start) == "019ca869-507b-7d16-aa98-dffdb0d56b15"
    assert run_id_for("dinky:instance=77", start.replace(microsecond=0)) == "019ca869-5000-7a5e-8424-a22b3efd0236"


def test_platform_jobs_are_kept_apart_by_name_in_the_one_namespace(settings):
    assert job_names.platform_job_name("streampark", "orders", settings) == "streampark.orders"
    assert job_names.platform_job_name("dinky", "orders", settings) == "dinky.orders"
    assert job_of(past(NOW, None, "streampark"), settings, "metalake_prod") == ("metalake_prod", "streampark.orders")
    assert job_of(past(NOW, None, "dinky"), settings, "metalake_prod") == ("metalake_prod", "dinky.orders")
    with pytest.raises(ValueError, match="unknown platform 'airflow'"):
        job_names.platform_job_name("airflow", "orders", settings)


def test_the_opt_out_keeps_the_bare_platform_names(settings, monkeypatch):
    monkeypatch.setenv("PLANLINEAGE_LINEAGE_PLATFORM_JOB_NAMES", "false")
    assert job_names.platform_job_name("dinky", "orders", settings) == "orders"
    assert job_of(past(NOW, None, "streampark"), settings, "planlineage") == ("planlineage", "orders")


def test_a_replayed_job_that_runs_the_flink_listener_keeps_the_listeners_job(settings):
    from planlineage.listener_conf import FLINK_LISTENER_FACTORY, FLINK_LISTENER_OPTION

    script = (
        f"SET '{FLINK_LISTENER_OPTION}' = '{FLINK_LISTENER_FACTORY}';\n"
        "SET 'openlineage.job.namespace' = 'flink-prod';\nSET 'pipeline.name' = 'orders-union';\n" + SCRIPT
    )
    run = PastRun(
        platform="dinky", run_key="dinky:instance=9", app_id="dinky:1", job_name="orders", sql=script,
        flink_version="2.2", started_at=NOW, ended_at=None, end_event=None,
    )  # fmt: skip
    assert job_of(run, settings, "planlineage") == ("flink-prod", "orders-union")


def test_a_replayed_job_whose_platform_options_name_the_listener_keeps_the_listeners_job(settings, monkeypatch):
    """StreamPark gives the listener through the app's options or dynamic properties, not the script."""
    from planlineage.listener_conf import FLINK_LISTENER_FACTORY, FLINK_LISTENER_OPTION

    given = ((FLINK_LISTENER_OPTION, FLINK_LISTENER_FACTORY), ("openlineage.job.namespace", "flink-prod"))
    run = PastRun(
        platform="streampark", run_key="streampark:app=1:log=2", app_id="flink:1", job_name="orders", sql=SCRIPT,
        flink_version="2.2", started_at=NOW, ended_at=None, end_event=None, job_conf=given,
    )  # fmt: skip
    assert job_of(run, settings, "planlineage") == ("flink-prod", "orders")
    plain = PastRun(**{**run.__dict__, "job_conf": (("parallelism.default", "2"),)})
    assert job_of(plain, settings, "planlineage") == ("planlineage", "streampark.orders")
    monkeypatch.setenv("PLANLINEAGE_LINEAGE_FLINK_RUNS", "own")  # planlineage's own job, as live
    assert job_of(run, settings, "planlineage") == ("planlineage", "streampark.orders")
