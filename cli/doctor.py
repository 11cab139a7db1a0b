"""`planlineage doctor`: argument parsing and rendering of the split report (planlineage.doctor),
and with `--jobmanager URL` the jobs a Flink JobManager runs that no producer reported lineage for
(planlineage.doctor.blind_spots; loaded only then, so `doctor` costs what it did)."""

from __future__ import annotations

import json
import sys

from planlineage.errors import ExitCode

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def duration(text: str) -> int:
    """Seconds from `90`, `90s`, `10m`, `24h` or `7d`."""
    import argparse

    value = text.strip().lower()
    unit = _UNITS.get(value[-1:])
    number = value[:-1] if unit else value
    try:
        seconds = float(number) * (unit or 1)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a duration: seconds, or a number with s, m, h or d"
        ) from None
    if seconds < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a duration is not negative")
    return int(seconds)


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
    doctor.add_argument(
        "--jobmanager",
        metavar="URL",
        help="list the jobs this Flink JobManager runs that nothing reported lineage for (its REST address, "
        "e.g. http://jobmanager:8081), matched against --events and --state",
    )
    doctor.add_argument(
        "--finished-within",
        metavar="DURATION",
        type=duration,
        default=None,
        help="with --jobmanager: also the jobs that ended this recently (e.g. 24h; default: running jobs only)",
    )
    doctor.add_argument(
        "--match-window",
        metavar="DURATION",
        type=duration,
        default=None,
        help="with --jobmanager: how far a reported run's start may be from the job's to match on its name "
        "(default 10m)",
    )
    doctor.set_defaults(run=cmd_doctor)


def cmd_doctor(args) -> int:
    from planlineage.cli.page_inputs import missing, nothing_given, resolve
    from planlineage.doctor import diagnose
    from planlineage.errors import UnreadableInput
    from planlineage.printable import visible

    if args.jobmanager:
        return cmd_blind_spots(args)
    if args.finished_within is not None or args.match_window is not None:
        print("planlineage doctor: --finished-within and --match-window go with --jobmanager URL", file=sys.stderr)
        return ExitCode.INPUT
    if nothing_given(args):
        print(missing("doctor"), file=sys.stderr)
        return ExitCode.INPUT
    try:
        inputs = resolve(args)
        report = diagnose(
            inputs.files, state=args.state, rules=args.rules, events=inputs.events, sources=inputs.sources
        )
    except UnreadableInput as error:
        print(f"planlineage doctor: {visible(str(error))}", file=sys.stderr)
        return ExitCode.INPUT
    if args.format == "json":
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(render_text(report))
    return ExitCode.SPLITS if report.splits else ExitCode.OK


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


def cmd_blind_spots(args) -> int:
    """`doctor --jobmanager URL`: what the JobManager runs against what was reported (event files,
    the state store); the report as a table or JSON."""
    from pathlib import Path

    from planlineage.doctor.blind_spots import DEFAULT_WINDOW_SECONDS, find
    from planlineage.doctor.inputs import EVENTS, kind_of
    from planlineage.doctor.jobmanager import list_jobs, shown
    from planlineage.doctor.reported import Reported, read_event_files, read_state
    from planlineage.errors import UnreadableInput
    from planlineage.printable import visible

    if not args.events and not args.inputs and not args.state:
        print(
            "planlineage doctor --jobmanager: give what was reported to match its jobs against: "
            "event files (--events FILE…, e.g. gravitino_lineage.log or openlineage-flink's file transport) "
            "and/or --state (the runs planlineage recorded)",
            file=sys.stderr,
        )
        return ExitCode.INPUT
    try:
        files = list(args.events)
        for name in args.inputs:
            if Path(name).is_dir() or kind_of(Path(name)) != EVENTS:
                raise UnreadableInput(
                    f"{name} holds no OpenLineage events: --jobmanager matches jobs against what was reported "
                    "(event files, --state), not against scripts or extract's output"
                )
            files.append(name)
        jobs = list_jobs(args.jobmanager)  # first: a JobManager that is away is said before any log is read
        reported = Reported()
        read_event_files(files, reported)
        if args.state:
            read_state(reported)
    except UnreadableInput as error:
        print(f"planlineage doctor: {visible(str(error))}", file=sys.stderr)
        return ExitCode.INPUT
    window = args.match_window if args.match_window is not None else DEFAULT_WINDOW_SECONDS
    findings = find(
        jobs, reported, jobmanager=shown(args.jobmanager), window_seconds=window, finished_within=args.finished_within
    )
    if args.format == "json":
        print(json.dumps(findings.to_json(), indent=2))
    else:
        print(render_blind_spots(findings))
    return ExitCode.BLIND_SPOTS if findings.blind_spots else ExitCode.OK


def _spoken(seconds: int) -> str:
    """A duration as it is given: `24h`, `90m`, `45s`."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def render_blind_spots(findings) -> str:
    """The unreported jobs as a table: job id, name, state, started, why unmatched (names escaped:
    a job's name is whatever its submitter set)."""
    from planlineage.doctor.blind_spots import format_millis
    from planlineage.printable import visible

    lines = [f"read {source}" for source in findings.sources]
    ended = f", and the ones ended in the last {_spoken(findings.finished_within)}" if findings.finished_within else ""
    count = len(findings.blind_spots)
    lines.append(
        f"JobManager {findings.jobmanager}: {findings.jobs_listed} job(s) listed, {len(findings.checked)} checked "
        f"(running{ended}), {len(findings.matched)} reported, {count} without lineage"
        + (":" if count else ": no blind spot")
    )
    if count:
        rows = [["JOB ID", "NAME", "STATE", "STARTED", "WHY UNMATCHED"]]
        rows += [
            [b.job.job_id, b.job.name, b.job.state, format_millis(b.job.start_ms) or "-", b.why]
            for b in findings.blind_spots
        ]
        rows = [[visible(cell) for cell in row] for row in rows]
        widths = [max(len(row[i]) for row in rows) for i in range(4)]
        lines.append("")
        lines += ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:4])) + "  " + row[4] for row in rows]
    return "\n".join(visible(line) for line in lines)
