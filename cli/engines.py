"""`planlineage flink` and `planlineage spark`: the per-version engine environments (list what a
cache holds, (re)provision versions)."""

from __future__ import annotations

import argparse

from planlineage import engines
from planlineage.errors import ExitCode


def cmd_versions(args) -> int:
    """`list`: what an engine's cache holds; `install`: (re)provision the versions asked for."""
    engine = engines.get(args.engine_name)
    if getattr(args, f"{engine.name}_command") == "list":
        for minor, info in engine.installed().items():
            print(f"{minor:<5} {info['version']:<7} {info['state']:<14} {info['path']}")
        return ExitCode.OK
    for version in args.versions:
        engine.provision(version, force=True)
    return ExitCode.OK


def configure(name: str, parser: argparse.ArgumentParser) -> None:
    """An engine's command (``flink``, ``spark``): ``install VERSION...`` and ``list``, one set of
    words for every engine."""
    engine = engines.get(name)
    commands = parser.add_subparsers(dest=f"{name}_command", required=True)
    install = commands.add_parser("install", help=f"(re)provision {engine.display_name} versions")
    install.add_argument("versions", nargs="+", help=engine.version_examples)
    commands.add_parser("list", help=f"show which {engine.display_name} versions are provisioned")
    parser.set_defaults(run=cmd_versions, engine_name=name)
