"""What the store could not take within a command's bound, kept on this node until it can.

A state report (the SQLite file was too busy, or the shared PostgreSQL store cannot be reached)
and, with a shared store, a whole submission (the run to record and the compile to queue) are kept
in order in ``$PLANLINEAGE_HOME/spool/``: one small private file each (0600 in a 0700 folder, a
submission holds the job's raw SQL), named by time.  The next command that reaches the store (or
the compile service) records them oldest first, with their original times, before its own work.

Bounded: at most :func:`limit` files (``PLANLINEAGE_SPOOL_MAX``, default 10000).  A store that
never comes back (a wrong password, say) would otherwise fill the disk.  Past the cap the oldest
reports are kept (they hold the start of each run's history) and the new one is dropped with a
warning that says what was dropped and what to do; every later command says that reports were
dropped (a notice) until ``spool-dropped.json`` (their count) is deleted.

Only a node that has already seen lineage configured spools a submission (:func:`remember_configured`):
"nothing until configured" holds while the store is away too.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from planlineage import lazylog
from planlineage.store.sqlite import Store

log = lazylog.getLogger(__name__)  # logging loads only when something is logged

FOLDER = "spool"
#: Kept while lineage is configured on a shared store: a submission made while the store is away
#: is spooled only on a node that has this mark (it says nothing secret, only that it is on).
CONFIGURED_MARK = "lineage-configured"
DROPPED = "spool-dropped.json"
DEFAULT_LIMIT = 10_000


class SpoolFull(Exception):
    """The spool holds its cap: the item was dropped (the message says what and what to do)."""


def limit() -> int:
    """How many items the spool keeps (``PLANLINEAGE_SPOOL_MAX``, default 10000; at least 1)."""
    try:
        return max(1, int(float(os.environ.get("PLANLINEAGE_SPOOL_MAX", "") or DEFAULT_LIMIT)))
    except ValueError:
        return DEFAULT_LIMIT


def folder(store: Store) -> Path:
    return store.path.parent / FOLDER


def _items(store: Store) -> list[Path]:
    try:
        return sorted(folder(store).glob("*.json"))
    except OSError:
        return []


def _put(store: Store, item: dict[str, Any], what: str) -> None:
    from planlineage.home import make_private_dir, write_private

    kept = _items(store)
    if len(kept) >= limit():
        _dropped(store, what, len(kept))
    where = make_private_dir(folder(store))
    write_private(where / f"{time.time_ns():020d}-{os.getpid()}.json", json.dumps(item).encode("utf-8"))


def _dropped(store: Store, what: str, kept: int) -> None:
    """Count a dropped item, leave a notice for every later command, raise :class:`SpoolFull`."""
    from planlineage import home

    path = store.path.parent / DROPPED
    try:
        count = int(json.loads(path.read_text(encoding="utf-8")).get("dropped", 0))
    except (OSError, ValueError, AttributeError):
        count = 0
    message = (
        f"the spool of this node is full ({kept} reports kept, the oldest first, in {folder(store)}; "
        f"cap PLANLINEAGE_SPOOL_MAX={limit()}): {what} was dropped, {count + 1} dropped in all. "
        "The state store has been unreachable for that long: fix lineage.store (address, password) "
        "and run `planlineage flush`, which records the kept reports"
    )
    try:
        home.write_private_json(path, {"dropped": count + 1})
        if count == 0:
            home.add_notice(
                "reports of this node were dropped because its spool was full while the state store "
                "was unreachable (see spool-dropped.json for how many); they are not in the lineage "
                "server: delete spool-dropped.json once you have dealt with it",
                path,
                store.path.parent,
            )
    except OSError:
        pass
    raise SpoolFull(message)


def put(store: Store, app_id: str, platform_state: str, error: str | None, when: str) -> None:
    """Keep one state report (``error`` already redacted) for :func:`replay`; :class:`SpoolFull`
    when the spool is at its cap (the report was dropped)."""
    report = {"app_id": app_id, "state": platform_state, "error": error, "time": when}
    _put(store, report, f"the state report {platform_state} of {app_id}")


def put_submission(store: Store, job: Mapping[str, Any], when: str) -> None:
    """Keep one submission (its run id chosen already, its compile job) for :func:`replay`."""
    _put(store, {"kind": "submit", "job": job, "time": when}, f"the submission of {job.get('app_id')}")


def waiting(store: Store) -> bool:
    try:
        return any(folder(store).glob("*.json"))
    except OSError:
        return False


def replay(
    store: Store,
    record: Callable[[Store, str, str, str | None, str], object],
    submit: Callable[[Store, dict[str, Any], str], object] | None = None,
) -> int:
    """Hand spooled items oldest first to ``record(store, app_id, state, error, time)`` (a state
    report) or ``submit(store, job, time)`` (a submission); stops at the first that raises (it
    stays, so order holds); how many were recorded."""
    done = 0
    for path in _items(store):
        try:
            report = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue  # another process recorded it meanwhile
        except (OSError, ValueError):
            path.unlink(missing_ok=True)
            continue
        try:
            if report.get("kind") == "submit":
                if submit is not None:
                    submit(store, report["job"], report["time"])
            else:
                record(store, report["app_id"], report["state"], report.get("error"), report["time"])
        except (KeyError, TypeError, AttributeError):  # not a report this code wrote: never blocks the rest
            log.warning("planlineage: spooled item %s is not a report planlineage can read: dropped", path.name)
        path.unlink(missing_ok=True)
        done += 1
    return done


def remember_configured(store: Store, configured: bool) -> None:
    """Keep (or drop) the mark that lineage is configured on this node's shared store."""
    if not getattr(store, "shared", False):
        return
    mark = store.path.parent / CONFIGURED_MARK
    try:
        if configured and not mark.exists():
            from planlineage.home import write_private

            write_private(mark, b"lineage is configured on the shared store\n", durable=False)
        elif not configured and mark.exists():
            mark.unlink()
    except OSError:
        pass


def was_configured(store: Store) -> bool:
    return (store.path.parent / CONFIGURED_MARK).exists()
