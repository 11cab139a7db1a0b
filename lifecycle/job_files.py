"""A node's queue of compile jobs: one private JSON file per job under ``$PLANLINEAGE_HOME/jobs``.

:mod:`.runner` writes a job when a run is recorded, the compile service reads, counts and removes
them, and :mod:`.service_start` asks whether any wait; none of them needs the others for it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypedDict, cast

from planlineage.store.sqlite import Store


class CompileJob(TypedDict, total=False):
    """One queued compile, as a job file or a shared store's row holds it (JSON)."""

    app_id: str
    run_id: str
    job_name: str
    job_namespace: str  # the job's namespace when not lineage.namespace (coexisting with openlineage-flink)
    sql: str | None  # the raw script; redacted only where it is stored in a run or an event
    error: str | None  # a reason not to compile: the run is then dropped with it
    engine: str  # "flink" or "spark"
    flink_version: str | None  # a minor version (1.20); None: the default
    jars: list[str]  # absolute paths, the app's own first
    spark_version: str | None
    spark_conf: dict[str, str]  # only the Spark conf keys that name tables
    attempts: int  # compiles started for it (the service died under each)
    created: float


def jobs_dir(store: Store) -> Path:
    return store.path.parent / "jobs"


def write_job(path: Path, data: Mapping[str, Any]) -> None:
    from planlineage.home import write_private

    # Its temporary file never stays behind; not synced: the run's row it goes with is not either.
    write_private(path, json.dumps(data).encode("utf-8"), durable=False)


def read_job(path: Path) -> CompileJob | None:
    try:
        with path.open(encoding="utf-8") as handle:
            data = json.load(handle)
        return cast(CompileJob, data) if isinstance(data, dict) else None
    except (OSError, ValueError):
        return None


def remove_job(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def queued_jobs(store: Store) -> list[Path]:
    """Job files waiting or being compiled, oldest first."""
    try:
        found = [(p.stat().st_mtime, p) for p in jobs_dir(store).glob("*.json")]
    except OSError:
        return []
    return [p for _, p in sorted(found)]
