"""What the lineage page and the doctor are drawn from, declared once for `graph`, `ui` and `doctor`
(a module of its own: a command's module imports no other command's module, so `ui --help` loads
no `graph`): scripts, folders of scripts, extract's JSON output and event files, told apart by
content (planlineage.doctor.inputs), and the runs planlineage recorded."""

from __future__ import annotations

import sys

INPUTS_HELP = (
    "a SQL script, a folder of scripts (compiled with the planner, as `extract` does), "
    "`extract --format json` output, or a file of OpenLineage events; told apart by content"
)


def add_inputs(parser, events_help: str = "OpenLineage events as JSON lines") -> None:
    """Positional inputs of any kind, event files, the recorded runs, and how scripts compile."""
    parser.add_argument("inputs", nargs="*", metavar="INPUT", help=INPUTS_HELP)
    parser.add_argument("--events", nargs="+", action="extend", default=[], metavar="FILE", help=events_help)
    parser.add_argument("--state", action="store_true", help="also the runs planlineage recorded (read-only)")
    parser.add_argument(
        "--flink-version", default=None, help="the Flink version scripts are compiled with (default 1.20)"
    )
    parser.add_argument(
        "--job-namespace",
        metavar="NS",
        default=None,
        help="the namespace of the jobs made from scripts (default: the lineage.namespace setting)",
    )


def nothing_given(args) -> bool:
    return not args.inputs and not args.events and not args.state


def missing(command: str) -> str:
    return (
        f"planlineage {command}: give what to read: a script or a folder of scripts (e.g. examples/), "
        "extract's JSON output, event files (--events FILE…) and/or --state (the runs planlineage recorded)."
    )


def resolve(args):
    """The inputs as doctor.inputs.PageInputs: `--events` files and the positional inputs' event
    files to be read, the events made from scripts and extract documents. Raises the doctor's
    UnreadableInput."""
    from planlineage.doctor.inputs import resolve as resolve_inputs

    resolved = resolve_inputs(
        args.inputs, flink_version=args.flink_version, job_namespace=args.job_namespace, err=sys.stderr
    )
    resolved.files = [*args.events, *resolved.files]
    return resolved
