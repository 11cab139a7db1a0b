"""`planlineage doctor`: argument parsing and rendering of the split report (planlineage.doctor)."""

from __future__ import annotations

import json
import sys

EXIT_NO_SPLITS = 0
EXIT_SPLITS = 1
EXIT_UNREADABLE = 2


def configure(name: str, parser) -> None:
    from planlineage.cli.page_inputs import add_inputs

    doctor = parser
    add_inputs(doctor, "OpenLineage events as JSON lines (gravitino_lineage.log, a file transport's output, any dump)")
    doctor.add_argument(
        "--rules", help="a rules TOML file whose namespace resolvers count (default: the lineage.rules setting)"
    )
    doctor.add_argument(
        "--format", choices=["text", "json"], default="text", help="text for reading (default), json for tools"
    )
    doctor.set_defaults(run=cmd_doctor)


def cmd_doctor(args) -> int:
    from planlineage.cli.page_inputs import missing, nothing_given, resolve
    from planlineage.doctor import UnreadableInput, diagnose
    from planlineage.printable import visible

    if nothing_given(args):
        print(missing("doctor"), file=sys.stderr)
        return EXIT_UNREADABLE
    try:
        inputs = resolve(args)
        report = diagnose(
            inputs.files, state=args.state, rules=args.rules, events=inputs.events, sources=inputs.sources
        )
    except UnreadableInput as error:
        print(f"planlineage doctor: {visible(str(error))}", file=sys.stderr)
        return EXIT_UNREADABLE
    if args.format == "json":
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(render_text(report))
    return EXIT_SPLITS if report.splits else EXIT_NO_SPLITS


def render_text(report) -> str:
    """The report for a terminal: every line with its control characters escaped (names come from
    other producers' events and may hold escape sequences)."""
    from planlineage.doctor.explain import producer_kind
    from planlineage.printable import visible

    lines = [f"read {source}" for source in report.sources]
    count = len(report.splits)
    lines.append(f"{len(report.datasets)} dataset(s), {count} split(s)" + (":" if count else ": nothing to fix"))
    for i, split in enumerate(report.splits, 1):
        lines.append("")
        lines.append(f"split {i}: {split.reason}")
        for d in split.datasets:
            producers = ", ".join(sorted({producer_kind(p) for p in d.producers}))
            jobs = ", ".join(sorted(d.jobs)) or "-"
            lines.append(f"  {d.namespace}  {d.name}")
            lines.append(f"      producers: {producers}   jobs: {jobs}")
        lines.append(f"  fix: {split.fix}")
    return "\n".join(visible(line) for line in lines)
