"""`planlineage watch` and StreamPark's Spark apps, on real PostgreSQL and MariaDB servers, the
tests acting as the console row by row, compiled by Spark's own parser of the version under test:
lifecycle transitions (adoption, FAILED, a stop, a YARN kill, a restart), the apps never reported
(listener-covered, JAR, unsupported version) and a long-running watcher.

Runs only where a Spark version is chosen (tox envs spark35 and spark40 set
PLANLINEAGE_TEST_SPARK), so that the unit env needs no Spark; the pure rules are in test_units.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from console import SPARK_ACCEPTED, SPARK_FAILED, SPARK_FINISHED, SPARK_JAR, SPARK_KILLED, SPARK_RUNNING
from lineages import NIGHTLY, exactly_once, jobs, named_datasets, timeline, types
from test_watch import wait_for

VERSION = os.environ.get("PLANLINEAGE_TEST_SPARK")
if not VERSION:
    pytest.skip("set PLANLINEAGE_TEST_SPARK=3.5 or 4.0 (tox envs spark35, spark40)", allow_module_level=True)

CLUSTER_VERSION = {"3.5": "3.5.1", "4.0": "4.0.0"}[VERSION]  # t_spark_env.version of that line
OTHER_LINE = {"3.5": "4.0.0", "4.0": "3.5.1"}[VERSION]
LISTENER = "io.openlineage.spark.agent.OpenLineageSparkListener"
DEFAULTS = "spark.master yarn\nspark.sql.warehouse.dir s3a://lake/warehouse\nspark.hadoop.fs.s3a.secret.key FAKE-s3-key"


def children(job: str) -> tuple[str, str]:
    """The per-target jobs of spark_two_targets(): one pairing per target."""
    return f"{job}.spark_catalog.reporting.daily", f"{job}.crm_out"


TARGETS = children("streampark.nightly")
DAILY = (("postgres://pg.prod:5432 shop.public.orders", "s3://lake raw/clicks"), ("s3://lake reporting/daily",))
CRM = (("hdfs://nn:8020 /in/accounts.csv",), ("mysql://mysql.prod:3306 crm.accounts",))


def started(c, app: int, state: int = SPARK_RUNNING) -> None:
    c.spark_start(app)
    c.spark_state(app, SPARK_ACCEPTED)
    c.spark_state(app, state)


@pytest.fixture(scope="module", autouse=True)
def provisioned():
    """The version's venv, provisioned here (with progress) rather than under a compile."""
    from planlineage.spark.provision import ensure

    return ensure(VERSION)


def test_a_spark_sql_app_runs_start_running_complete_per_target(streampark, watch, gravitino):
    sp = streampark("dev", spark=True)
    c = sp.console
    env = c.spark_env(CLUSTER_VERSION, DEFAULTS)
    app = c.create_spark_app("nightly", NIGHTLY, env=env, properties="--conf spark.executor.cores=2")
    c.spark_release(app)
    watch.once(sp.url, "--timeout", "240")  # baseline
    c.spark_start(app)
    result = watch.once(sp.url, "--timeout", "240")
    assert f"spark:{app} nightly: logged run, Spark {CLUSTER_VERSION}: compiling" in result.stderr
    c.spark_state(app, SPARK_ACCEPTED)  # ignored, as any state the lifecycle has no event for
    c.spark_state(app, SPARK_RUNNING)
    watch.once(sp.url, "--timeout", "240")
    c.spark_state(app, SPARK_FINISHED)
    watch.once(sp.url, "--timeout", "240")

    for job in ("streampark.nightly", *TARGETS):
        assert types(gravitino, job) == ["START", "RUNNING", "COMPLETE"], (job, watch.outputs)
        assert len({run for run, _ in timeline(gravitino, job)}) == 1
    assert named_datasets(gravitino, TARGETS[0]) == {DAILY}
    assert named_datasets(gravitino, TARGETS[1]) == {CRM}
    engine = gravitino.events[0]["run"]["facets"]["processing_engine"]
    assert engine["name"] == "spark" and engine["version"].startswith(VERSION)  # the env's line
    assert "FAKE-s3-key" not in watch.everything_written()
    # Spark's `OPTIONS (password '…')` is masked in the job's SQL facet like Flink's WITH options.
    facet = gravitino.events[0]["job"]["facets"]["sql"]["query"]
    assert "dbtable 'crm.accounts'" in facet and "FAKE-pg-pw" not in facet
    assert all(b"FAKE-pg-pw" not in r.body for r in gravitino.requests)
    exactly_once(gravitino)


