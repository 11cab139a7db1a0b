"""The job and run id openlineage-flink's listener gives a Flink 2.x job, ported
(planlineage.emitter.run_ids.listener_run_id, planlineage.listener_conf.coexist).

The run id vectors are the inputs of openlineage-flink's own tests (JobID(1, 2) and the start
time 2026-01-01T00:00:00Z of OpenLineageDetachedJobStatusChangedListenerTest; the instant
2025-05-20T10:52:33.881Z of UUIDUtilsTest, whose ids start with ``0196ed52-e0d9-7``) and edge
inputs, each id computed by openlineage-flink 1.53.0 itself: a real ``OpenLineageContext`` of its
jar, ``setRunUuidFromFlinkJobId(jobId, startTime)``, then ``getRunUuid()`` (run once, by hand, on
2026-12-02, against flink-dist 2.2.1). tests/conformance/test_flink_producer.py checks the same
derivation against the real listener's events of a running job.
"""

from __future__ import annotations

import pytest

from planlineage.emitter.run_ids import listener_run_id
from planlineage.listener_conf import coexist

LISTENER = "io.openlineage.flink.listener.OpenLineageJobStatusChangedListenerFactory"

VECTORS = [
    # JobID (toHexString), start time (ms), run id by openlineage-flink 1.53.0
    ("00000000000000010000000000000002", 1767225600000, "019b76da-a800-7ac3-81c0-caf899ee4af7"),
    ("00000000000000010000000000000002", 1747738353881, "0196ed52-e0d9-7735-b47c-ed57a02044d6"),
    ("a1b2c3d4e5f60718293a4b5c6d7e8f90", 1747738353881, "0196ed52-e0d9-731b-9be9-8968b8e296f0"),
    ("00000000000000000000000000000000", 1, "00000000-0001-72bd-8fff-673c363c3f49"),
    ("ffffffffffffffffffffffffffffffff", 1796193000100, "01a23572-1aa4-7b45-846c-9a077521a0e6"),
]


@pytest.mark.parametrize(("job_id", "start", "expected"), VECTORS)
def test_the_run_id_is_the_listeners(job_id, start, expected):
    assert listener_run_id(job_id, start) == expected
    assert listener_run_id(job_id.upper(), start) == expected  # JobID hex from a platform's UI


def test_the_listeners_own_test_instant_gives_its_prefix():
    # UUIDUtilsTest: the time part of the id is the start time's milliseconds
    assert listener_run_id("a1b2c3d4e5f60718293a4b5c6d7e8f90", 1747738353881).startswith("0196ed52-e0d9-7")


@pytest.mark.parametrize(("job_id", "start"), [("not-a-job", 1), ("0" * 31, 1), ("0" * 32, 0)])
def test_a_wrong_job_id_or_start_time_is_said(job_id, start):
    with pytest.raises(ValueError, match="JobID|start time"):
        listener_run_id(job_id, start)


@pytest.mark.parametrize(
    "listeners",
    [LISTENER, f"com.example.Other;{LISTENER}", f"[com.example.Other, {LISTENER}]", f" {LISTENER} "],
)
def test_the_listener_is_found_in_the_job_configuration(listeners):
    conf = {"execution.job-status-changed-listeners": listeners}
    assert coexist.listener_configured(conf)
    assert coexist.mode(None, conf) == "coexist"
    assert coexist.mode("auto", conf) == "coexist"
    assert coexist.mode("own", conf) == "own"


def test_without_the_listener_planlineage_keeps_its_own_run():
    assert coexist.mode(None, {}) == "own"
    assert coexist.mode("auto", {"execution.job-status-changed-listeners": "com.example.Other"}) == "own"
    assert coexist.mode("coexist", {}) == "coexist"
    with pytest.raises(ValueError, match="lineage.flink-runs"):
        coexist.mode("both", {})


def test_the_listeners_job_identity():
    # OpenLineageJobStatusChangedListener.loadJobId: openlineage.job.* first, the Flink job's name,
    # the namespace flink-jobs by default; a blank value is skipped as FlinkConfigParser does
    assert coexist.shared_run({}, "orders-job") == coexist.SharedRun("flink-jobs", "orders-job", None)
    conf = {"pipeline.name": "streampark-app", "openlineage.job.namespace": "  "}
    assert coexist.shared_run(conf, "orders-job") == coexist.SharedRun("flink-jobs", "streampark-app", None)
    conf = {"pipeline.name": "streampark-app", "openlineage.job.namespace": "prod", "openlineage.job.name": "orders"}
    assert coexist.shared_run(conf, "orders-job") == coexist.SharedRun("prod", "orders", None)


def test_the_run_id_is_shared_only_where_the_listener_derives_it():
    job_id, start, expected = VECTORS[0]
    assert coexist.shared_run({}, "j", job_id, start).run_id is None  # the default listener's is random
    for key in coexist.DETACHED_KEYS:
        assert coexist.shared_run({key: "true"}, "j", job_id, start).run_id == expected
        assert coexist.shared_run({key: "TRUE"}, "j", job_id, start).run_id == expected
        assert coexist.shared_run({key: "false"}, "j", job_id, start).run_id is None
    assert coexist.shared_run({coexist.DETACHED_KEYS[0]: "true"}, "j").run_id is None  # job not known yet


