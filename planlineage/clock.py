"""The one clock of planlineage: event and stored times (UTC, milliseconds, ``Z``) and the
clock leases and claims are measured with.

Standard library only and imported by every layer (the store, the emitter, the lifecycle), so
it sits on the ground floor and imports nothing of planlineage.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime


def format_time(moment: datetime) -> str:
    """An OpenLineage ``eventTime``: ISO 8601 UTC with milliseconds and ``Z``."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def utc_now() -> str:
    """Now, as :func:`format_time` writes it (event times and stored times alike)."""
    return format_time(datetime.now(UTC))


def lease_clock() -> float:
    """The clock claims and leases are measured with (wall clock: shared between processes)."""
    return time.time()
