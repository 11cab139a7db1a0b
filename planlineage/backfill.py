"""`extract DIR/ --jobs N`: the lineage of many scripts, with N warm planners side by side.

Each worker thread owns one self-healing planner (its own JVM) and takes the next script from a
shared queue, so a slow script never holds up the others. One JSON line per script goes to
stdout as it finishes; progress (on a terminal) and a summary go to stderr.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
from pathlib import Path
from typing import TextIO

from planlineage.pipeline import ExtractError, extract
from planlineage.planner.compiler import PlannerError
from planlineage.planner.provision import ensure
from planlineage.planner.warm import Limits, SelfHealingPlanner


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
    """Analyses every script; returns (succeeded, failed)."""
    provisioned = ensure(flink_version)
    work: queue.Queue[Path] = queue.Queue()
    for script in scripts:
        work.put(script)
    lock = threading.Lock()
    counts = {"ok": 0, "failed": 0}
    started = time.monotonic()
    show_progress = err.isatty()

    def record(line: dict) -> None:
        with lock:
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

    def worker() -> None:
        planner = SelfHealingPlanner(provisioned, limits)
        try:
            while True:
                try:
                    script = work.get_nowait()
                except queue.Empty:
                    return
                record(_one(script, planner, jars, identity, columns))
        finally:
            planner.close()

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(max(1, min(jobs, len(scripts))))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    if show_progress:
        err.write("\n")
    err.write(
        f"planlineage: {len(scripts)} scripts, {counts['ok']} ok, {counts['failed']} failed, "
        f"{elapsed:.1f} s ({len(scripts) / max(elapsed, 1e-6):.1f} jobs/s, {len(threads)} workers)\n"
    )
    return counts["ok"], counts["failed"]


def _one(script: Path, planner: SelfHealingPlanner, jars: list[str], identity, columns: bool) -> dict:
    try:
        text = script.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return {"script": str(script), "ok": False, "error": f"cannot read the script: {error}"}
    try:
        lineage = extract(text, jars=jars, identity=identity, planner=planner, columns=columns)
    except (ExtractError, PlannerError) as error:
        return {"script": str(script), "ok": False, "error": str(error)}
    return {"script": str(script), "ok": True, "lineage": lineage.to_json_dict()}
