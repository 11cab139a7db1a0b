"""A backfill (`extract DIR`, a history replay) boots its new JVM before its first job: the naming
rules and the pipeline load while it starts (planlineage.backfill.each_on_a_planner), and no JVM
outlives the call, even when the work before the first job fails."""

from __future__ import annotations

import io
import json

import pytest
from marked_jvms import marked_jvms, wait_until

from planlineage import backfill
from planlineage.errors import InputError
from planlineage.pipeline import extract
from planlineage.planner import warm

#: A heap cap no other JVM of the test run uses: its command line finds this test's planners.
MARK_HEAP = "778m"
D = "default_catalog.default_database."


def _jvms() -> list[int]:
    return marked_jvms(MARK_HEAP)


def job(i: int) -> str:
    return (
        f"CREATE TABLE src_{i} (a INT) WITH ('connector' = 'datagen');"
        f"CREATE TABLE out_{i} (a INT) WITH ('connector' = 'blackhole');"
        f"INSERT INTO out_{i} SELECT a FROM src_{i};"
    )


@pytest.fixture
def marked(monkeypatch, tmp_path):
    monkeypatch.setenv("PLANLINEAGE_PLANNER_HEAP", MARK_HEAP)
    monkeypatch.setenv(warm.PLANNER_DIR_ENV, str(tmp_path / "no-warm-planner"))  # none answers here
    assert not _jvms()
    yield
    assert wait_until(lambda: not _jvms(), 10), "a backfill JVM outlived its call"


def test_the_new_jvm_boots_before_the_first_job(provisioned, marked):
    seen_before_jobs = []
    answers = {}

    def before_jobs() -> None:
        # Nothing has asked for a compile yet: the JVM is there because the backfill started it.
        seen_before_jobs.append(wait_until(lambda: bool(_jvms()), 30))

    def handle(i: int, planner) -> None:
        answers[i] = extract(job(i), planner=planner)

    slots, on_warm, in_jvm = backfill.each_on_a_planner(provisioned, [0, 1, 2], 2, None, handle, before_jobs)

    assert seen_before_jobs == [True]
    assert (slots, on_warm, in_jvm) == (2, 0, 2)
    for i, lineage in answers.items():
        assert [(s.table, [t.table for t in s.inputs]) for s in lineage.sinks] == [(f"{D}out_{i}", [f"{D}src_{i}"])]


def test_work_before_the_first_job_that_fails_leaves_no_jvm(provisioned, marked):
    handled = []

    def before_jobs() -> None:
        raise InputError("the naming rules cannot be read")

    with pytest.raises(InputError, match="naming rules"):
        backfill.each_on_a_planner(provisioned, [0, 1], 2, None, lambda i, planner: handled.append(i), before_jobs)
    assert handled == []  # the `marked` fixture then checks that the JVM it had started is gone


def test_naming_rules_given_as_a_loader_are_loaded_once(provisioned, marked, tmp_path):
    scripts = []
    for i in range(3):
        path = tmp_path / f"{i}.sql"
        path.write_text(job(i))
        scripts.append(path)
    loads = []

    def load_rules():
        loads.append(1)
        return None  # the default rules

    out = io.StringIO()
    ok, failed = backfill.run(
        scripts, flink_version=provisioned.flink.minor, jars=[], identity=load_rules, jobs=2, out=out, err=io.StringIO()
    )
    assert (ok, failed, loads) == (3, 0, [1])
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert sorted(line["script"] for line in lines) == sorted(str(p) for p in scripts)
