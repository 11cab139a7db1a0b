"""The compile service's pool: at most ``size`` warm planners in all, kept per Flink version.

A slot provisions its version and starts its JVM on first use; a running warm planner the user
started (``planlineage planner start``) answers first, as it does for ``extract``.  Each planner's
JVM compiles up to ``threads`` jobs at once (:data:`COMPILE_THREADS`, as ``extract DIR --jobs 2``
does): a slot is handed to that many callers together, so a burst of submissions (a watcher
adopting thousands of running apps) keeps the JVM busy while Python records the previous job,
instead of compiling one job at a time on one thread.
"""

from __future__ import annotations

import threading

from planlineage.lifecycle import runner
from planlineage.planner.protocol import CompileAnswer, CompileRequest

#: Jobs one planner's JVM compiles at once (its ``--threads``).  Two, as ``extract DIR --jobs 2``
#: measured on 2 cores (a third thread gained nothing there).
COMPILE_THREADS = 2


class _Slot:
    """One planner of the pool: provisions its version and starts its JVM on first use."""

    def __init__(self, version: str | None, on_start, threads: int = 1):
        self.version = version
        self._on_start = on_start
        self._healing = None
        self._making = threading.Lock()  # two callers of a new slot start one JVM, not one each
        self.threads = threads
        self.users = 0  # callers holding this slot now (at most ``threads``)

    @property
    def provisioned(self):
        return self._planner().provisioned

    def _planner(self):
        with self._making:
            if self._healing is None:
                from planlineage.planner.provision import ensure
                from planlineage.planner.warm import Limits, SelfHealingPlanner

                self._healing = SelfHealingPlanner(
                    ensure(self.version), Limits(job_timeout=runner.job_timeout()), threads=self.threads
                )
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
    """At most ``size`` planners in all, kept per version, each shared by up to ``threads``
    callers at once (its JVM's compile threads); callers wait for room."""

    def __init__(self, size: int, on_start, threads: int = 1):
        self.size = size
        self.threads = max(1, threads)
        self._on_start = on_start
        self._slots: list[_Slot] = []  # oldest first; a slot with no user is idle
        self._cond = threading.Condition()

    @property
    def capacity(self) -> int:
        """How many jobs the pool compiles at once."""
        return self.size * self.threads

    def acquire(self, version: str | None, *, own_jvm: bool = False) -> _Slot:
        """A place for a compile of ``version`` (a Flink version; another engine's ``<name>-<version>``).
        ``own_jvm``: the compile starts a JVM of its own (an engine without a pooled compiler,
        Spark's): its place is one job, not one JVM's threads."""
        with self._cond:
            while True:
                for slot in self._slots:
                    if slot.version == version and slot.users < slot.threads:
                        slot.users += 1
                        return slot
                if len(self._slots) < self.size:
                    return self._hand(self._new(version, own_jvm))
                idle = [s for s in self._slots if s.users == 0]
                if idle:  # room for this version: stop the longest-idle one of another
                    self._slots.remove(idle[0])
                    idle[0].close()
                    return self._hand(self._new(version, own_jvm))
                self._cond.wait()

    def _new(self, version: str | None, own_jvm: bool) -> _Slot:
        return _Slot(version, self._on_start, 1 if own_jvm else self.threads)

    def _hand(self, slot: _Slot) -> _Slot:
        slot.users = 1
        self._slots.append(slot)
        return slot

    def release(self, slot: _Slot) -> None:
        with self._cond:
            slot.users = max(0, slot.users - 1)
            if slot.users == 0 and slot in self._slots:  # the longest idle first for replacement
                self._slots.remove(slot)
                self._slots.append(slot)
            self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            for slot in self._slots:
                slot.close()
            self._slots.clear()