SCRIPT = """SET 'pipeline.name' = 'orders-archive';
SET 'openlineage.job.namespace' = 'prod-flink';
SET 'execution.job-status-changed-listeners' = '{listeners}';
CREATE TABLE src (id INT) WITH ('connector' = 'datagen');
CREATE TABLE dst (id INT) WITH ('connector' = 'blackhole');
INSERT INTO dst SELECT id FROM src;
"""


def _submitted(store, monkeypatch, sql: str, job: tuple = (None, None), **settings_env) -> tuple[dict, object]:
    from planlineage.lifecycle import runner, runs
    from planlineage.settings import Settings

    queued = []
    monkeypatch.setattr(runner, "start", lambda _store, job: queued.append(job))  # no compile service here
    environ = {"PLANLINEAGE_LINEAGE_ADDRESS": "http://127.0.0.1:9"}
    environ.update({f"PLANLINEAGE_LINEAGE_{k.upper()}": v for k, v in settings_env.items()})
    settings = Settings(store, environ=environ)
    run_id = runner.submit_job(
        store,
        settings,
        app_id="app-1",
        job_name="streampark-7",
        sql=sql,
        flink_version="2.2",
        flink_job_id=job[0],
        start_time_millis=job[1],
    )
    assert run_id
    return queued[0], runs.current_run(store, "app-1")


def test_a_submitted_job_with_the_listener_is_recorded_under_the_listeners_job(store, monkeypatch):
    job, run = _submitted(store, monkeypatch, SCRIPT.format(listeners=LISTENER))
    assert (run.namespace, run.job_name) == ("prod-flink", "orders-archive")
    assert (job["job_namespace"], job["job_name"]) == ("prod-flink", "orders-archive")  # kept for a spooled replay


def test_own_and_a_job_without_the_listener_keep_planlineages_job(store, monkeypatch):
    _, run = _submitted(store, monkeypatch, SCRIPT.format(listeners=LISTENER), flink_runs="own")
    assert (run.namespace, run.job_name) == ("planlineage", "streampark-7")
    _, run = _submitted(store, monkeypatch, SCRIPT.format(listeners="com.example.Other"))
    assert (run.namespace, run.job_name) == ("planlineage", "streampark-7")


def test_the_listener_flink_conf_adds_makes_the_job_coexist(store, monkeypatch):
    # lineage.flink-listener on: `flink-conf` adds the listener with planlineage's namespace
    sql = "SET 'pipeline.name' = 'orders-archive';\nINSERT INTO dst SELECT 1;\n"
    _, run = _submitted(store, monkeypatch, sql, flink_listener="true", namespace="prod")
    assert (run.namespace, run.job_name) == ("prod", "orders-archive")
    _, run = _submitted(store, monkeypatch, sql, flink_listener="false", namespace="prod")
    assert (run.namespace, run.job_name) == ("prod", "streampark-7")


def test_a_submission_given_the_jobid_and_start_time_takes_the_detached_listeners_run_id(store, monkeypatch):
    job_id, start, expected = VECTORS[0]
    detached = SCRIPT.format(listeners=LISTENER) + "SET 'openlineage.flink.enableDetachedJobTracking' = 'true';\n"
    queued, run = _submitted(store, monkeypatch, detached, job=(job_id, start))
    assert run.run_id == queued["run_id"] == expected
    assert (run.namespace, run.job_name) == ("prod-flink", "orders-archive")
    from planlineage.lifecycle import runner
    from planlineage.settings import Settings

    settings = Settings(store, environ={"PLANLINEAGE_LINEAGE_ADDRESS": "http://127.0.0.1:9"})
    again = runner.submit_job(
        store, settings, app_id="app-1", job_name="j", sql=detached, flink_job_id=job_id, start_time_millis=start
    )
    assert again is None  # the same job told twice (a hook retried): one run, not a second START
    _, run = _submitted(store, monkeypatch, detached)  # before the JobManager took it: its own run id
    assert run.run_id != expected
    _, run = _submitted(store, monkeypatch, SCRIPT.format(listeners=LISTENER), job=(job_id, start))
    assert run.run_id != expected  # the default listener draws a random run id: only the job is shared


@pytest.mark.parametrize(
    "argv, said",
    [
        (["--flink-job-id", "not-a-job"], "a Flink JobID is 32 hex digits"),
        (["--flink-start-time", "yesterday"], "a start time is milliseconds since the epoch"),
    ],
)
def test_submit_refuses_a_malformed_jobid_or_start_time(argv, said, capsys):
    from planlineage.cli.main import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["submit", "--app-id", "a", "--job-name", "j", "--sql-file", "x.sql", *argv])
    assert said in capsys.readouterr().err
