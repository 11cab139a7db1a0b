"""The compile service's pool: one planner JVM per version compiles several jobs at once, within
the bound on JVMs (no JVM is started here: slots are only handed out and given back)."""

from __future__ import annotations

import threading
import time

from planlineage.lifecycle import compile_service, planner_pool


def _waiter(pool: planner_pool.PlannerPool, version: str):
    """A caller asking for a slot in a thread of its own: ``(thread, [slot once it has one])``."""
    got: list = []
    thread = threading.Thread(target=lambda: got.append(pool.acquire(version)), daemon=True)
    thread.start()
    return thread, got


def _taken_within(pool: planner_pool.PlannerPool, version: str, seconds: float) -> planner_pool._Slot | None:
    thread, got = _waiter(pool, version)
    thread.join(seconds)
    return got[0] if got else None


def test_one_jvm_is_handed_to_as_many_compiles_as_its_threads_and_no_more():
    pool = planner_pool.PlannerPool(1, lambda pid: None, threads=2)
    first = pool.acquire("1.20")
    second = _taken_within(pool, "1.20", 2)
    assert second is first  # the same JVM compiles the second job at once, no second JVM
    assert first.threads == 2 and pool.capacity == 2
    thread, third = _waiter(pool, "1.20")
    thread.join(0.3)
    assert third == []  # a third waits for a free thread
    pool.release(first)
    thread.join(2)
    assert third == [first]
    pool.close()


def test_another_version_waits_for_the_jvm_to_be_idle_then_replaces_it():
    pool = planner_pool.PlannerPool(1, lambda pid: None, threads=2)
    old = pool.acquire("1.19")
    thread, new = _waiter(pool, "1.20")
    thread.join(0.3)
    assert new == []  # the bound of 1 JVM holds while 1.19 compiles
    pool.release(old)
    thread.join(2)
    assert len(new) == 1 and new[0] is not old and new[0].version == "1.20"
    pool.close()


def test_a_spark_place_is_one_job_as_each_spark_compile_starts_its_own_jvm():
    pool = planner_pool.PlannerPool(1, lambda pid: None, threads=2)
    first = pool.acquire("spark-3.5", own_jvm=True)
    assert first.threads == 1 and _taken_within(pool, "spark-3.5", 0.3) is None
    pool.release(first)
    pool.close()


def test_a_place_is_one_job_for_any_engine_whose_compile_starts_its_own_jvm_not_by_its_name():
    """The pool is told whether a compile starts its own JVM (the engine's `pooled_compiler`); it
    used to guess it from a `spark-` prefix, which a third engine's key would not have."""
    pool = planner_pool.PlannerPool(2, lambda pid: None, threads=2)
    own = pool.acquire("hive-3.1", own_jvm=True)
    assert own.threads == 1
    shared = pool.acquire("1.20")
    assert shared.threads == 2
    pool.release(own)
    pool.release(shared)
    pool.close()


class _Pool:
    def __init__(self):
        self.asked = []

    def acquire(self, version, *, own_jvm=False):
        self.asked.append((version, own_jvm))


def test_the_service_keys_a_compile_by_its_engines_own_version_field(monkeypatch):
    """A compile job's version is read from its engine's field (`flink_version`, `spark_version`,
    a third engine's own), and only a pooled compiler shares a planner JVM."""
    from types import SimpleNamespace

    third = SimpleNamespace(name="hive", pooled_compiler=False, version_field="hive_version")
    known = {"hive": third}
    real = compile_service.engines.get
    monkeypatch.setattr(compile_service.engines, "get", lambda name=None: known.get(name) or real(name))
    pool = _Pool()
    service = SimpleNamespace(_pool_for=lambda job: pool)
    for job in (
        {"engine": "hive", "hive_version": "3.1", "spark_version": "3.5"},
        {"engine": "spark", "spark_version": "4.0"},
        {"engine": "flink", "flink_version": "1.20"},
    ):
        compile_service.Service._slot_for(service, job)
    assert pool.asked == [("hive-3.1", True), ("spark-4.0", True), ("1.20", False)]


def test_the_compile_service_runs_as_many_compile_threads_as_its_jvms_take(tmp_path):
    from planlineage.store.sqlite import Store

    service = compile_service.Service(Store(tmp_path / "state.db"), planners=1, idle_seconds=1)
    assert service.pool.size == 1 and service.pool.capacity == planner_pool.COMPILE_THREADS >= 2


def test_two_callers_of_a_new_slot_start_one_planner_not_one_each(monkeypatch):
    """The compile service's bound of one JVM was seen at two: both callers handed a new slot
    found it without a planner and each made one."""
    from planlineage.planner import provision, warm

    made: list[object] = []

    class SlowPlanner:
        def __init__(self, provisioned, limits, threads=1):
            made.append(self)
            time.sleep(0.3)  # provisioning and the JVM's start take their time

    monkeypatch.setattr(warm, "SelfHealingPlanner", SlowPlanner)
    monkeypatch.setattr(provision, "ensure", lambda version: object())
    pool = planner_pool.PlannerPool(1, lambda pid: None, threads=2)
    slot = pool.acquire("1.20")
    assert pool.acquire("1.20") is slot
    both = [threading.Thread(target=slot._planner) for _ in range(2)]
    for thread in both:
        thread.start()
    for thread in both:
        thread.join()
    assert len(made) == 1
