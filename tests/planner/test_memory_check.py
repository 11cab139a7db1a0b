"""A warm planner's memory is read after its first job, then at most every `memory_check_seconds`,
and a planner found over its limit is recycled (no JVM: the planner is a stand-in)."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from planlineage.planner import warm


class FakePlanner:
    started = 0

    def __init__(self, provisioned, long_lived=False, threads=1):
        FakePlanner.started += 1
        self.pid = 1000 + FakePlanner.started
        self.jobs = 0
        self.alive = True

    def compile_raw(self, request, timeout=0):
        self.jobs += 1
        return '{"ok": true}'

    def close(self):
        self.alive = False


@pytest.fixture
def reads(monkeypatch):
    """The pids whose memory was read; every planner uses 100 MB."""
    FakePlanner.started = 0
    found: list[int] = []
    monkeypatch.setattr(warm, "Planner", FakePlanner)
    monkeypatch.setattr(warm, "process_tree_rss_mb", lambda pid: found.append(pid) or 100.0)
    return found


def healing(**limits) -> warm.SelfHealingPlanner:
    return warm.SelfHealingPlanner(SimpleNamespace(), warm.Limits(**limits))  # type: ignore[arg-type]


def test_memory_is_read_after_the_first_job_then_when_due(reads):
    planner = healing(memory_check_seconds=0.2)
    for _ in range(5):
        planner.compile({})
    assert reads == [1001]  # the first job only: the next ones came within 0.2 s
    time.sleep(0.25)
    planner.compile({})
    assert reads == [1001, 1001]


def test_a_planner_over_its_memory_is_recycled_and_its_successor_read_after_its_first_job(reads):
    planner = healing(memory_check_seconds=60, max_rss_mb=50)
    planner.compile({})
    assert planner.planner_pid is None and planner.generation == 1  # 100 MB > 50: retired
    planner.compile({})
    assert reads == [1001, 1002] and planner.generation == 2


def test_under_the_limit_a_planner_keeps_serving(reads):
    planner = healing(memory_check_seconds=0, max_rss_mb=500)
    for _ in range(3):
        planner.compile({})
    assert reads == [1001, 1001, 1001] and planner.generation == 1 and planner.planner_pid == 1001
