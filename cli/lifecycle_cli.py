"""The commands a submission platform calls: settings, submit, state, flush, spark-conf, flink-conf."""

from __future__ import annotations


def add_commands(commands) -> None:
    """Registers the lifecycle subcommands on the `planlineage` parser."""
