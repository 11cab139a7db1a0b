"""Every old name that still works, in one place, with the release that removes it.

planlineage once called four different things a "worker" (the warm planner, the compile
service, the holder of an outbox claim and a backfill thread). Each now has one name, used the
same in code, commands, logs and docs: **warm planner** (`planlineage planner`, one long-lived
JVM per Flink version), **compile service** (the detached process that compiles submitted jobs and
delivers their events), **claim holder** (whoever holds a lease on an outbox row or a compile
job) and **backfill thread**. The old spellings below keep working until the release named,
and say so once when used.

Standard library only: the submit and state commands read their variables through here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

#: The release in which every alias below stops working.
REMOVED_IN = "0.3.0"

#: Old command name -> new one.
COMMANDS = {"worker": "planner"}

#: New environment variable -> the old name that is still read when the new one is not set.
ENVIRONMENT = {
    "PLANLINEAGE_PLANNER_DIR": "PLANLINEAGE_WORKER_DIR",
    "PLANLINEAGE_COMPILE_TIMEOUT": "PLANLINEAGE_WORKER_TIMEOUT",
    "PLANLINEAGE_COMPILE_FLUSH_SECONDS": "PLANLINEAGE_WORKER_FLUSH_SECONDS",
}

#: Renamed files: the old one is no longer written (the new name is said where it was).
FILES = {"compile-service.log": "worker.log"}

_said: set[str] = set()


def say_once(old: str, new: str) -> None:
    """One line on stderr per process and old name: it still works, and until when."""
    if old in _said:
        return
    _said.add(old)
    try:
        print(f"planlineage: {old} is deprecated (removed in {REMOVED_IN}); use {new}", file=sys.stderr)
    except (OSError, ValueError):  # no stderr (a closed descriptor): the alias works all the same
        pass


def environ(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The variable ``name``, or its old name's value (said once) when only that one is set."""
    env = os.environ if environ is None else environ
    value = env.get(name)
    if value is not None:
        return value
    old = ENVIRONMENT.get(name)
    if old is not None and env.get(old) is not None:
        say_once(old, name)
        return env[old]
    return None