def test_listener_covered_jar_and_unsupported_apps_are_never_reported(streampark, watch, gravitino):
    sp = streampark("dev", spark=True)
    c = sp.console
    env = c.spark_env(CLUSTER_VERSION)
    listened_env = c.spark_env(OTHER_LINE, f"spark.extraListeners {LISTENER}", default=False)
    old_env = c.spark_env("3.3.2", default=False)
    apps = {
        "by_properties": c.create_spark_app(
            "by_properties", env=env, properties=f"--conf spark.extraListeners={LISTENER}"
        ),
        "by_transport": c.create_spark_app(
            "by_transport", env=env, properties="--conf spark.openlineage.transport.type=http"
        ),
        "by_defaults": c.create_spark_app("by_defaults", env=listened_env),
        "a_jar": c.create_spark_app("a_jar", env=env, job_type=SPARK_JAR),
        "old_spark": c.create_spark_app("old_spark", env=old_env),
        "reported": c.create_spark_app("reported", NIGHTLY),  # no version_id: the default env
    }
    for app in apps.values():
        c.spark_release(app)
    first = watch.once(sp.url, "--timeout", "240", "--verbose")
    for name, reason in (
        ("by_properties", "its properties register the OpenLineage Spark listener (spark.extraListeners)"),
        ("by_transport", "its properties configure the OpenLineage Spark listener (spark.openlineage.transport.type)"),
        ("by_defaults", "the Spark env's defaults register the OpenLineage Spark listener"),
        ("a_jar", "a Spark JAR/PySpark app: its lineage can only come from the OpenLineage Spark listener"),
    ):
        assert f"spark:{apps[name]} {name}: not reported: " in first.stderr, name
        assert reason in first.stderr, name
    for app in apps.values():
        started(c, app)
    result = watch.once(sp.url, "--timeout", "240", "--verbose")
    warning = f"WARN spark:{apps['old_spark']} old_spark: not reported: Spark 3.3.2 is not a Spark version"
    assert warning in result.stderr and "(3.5, 4.0)" in result.stderr
    c.spark_state(apps["old_spark"], SPARK_FINISHED)
    watch.once(sp.url, "--timeout", "240")
    assert jobs(gravitino) == {
        job: ["START", "RUNNING"] for job in ("streampark.reported", *children("streampark.reported"))
    }

    check = watch("--check", "--streampark-db", sp.url)
    assert f"not reported: spark:{apps['by_defaults']} by_defaults: its lineage comes from" in check.stdout
    exactly_once(gravitino)


def test_failed_stopped_killed_and_restarted_runs(streampark, watch, gravitino):
    sp = streampark("dev", spark=True)
    c = sp.console
    c.spark_env(CLUSTER_VERSION)
    app = c.create_spark_app("nightly", NIGHTLY)
    c.spark_release(app)
    started(c, app)  # running before the watcher's first poll: adopted
    result = watch.once(sp.url, "--timeout", "240")
    assert f"spark:{app} nightly: adopted run, Spark {CLUSTER_VERSION}: compiling" in result.stderr
    c.spark_state(app, SPARK_FAILED)
    watch.once(sp.url, "--timeout", "240")

    started(c, app)
    watch.once(sp.url, "--timeout", "240")
    c.spark_stop(app)  # STOPPING, the CANCEL row, then YARN's KILLED: an abort, as a Flink cancel
    result = watch.once(sp.url, "--timeout", "240")
    assert f"spark:{app} nightly: RUNNING -> KILLED after a stop: ABORT event" in result.stderr

    started(c, app)
    watch.once(sp.url, "--timeout", "240")
    c.spark_state(app, SPARK_KILLED)  # killed on YARN, not from the console: a failure
    watch.once(sp.url, "--timeout", "240")

    started(c, app)
    watch.once(sp.url, "--timeout", "240")
    started(c, app)  # restarted without an end state reaching the watcher
    result = watch.once(sp.url, "--timeout", "240")
    assert "previous run never ended, closed: ABORT event" in result.stderr

    runs = timeline(gravitino, TARGETS[0])
    assert [t for _, t in runs] == [
        "START", "RUNNING", "FAIL",
        "START", "RUNNING", "ABORT",
        "START", "RUNNING", "FAIL",
        "START", "RUNNING", "ABORT",
        "START", "RUNNING",
    ], watch.outputs  # fmt: skip
    assert len({run for run, _ in runs}) == 5
    assert types(gravitino, "streampark.nightly") == [t for _, t in runs]
    exactly_once(gravitino)


def _service_alive(home) -> bool:
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes() if proc.name.isdigit() else b""
        except OSError:
            continue
        if b"_compile-service" in cmdline and str(home).encode() in cmdline:
            return True
    return False


def test_a_long_running_watcher_compiles_again_after_its_compile_service_ended_idle(streampark, watch, gravitino):
    """`watch` outlives its compile service (it ends after PLANLINEAGE_COMPILE_IDLE_SECONDS, 0.5 s
    here): the next run's compile starts a new one (it used to wait for the watcher's restart)."""
    sp = streampark("dev", spark=True)
    c = sp.console
    c.spark_env(CLUSTER_VERSION)
    app = c.create_spark_app("nightly", NIGHTLY)
    c.spark_release(app)
    daemon = watch.daemon(sp.url, "--interval", "0.2")
    try:
        wait_for(lambda: "schema" in watch.log.read_text(), what="the first poll")
        started(c, app)
        wait_for(
            lambda: types(gravitino, "streampark.nightly") == ["START", "RUNNING"], timeout=240, what="the first run"
        )
        wait_for(lambda: not _service_alive(watch.home), timeout=60, what="the compile service's idle end")
        started(c, app)
        wait_for(
            lambda: types(gravitino, "streampark.nightly") == ["START", "RUNNING", "ABORT", "START", "RUNNING"],
            timeout=240,
            what="the second run, compiled by a new service",
        )
    finally:
        assert watch.stop(daemon) == 0
    exactly_once(gravitino)
