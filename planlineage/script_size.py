"""The cap on a script's size, checked before a script is read to its end, split or compiled."""

from __future__ import annotations

import os

from planlineage.errors import ScriptTooLarge

#: Scripts larger than this many bytes are not compiled (the setting ``lineage.script-max-bytes``,
#: or its environment variable, which ``extract`` reads too): a 50 MB string literal took a JVM
#: past 1 GB and held the compile service's planner for minutes, while real jobs are kilobytes.
MAX_BYTES = 4 * 1024 * 1024
MAX_BYTES_KEY = "lineage.script-max-bytes"
MAX_BYTES_ENV = "PLANLINEAGE_LINEAGE_SCRIPT_MAX_BYTES"


def _too_large(size: int | None, limit: int) -> ScriptTooLarge:
    return ScriptTooLarge(size, limit, MAX_BYTES_KEY, MAX_BYTES_ENV)


def max_bytes(value: str | None = None) -> int:
    """The size cap from a setting's text (None: the environment variable), else the default."""
    if value is None:
        value = os.environ.get(MAX_BYTES_ENV)
    try:
        limit = int(float(value or 0))
    except ValueError:
        limit = 0
    return limit if limit > 0 else MAX_BYTES


def check_size(script: str | bytes, limit: int) -> None:
    """ScriptTooLarge when ``script`` (text: counted in UTF-8 bytes) is over ``limit`` bytes."""
    size = len(script)
    if isinstance(script, str) and size <= limit < 4 * size:  # only then can the encoding decide
        size = len(script.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise _too_large(size, limit)


def read_capped(handle, limit: int) -> bytes:
    """At most ``limit`` bytes of an open binary file (or pipe); ScriptTooLarge, without reading
    it, when it is larger: a file's size is known before a byte is read."""
    try:
        size = os.fstat(handle.fileno()).st_size
    except (OSError, AttributeError, ValueError):
        size = 0
    if size > limit:
        raise _too_large(size, limit)
    data = handle.read(limit + 1)  # a pipe, or a file that grew: never more than the cap
    if len(data) > limit:
        raise _too_large(None, limit)
    return data
