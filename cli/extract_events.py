"""`extract --events FILE` and `extract --send`: the START events `submit` would queue for each
script's job (planlineage.script_events), appended to a file as the `file` transport writes them
and/or sent through the configured transport by way of the outbox."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from planlineage.errors import ExitCode, InputError

#: How long `extract --send` delivers before it leaves the rest in the outbox and says so.
SEND_SECONDS = 10.0


class EventReporter:
    """`--events FILE` and `--send`: the START events `submit` would queue for each script's job
    (planlineage.script_events), appended to a file and/or sent through the configured transport
    by way of the outbox. An explicit command: what cannot be done is said, with an exit code."""

    def __init__(self, args, many: bool) -> None:
        from planlineage.settings import Settings

        if many and args.job_name:
            raise InputError(
                "--job-name names one job; with several scripts each job is named by its script's "
                "SET 'pipeline.name', else by its file's stem."
            )
        self.args = args
        self.settings = Settings()
        self.config = self.settings.config()
        if args.send and not self.config.configured:
            raise InputError(
                "--send: no lineage backend is configured, so there is nowhere to send to (nothing was sent); "
                "configure one (planlineage settings set lineage.address http://gravitino:8090) or write the "
                "events to a file with --events FILE."
            )
        self.namespace = args.job_namespace or self.config.namespace
        self.limit = self.config.limits.sql_max_bytes
        self.runs: list[tuple[str, list[dict]]] = []
        self.without_lineage: list[str] = []

    def add(self, path: str, sql: str | None, lineage) -> None:
        from planlineage.emitter.run_ids import new_run_id
        from planlineage.script_events import job_name_of, start_events

        if not lineage.has_datasets():
            self.without_lineage.append(path)  # as the lifecycle: no event without a dataset
            return
        run_id = new_run_id()
        name = job_name_of(sql, path, self.args.job_name)
        events = start_events(
            lineage, job_name=name, namespace=self.namespace, sql=sql, limit=self.limit, run_id=run_id
        )
        self.runs.append((run_id, events))

    def single(self, script: str, fmt: str, compute: Callable[[], Any]) -> int:
        """One script: its lineage as `submit` computes it (``compute``), printed in ``fmt`` as
        extract prints it, then its events written and/or sent."""
        from planlineage.render import render

        lineage = compute()
        sys.stdout.write(render(self._shown(lineage), fmt, self.args.script[0]))
        sys.stdout.flush()
        self.add(self.args.script[0], script, lineage)
        return self.finish()

    def _shown(self, lineage):
        """What the command prints: column lineage only when --columns asked for it."""
        if self.args.columns:
            return lineage
        shown = lineage.model_copy(deep=True)
        for sink in shown.sinks:
            sink.columns = None
        return shown

    def lines(self, out):
        """A stream for `extract DIR`'s JSON lines: each passes through (its column lineage left
        out unless asked for) and the lineage of each compiled script is kept for its events."""
        reporter = self

        class Lines:
            def write(self, text: str) -> int:
                from planlineage.document import JobLineage

                for line in text.splitlines(keepends=True):
                    found = json.loads(line)
                    if found.get("ok"):
                        lineage = JobLineage.model_validate(found["lineage"])
                        reporter.add(found["script"], _script_text(found["script"]), lineage)
                        found["lineage"] = reporter._shown(lineage).to_json_dict()
                    out.write(json.dumps(found) + "\n")
                return len(text)

            def flush(self) -> None:
                out.flush()

        return Lines()

    def finish(self) -> int:
        from planlineage.printable import visible

        for path in self.without_lineage:
            print(
                f"planlineage: {visible(path)} writes no table planlineage can name: no event for it.", file=sys.stderr
            )
        events = [event for _, built in self.runs for event in built]
        if not events:
            print("planlineage: no event to write or send.", file=sys.stderr)
            return ExitCode.OK
        jobs = f"{len(events)} event(s) of {len(self.runs)} job(s)"
        if self.args.events:
            from planlineage.script_events import append_events

            append_events(self.args.events, events)
            print(f"planlineage: appended {jobs} to {visible(self.args.events)}", file=sys.stderr)
        if not self.args.send:
            return ExitCode.OK
        from planlineage.script_events import send_events

        delivered, waiting = send_events(self.runs, self.settings, SEND_SECONDS)
        kind = self.config.transport
        if waiting:
            print(
                f"planlineage: --send: {len(events)} event(s) queued, {delivered} delivered through the {kind} "
                f"transport; {waiting} wait in the outbox (the backend did not take them within {SEND_SECONDS:.0f} s): "
                "`planlineage flush` delivers them later, `planlineage store status` shows why they wait.",
                file=sys.stderr,
            )
            return ExitCode.ENVIRONMENT
        print(f"planlineage: sent {jobs} through the {kind} transport", file=sys.stderr)
        return ExitCode.OK


def _script_text(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
