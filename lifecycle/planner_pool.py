"""The compile service's pool: at most ``size`` warm planners in all, kept per Flink version.

A slot provisions its version and starts its JVM on first use; a running warm planner the user
started (``planlineage planner start``) answers first, as it does for ``extract``.
"""

from __future__ import annotations

import threading

from planlineage.lifecycle import runner
from planlineage.planner.protocol import CompileAnswer, CompileRequest


class _Slot:
    """One planner of the pool: provisions its version and starts its JVM on first use."""

    def __init__(self, version: str | None, on_start):
        self.version = version
        self._on_start = on_start
        self._healing = None

    @property
    def provisioned(self):
        return self._planner().provisioned

    def _planner(self):
        if self._healing is None:
            from planlineage.planner.provision import ensure
            from planlineage.planner.warm import Limits, SelfHealingPlanner

            self._healing = SelfHealingPlanner(ensure(self.version), Limits(job_timeout=runner.job_timeout()))
        return self._healing

    def compile(self, request: CompileRequest, timeout: float | None = None) -> CompileAnswer:
        healing = self._planner()
        # A warm planner the user started (`planlineage planner start`) answers first, as it does
        # for `extract`: no second JVM for that version while it runs. This slot still holds its
        # pool place, so the bound on the service's own JVMs is unchanged.
        from planlineage.planner import warm

        answer = warm.compile_warm(healing.provisioned.flink.minor, request, healing.limits.job_timeout)
        if answer is not None:
            return answer
        self._on_start(healing.start())  # recorded before the compile: a death under it
        answer = healing.compile(request, timeout)
        self._on_start(healing.planner_pid)  # a replacement started by the compile
        return answer

    def close(self) -> None:
        if self._healing is not None:
            self._healing.close()
            self._healing = None


class PlannerPool:
    """At most ``size`` planners in all, kept per version; callers wait for a free one."""

    def __init__(self, size: int, on_start):
        self.size = size
        self._on_start = on_start
        self._idle: list[_Slot] = []
        self._count = 0
        self._cond = threading.Condition()

    def acquire(self, version: str | None) -> _Slot:
        with self._cond:
            while True:
                for slot in self._idle:
                    if slot.version == version:
                        self._idle.remove(slot)
                        return slot
                if self._count < self.size:
                    self._count += 1
                    return _Slot(version, self._on_start)
                if self._idle:  # room for this version: stop the longest-idle one of another
                    victim = self._idle.pop(0)
                    victim.close()
                    return _Slot(version, self._on_start)
                self._cond.wait()

    def release(self, slot: _Slot) -> None:
        with self._cond:
            self._idle.append(slot)
            self._cond.notify()

    def close(self) -> None:
        with self._cond:
            for slot in self._idle:
                slot.close()
            self._idle.clear()
