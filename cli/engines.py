"""`planlineage flink` and `planlineage spark`: the per-version engine environments (list what a
cache holds, (re)provision versions)."""

from __future__ import annotations

import argparse

from planlineage.errors import ExitCode


def cmd_flink(args) -> int:
    from planlineage.planner.provision import ensure, list_installed

    return _engine_versions(args.flink_command, args, ensure, list_installed)


def cmd_spark(args) -> int:
    from planlineage.spark.provision import ensure, list_installed

    return _engine_versions(args.spark_command, args, ensure, list_installed)


def _engine_versions(command: str, args, ensure, list_installed) -> int:
    """`list`: what an engine's cache holds; `install`: (re)provision the versions asked for."""
    if command == "list":
        for minor, info in list_installed().items():
            print(f"{minor:<5} {info['version']:<7} {info['state']:<14} {info['path']}")
        return ExitCode.OK
    for version in args.versions:
        ensure(version, force=True)
    return ExitCode.OK


def configure(name: str, parser: argparse.ArgumentParser) -> None:
    """``flink`` or ``spark``: ``install VERSION...`` and ``list``, one set of words for both."""
    engine, examples = ("Flink", "e.g. 1.20 2.3") if name == "flink" else ("Spark", "e.g. 3.5 4.0")
    commands = parser.add_subparsers(dest=f"{name}_command", required=True)
    install = commands.add_parser("install", help=f"(re)provision {engine} versions")
    install.add_argument("versions", nargs="+", help=examples)
    commands.add_parser("list", help=f"show which {engine} versions are provisioned")
    parser.set_defaults(run=cmd_flink if name == "flink" else cmd_spark)
