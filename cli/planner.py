"""`planlineage planner` (and its old names, hidden: planlineage/deprecated.py): the warm planners,
one long-lived JVM per Flink version (planlineage.planner.warm)."""

from __future__ import annotations

import argparse
import json

from planlineage import deprecated
from planlineage.errors import ExitCode


def cmd_planner(args) -> int:
    from planlineage.planner import warm

    limits = warm.Limits(job_timeout=args.job_timeout, max_jobs=args.max_jobs, max_rss_mb=args.max_rss_mb)
    if args.planner_command == "serve":
        return warm.serve(args.flink_version, limits, args.idle_timeout)
    if args.planner_command == "start":
        for version in args.flink_version_list or [None]:
            info = warm.start(version, limits, args.idle_timeout)
            print(f"Flink {info['flink_version']} warm planner running (pid {info['pid']}, {info['socket']})")
        return ExitCode.OK
    if args.planner_command == "stop":
        stopped = warm.stop(args.flink_version)
        print(f"{stopped} warm planner(s) stopped")
        return ExitCode.OK
    planners = warm.status()
    if not planners:
        print("no warm planner running")
    for info in planners:
        print(json.dumps(info))
    return ExitCode.OK


def cmd_old_name(name: str):
    """``planner`` under an old name (planlineage/deprecated.py): it works, and says so once."""

    def run(args) -> int:
        deprecated.say_once(f"`planlineage {name}`", f"`planlineage {deprecated.COMMANDS[name]}`")
        return cmd_planner(args)

    return run


def configure(name: str, parser: argparse.ArgumentParser) -> None:
    """``planner`` and its old names (planlineage/deprecated.py; no help: not listed) take the same commands."""
    planner_commands = parser.add_subparsers(dest="planner_command", required=True)
    for command, text in (
        ("start", "start a warm planner per version (default 1.20)"),
        ("serve", "run a warm planner in the foreground"),
        ("stop", "stop warm planners"),
        ("status", "show running warm planners"),
    ):
        sub = planner_commands.add_parser(command, help=text)
        if command == "start":
            sub.add_argument(
                "flink_version_list", nargs="*", metavar="VERSION", help="Flink versions (1.20 2.3); default 1.20"
            )
        elif command in ("serve", "stop"):
            which = "the version to serve (default 1.20)" if command == "serve" else "only this version's (else all)"
            sub.add_argument("--flink-version", default=None, help=which)
        sub.add_argument("--idle-timeout", type=float, default=900.0, help="stop after this many idle seconds")
        sub.add_argument("--max-jobs", type=int, default=20_000, help="recycle the JVM after this many jobs")
        sub.add_argument("--max-rss-mb", type=int, default=600, help="recycle the JVM above this resident memory")
        sub.add_argument("--job-timeout", type=float, default=120.0, help="a job running longer is stopped")
    parser.set_defaults(run=cmd_old_name(name) if name in deprecated.COMMANDS else cmd_planner)
