"""A run's ids and the event types it goes through: new run ids (UUIDv7, time-ordered, as
OpenLineage recommends) and its children's (one per sink of a STATEMENT SET). Times are
:mod:`planlineage.clock`'s.

Standard library only, so that recording a submission does not import openlineage-python.
"""

from __future__ import annotations

import os
import time

EVENT_TYPES = ("START", "RUNNING", "COMPLETE", "FAIL", "ABORT")
TERMINAL_EVENT_TYPES = frozenset({"COMPLETE", "FAIL", "ABORT"})


def new_run_id() -> str:
    millis = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (millis & ((1 << 48) - 1)) << 80  # unix_ts_ms
    value |= 0x7 << 76  # version 7
    value |= ((rand >> 62) & 0xFFF) << 64  # rand_a
    value |= 0b10 << 62  # RFC 4122 variant
    value |= rand & ((1 << 62) - 1)  # rand_b
    text = f"{value:032x}"  # the canonical 8-4-4-4-12 form, without loading uuid (and its platform probe)
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def child_run_id(parent_run_id: str, sink_table: str) -> str:
    """The run id of the child job for ``sink_table``: deterministic from the parent run id."""
    import uuid

    return str(uuid.uuid5(uuid.UUID(parent_run_id), sink_table))
