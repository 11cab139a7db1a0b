"""Which Flink version a request names, told without reading the version descriptions
(`planlineage.flink_versions`, which provisioning resolves against): the command line finds the
warm planner of a version by this alone."""

from __future__ import annotations

#: The version compiled when none is asked for.
DEFAULT_MINOR = "1.20"


def minor(requested: str | None) -> str:
    """`1.20.5`, `1.20` or None (the default) -> `1.20`; whether it is supported is provisioning's to say."""
    return ".".join((requested or DEFAULT_MINOR).strip().split(".")[:2])
