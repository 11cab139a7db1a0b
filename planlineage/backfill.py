"""`extract DIR/ --jobs N`: the lineage of many scripts, N compiled at once.

A warm planner already running for the version (`planlineage planner start`) is one of the N: it
is warm, so it starts answering at once. The rest compile in one new JVM with that many threads:
its threads share the JVM's loaded classes and JIT-compiled code, which are most of what its first
hundred jobs cost, where separate JVMs would each pay for their own. Backfill threads take the next
script from a shared queue, so a slow script never holds up the others, and there is one more of
them than the new JVM compiles at once: a job is always waiting in the JVM while Python reads and
names the last answer. One JSON line per script goes to stdout as it finishes; progress (on a
terminal) and a summary with the per-job p50/p95 go to stderr.

The new JVM is started first, before the pipeline is imported (the walk, the naming rules and the
document model: about 0.2 s of one core), so that its boot overlaps that import.
"""

from __future__ import annotations

import contextlib
import json
import math
import queue
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from planlineage.errors import ExtractError, PlannerError
from planlineage.planner import warm
from planlineage.planner.protocol import CompileAnswer, CompileRequest
from planlineage.planner.provision import Provisioned, ensure
from planlineage.planner.warm import Limits, SelfHealingPlanner


class WarmPlannerSlot:
    """The running warm planner of a version as one of a backfill's planners; its own JVM only if
    the warm planner fails."""

    def __init__(self, provisioned: Provisioned, limits: Limits | None):
        self.provisioned = provisioned
        self.limits = limits
        self._fallback: SelfHealingPlanner | None = None

    def compile(self, request: CompileRequest, timeout: float | None = None) -> CompileAnswer:
        if self._fallback is None:
            answer = warm.compile_warm(self.provisioned.flink.minor, request, timeout or warm.DEFAULT_JOB_TIMEOUT)
            if answer is not None:
                return answer
            self._fallback = SelfHealingPlanner(self.provisioned, self.limits)  # it stopped answering
        return self._fallback.compile(request, timeout)

    def close(self) -> None:
        if self._fallback is not None:
            self._fallback.close()


def running_warm_planners(provisioned: Provisioned) -> int:
    """How many warm planners of this version answer (0 or 1: one per version and user)."""
    minor = provisioned.flink.minor
    for info in warm.status():
        if info.get("state") == "running" and info.get("socket", "").endswith(warm.socket_name(minor)):
            return 1
    return 0


def collect_scripts(paths: list[str]) -> list[Path]:
    """The scripts named, folders expanded to the `.sql` files below them, in a stable order."""
    found: list[Path] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*.sql") if p.is_file()))
        else:
            found.append(path)
    return found


def run(
    scripts: list[Path],
    *,
    flink_version: str | None,
    jars: list[str],
    identity,
    jobs: int,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
    limits: Limits | None = None,
    columns: bool = False,
) -> tuple[int, int]:
    """Analyses every script; returns (succeeded, failed). ``identity``: the naming rules, or a
    function that loads them, called once the new JVM is starting, so that loading them (the
    registry and the document model) overlaps its boot."""
    provisioned = ensure(flink_version)
    lock = threading.Lock()
    counts = {"ok": 0, "failed": 0}
    durations: list[float] = []
    started = time.monotonic()
    show_progress = err.isatty()

    def record(line: dict, seconds: float) -> None:
        with lock:
            durations.append(seconds)
            counts["ok" if line["ok"] else "failed"] += 1
            out.write(json.dumps(line) + "\n")
            out.flush()
            if show_progress:
                done = counts["ok"] + counts["failed"]
                err.write(
                    f"\r[{done}/{len(scripts)}] {counts['failed']} failed, "
                    f"{done / max(time.monotonic() - started, 1e-6):.1f} jobs/s"
                )
                err.flush()

    def load_rules() -> None:
        nonlocal identity
        if callable(identity):
            identity = identity()

    def one(script: Path, planner: SelfHealingPlanner | WarmPlannerSlot) -> None:
        began = time.monotonic()
        line = _one(script, planner, jars, identity, columns)
        record(line, time.monotonic() - began)

    slots, warm_slots, threads_in_jvm = each_on_a_planner(
        provisioned, scripts, jobs, limits, one, before_jobs=load_rules
    )
    elapsed = time.monotonic() - started
    if show_progress:
        err.write("\n")
    new_jvm = f"{threads_in_jvm} in a new JVM" if threads_in_jvm else "no new JVM"
    err.write(
        f"planlineage: {len(scripts)} scripts, {counts['ok']} ok, {counts['failed']} failed, "
        f"{elapsed:.1f} s ({len(scripts) / max(elapsed, 1e-6):.1f} jobs/s, {slots} at once: "
        f"{warm_slots} on the running warm planner, {new_jvm}); per job "
        f"p50 {percentile(durations, 50) * 1000:.0f} ms, p95 {percentile(durations, 95) * 1000:.0f} ms\n"
    )
    return counts["ok"], counts["failed"]


