"""The Flink version a platform records (``t_flink_env.version``, Dinky's cluster version, the
gateway's ``/v1/info``) as the minor version a compile is given."""

from __future__ import annotations

import re

_MINOR = re.compile(r"^(\d+\.\d+)")


def minor_version(version: str | None) -> str | None:
    """``1.20.0`` to ``1.20``; None (the default version) when ``version`` names none."""
    minor = _MINOR.match(version or "")
    return minor.group(1) if minor else None
