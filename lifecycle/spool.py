"""State reports the database was too busy to take within a command's bound: kept in order in
``$PLANLINEAGE_HOME/spool/`` (one small private file each, named by time) and recorded later by
the next command or the compile service, so that a busy moment never loses a report.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable

from planlineage.store.sqlite import Store

FOLDER = "spool"


def put(store: Store, app_id: str, platform_state: str, error: str | None, when: str) -> None:
    """Keep one report (``error`` already redacted) for :func:`replay`."""
    from planlineage.home import make_private_dir, write_private

    folder = make_private_dir(store.path.parent / FOLDER)
    report = {"app_id": app_id, "state": platform_state, "error": error, "time": when}
    write_private(folder / f"{time.time_ns():020d}-{os.getpid()}.json", json.dumps(report).encode("utf-8"))


def waiting(store: Store) -> bool:
    try:
        return any((store.path.parent / FOLDER).glob("*.json"))
    except OSError:
        return False


def replay(store: Store, record: Callable[[Store, str, str, str | None, str], object]) -> int:
    """Hand spooled reports to ``record(store, app_id, state, error, time)`` oldest first; stops
    at the first that raises (it stays, so order holds); how many were recorded."""
    try:
        reports = sorted((store.path.parent / FOLDER).glob("*.json"))
    except OSError:
        return 0
    done = 0
    for path in reports:
        try:
            report = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            path.unlink(missing_ok=True)
            continue
        record(store, report["app_id"], report["state"], report.get("error"), report["time"])
        path.unlink(missing_ok=True)
        done += 1
    return done
