"""Which Spark version is compiled when none is asked for; the versions themselves are described
by data files, one per version (`spark-versions/*.toml`, read by `planlineage.spark_versions`), as
Flink's are (`flink-versions/*.toml`).

``SUPPORTED`` (every described version, by minor version) is read from those files when first
used: the engine picker imports the default without reading them.
"""

from __future__ import annotations

#: The version compiled when none is asked for.
DEFAULT_MINOR = "3.5"


def __getattr__(name: str):
    if name == "SUPPORTED":
        from planlineage.spark_versions import supported

        return supported()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
