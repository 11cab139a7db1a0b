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
    return uuid7(time.time_ns() // 1_000_000, int.from_bytes(os.urandom(10), "big"))


def uuid7(millis: int, rand: int) -> str:
    """The UUIDv7 of ``millis`` (Unix time) and 80 bits of ``rand``, in its canonical text form."""
    value = (millis & ((1 << 48) - 1)) << 80  # unix_ts_ms
    value |= 0x7 << 76  # version 7
    value |= ((rand >> 62) & 0xFFF) << 64  # rand_a
    value |= 0b10 << 62  # RFC 4122 variant
    value |= rand & ((1 << 62) - 1)  # rand_b
    text = f"{value:032x}"  # the canonical 8-4-4-4-12 form, without loading uuid (and its platform probe)
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def child_run_id(parent_run_id: str, sink_table: str) -> str:
    """The run id of the child job for ``sink_table`` of a STATEMENT SET: deterministic from the
    parent run id, so that every later event of the submission meets its START without a stored
    mapping, and a UUIDv7 like every other run id (backends such as Data.Rentgen reject anything
    else).

    The shape of openlineage-java's ``UUIDUtils.generateStaticUUID``: the 48-bit time is the
    parent's own (the parent id is a UUIDv7 whose time bits are the run's start), the rest is a
    SHA-1 of the parent id's text, a newline and the sink table (UTF-8), under the v7 version and
    RFC 4122 variant bits. A parent id that is not a v7 (a run recorded with an older id) gives its
    first 48 bits all the same: the child id stays deterministic and valid.
    """
    import hashlib

    parent = parent_run_id.strip().lower()
    digits = parent.replace("-", "")
    if len(digits) != 32 or any(c not in "0123456789abcdef" for c in digits):
        raise ValueError(f"a parent run id is a UUID, not {parent_run_id!r}")
    millis = int(digits[:12], 16)
    digest = hashlib.sha1(f"{parent}\n{sink_table}".encode()).digest()
    return uuid7(millis, int.from_bytes(digest[:10], "big"))


def legacy_child_run_id(parent_run_id: str, sink_table: str) -> str:
    """The child run id planlineage gave before child ids were UUIDv7: ``uuid5(parent, sink)``.

    Kept only for runs whose START was built with it (a lineage document stored by that release:
    :attr:`planlineage.document.JobLineage.child_run_ids`), so that their later events still meet
    that START instead of opening a run no START began.
    """
    import uuid

    return str(uuid.uuid5(uuid.UUID(parent_run_id), sink_table))


def listener_run_id(flink_job_id: str, start_time_millis: int) -> str:
    """The run id openlineage-flink's listener gives a Flink 2.x job when it derives it from the
    job (``openlineage.flink.enableDetachedJobTracking``): ``UUIDUtils.generateStaticUUID`` of the
    job's start time (Flink's REST ``start-time``, milliseconds) and its JobID, as
    ``OpenLineageContext.setRunUuidFromFlinkJobId`` calls it (openlineage-flink 1.53.0).

    A UUIDv7 whose 48-bit time is the start time; the rest is a SHA-1 of the start time written as
    Java's ``Instant.toString()`` followed by the JobID's 32 lower-case hex digits (UTF-8).
    """
    import hashlib

    job = flink_job_id.strip().lower()
    if len(job) != 32 or any(c not in "0123456789abcdef" for c in job):
        raise ValueError(f"a Flink JobID is 32 hex digits, not {flink_job_id!r}")
    if start_time_millis <= 0:
        raise ValueError(f"a job start time is milliseconds since the epoch, not {start_time_millis!r}")
    digest = hashlib.sha1(_java_instant(start_time_millis).encode("utf-8") + job.encode("utf-8")).digest()
    high, low = int.from_bytes(digest[:8], "big"), int.from_bytes(digest[8:16], "big")
    msb = ((start_time_millis << 16) | (high & 0x0FFF) | 0x7000) & ((1 << 64) - 1)
    lsb = (low & 0x3FFFFFFFFFFFFFFF) | 0x8000000000000000
    text = f"{msb:016x}{lsb:016x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def _java_instant(millis: int) -> str:
    """``java.time.Instant.ofEpochMilli(millis).toString()``: ISO-8601 in UTC, seconds always,
    the fraction only when not zero (three digits from milliseconds)."""
    from datetime import UTC, datetime, timedelta

    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=millis)
    fraction = f".{millis % 1000:03d}" if millis % 1000 else ""
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + fraction + "Z"