def each_on_a_planner(
    provisioned: Provisioned,
    items: list,
    jobs: int,
    limits: Limits | None,
    handle: Callable[[Any, SelfHealingPlanner | WarmPlannerSlot], None],
    before_jobs: Callable[[], None] | None = None,
) -> tuple[int, int, int]:
    """Calls ``handle(item, planner)`` for every item, ``jobs`` at once: the running warm planner
    of the version first, the rest on backfill threads sharing one new JVM (one thread more than
    it compiles at once); ``(slots, on the warm planner, threads in the new JVM)``. ``before_jobs``
    runs once the new JVM is starting, before the first item (an error it raises ends the call)."""
    work: queue.Queue = queue.Queue()
    for item in items:
        work.put(item)
    slots = max(1, min(jobs, len(items)))
    warm_slots = min(slots, running_warm_planners(provisioned))
    threads_in_jvm = slots - warm_slots
    shared = SelfHealingPlanner(provisioned, limits, threads=threads_in_jvm) if threads_in_jvm else None
    starter = None
    if shared is not None:
        # Booted now, while the caller's `before_jobs` and the backfill threads import the pipeline
        # and ready their first jobs (the first scripts go to a running warm planner meanwhile). A JVM
        # that cannot start is started again by the first job, which reports why.
        starter = threading.Thread(target=_start_quietly, args=(shared,), name="backfill-jvm-start", daemon=True)
        starter.start()

    def backfill_thread(planner: SelfHealingPlanner | WarmPlannerSlot) -> None:
        while True:
            try:
                item = work.get_nowait()
            except queue.Empty:
                return
            handle(item, planner)

    owned: list[SelfHealingPlanner | WarmPlannerSlot] = [
        WarmPlannerSlot(provisioned, limits) for _ in range(warm_slots)
    ]
    # One backfill thread per warm slot, and one more than its threads for the new JVM.
    planners = [*owned]
    if shared:
        owned.append(shared)
        planners += [shared] * (threads_in_jvm + 1)
    threads = [threading.Thread(target=backfill_thread, args=(planner,), daemon=True) for planner in planners]
    try:
        if before_jobs is not None:
            before_jobs()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        if starter is not None:
            starter.join()  # a JVM still starting is closed below, not left behind
        for planner in owned:
            planner.close()
    return slots, warm_slots, threads_in_jvm


def _start_quietly(planner: SelfHealingPlanner) -> None:
    with contextlib.suppress(PlannerError, OSError):
        planner.start()


def percentile(values: list[float], p: float) -> float:
    """The nearest-rank percentile (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))]


def _one(script: Path, planner: SelfHealingPlanner | WarmPlannerSlot, jars: list[str], identity, columns: bool) -> dict:
    from planlineage.pipeline import extract  # imported while the new JVM boots (see the module's docstring)

    try:
        text = script.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return {"script": str(script), "ok": False, "error": f"cannot read the script: {error}"}
    try:
        lineage = extract(text, jars=jars, identity=identity, planner=planner, columns=columns)
    except (ExtractError, PlannerError) as error:
        return {"script": str(script), "ok": False, "error": str(error)}
    return {"script": str(script), "ok": True, "lineage": lineage.to_json_dict()}
