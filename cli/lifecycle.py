"""The commands a submission platform calls around each job: submit, state, flush, outbox (and the
internal ``_compile-service``; ``settings`` and the conf commands have their own modules).

Promises (docs/lifecycle.md):

* Nothing until configured: without ``lineage.address`` (or another configured transport), or
  without ``--lineage-enable``, ``submit``/``state``/``flush``/``spark-conf``/``flink-conf`` exit
  0, send nothing and write nothing; the conf commands echo their input byte for byte.
* Fail-open: every lifecycle command exits 0 whatever happens to lineage (one line on stderr).
* ``submit`` stays off the platform's critical path: it records the pending run with one SQLite
  transaction (the emitter loads openlineage-python and the models only when events are built),
  queues a job file and leaves the compile and the delivery to the compile service
  (:mod:`planlineage.lifecycle.runner`, :mod:`planlineage.lifecycle.compile_service`).
* ``submit`` and ``state`` are what a platform runs for every job, often many at once: this module
  imports nothing at its top but the standard library, each command loads what it uses, and
  neither loads the event models, an HTTP client or the compile service's own code.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys

from planlineage.cli.messages import say_notices, warn
from planlineage.errors import ExitCode, StoreError

#: Bounds (seconds) of the commands that deliver inline, counted from the process's start
#: (interpreter start-up, imports and recovery included): delivery gets what is left.
STATE_FLUSH_SECONDS = 3.0
FLUSH_SECONDS = 10.0
#: Kept back from a bound for settling the last send, handing over and leaving the interpreter.
EXIT_MARGIN_SECONDS = 0.5


def seconds_since_start() -> float:
    """How long this process has existed (its start time from /proc; 0 where unknown)."""
    try:
        with open("/proc/self/stat", "rb") as handle:
            ticks = int(handle.read().rsplit(b")", 1)[1].split()[19])
        with open("/proc/uptime", "rb") as handle:
            uptime = float(handle.read().split()[0])
        return max(0.0, uptime - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


def time_left(bound: float) -> float:
    return bound - seconds_since_start() - EXIT_MARGIN_SECONDS


# -- lifecycle --------------------------------------------------------------------------------


def _redact_logs(logging) -> None:
    """What lifecycle commands log to stderr is redacted (the redaction module loads only when a
    record is written: the submission's path does not pay for it)."""

    class Redacted(logging.Filter):
        def filter(self, record) -> bool:
            from planlineage.registry.secrets import RedactingFilter

            return RedactingFilter().filter(record)

    for handler in logging.getLogger().handlers:
        if not any(type(f).__name__ == "Redacted" for f in handler.filters):
            handler.addFilter(Redacted())


def _fail_open(fn):
    """A lifecycle command: notices said, logs redacted, :func:`~planlineage.lifecycle.fail_open.fail_open`,
    always exit 0."""
    what = f"lineage {fn.__name__.removeprefix('cmd_').replace('_', '-')}"

    @functools.wraps(fn)
    def run(args) -> int:
        from planlineage import lazylog
        from planlineage.lifecycle.fail_open import fail_open

        lazylog.on_load(_redact_logs)  # when logging loads, if it does
        say_notices()
        fail_open(what)(fn)(args)
        return ExitCode.OK

    return run


@_fail_open
def cmd_submit(args) -> None:
    if not args.lineage_enable:
        return
    from planlineage.lifecycle import spool
    from planlineage.settings import Settings
    from planlineage.store import open_store

    store = open_store()
    settings = Settings(store)
    outage: StoreError | None
    config = None  # the settings, read once for the whole submission
    try:
        config = settings.config()
        configured = config.configured
    except StoreError as away:
        # The shared store cannot be reached (a restart, a failover): a node that has seen lineage
        # on keeps the submission in its spool (runner.submit_job), recorded once the store is back.
        if not store.shared or not spool.was_configured(store):
            raise
        configured, outage = True, away
    else:
        outage = None
        spool.remember_configured(store, configured)
    if not configured:
        _say_not_configured(config)  # and nothing else: no run, no file, no home
        return
    from planlineage import script_size
    from planlineage.lifecycle import runner

    error = None
    sql = None
    try:
        sql = _read_sql(args.sql_file, _script_limit(config, script_size))
    except script_size.ScriptTooLarge as problem:  # said at once, without reading or splitting it
        error = f"the SQL file {args.sql_file} is not analysed: {problem}"
    except OSError as problem:
        error = f"cannot read the SQL file {args.sql_file}: {problem.strerror or type(problem).__name__}"
    except ValueError as problem:  # ScriptError: not UTF-8 text, unterminated string...
        error = f"the SQL file {args.sql_file} cannot be read: {problem}"
    jars = [os.path.abspath(j) for j in args.jar]
    missing = [j for j in jars if not os.path.isfile(j)]
    if error is None and missing:
        error = f"jar {missing[0]} does not exist"
    if error is None and sql is not None:
        # Nothing to compile: events without datasets would wipe the job's edges in the graph.
        error = _nothing_to_report(sql)
    run_id = runner.submit_job(
        store,
        settings,
        app_id=args.app_id,
        job_name=args.job_name,
        sql=None if error else sql,
        flink_version=args.flink_version,
        jars=jars,
        error=error,
        engine=args.engine,  # Spark SQL (issue 14): extracted with planlineage.spark
        spark_version=args.spark_version,
        store_away=outage,
        flink_job_id=args.flink_job_id,
        start_time_millis=args.flink_start_time,
    )
    if run_id is not None and error:
        warn(f"no lineage for application {args.app_id}: {error}")


def _say_not_configured(config) -> None:
    """`submit --lineage-enable` without a place to send events: one line, so that a platform
    that asked for lineage learns why none comes (nothing is recorded or written)."""
    print(f"planlineage: nothing is recorded for this job: {config.why_off()}", file=sys.stderr)


def _script_limit(config, script_size) -> int:
    """The script size cap; its default while the shared store is away (``config`` None: the
    submission is kept in the spool all the same, and the compile service checks the cap again)."""
    return script_size.max_bytes(None) if config is None else config.limits.script_max_bytes


def _read_sql(path: str, limit: int) -> str:
    from planlineage import script, script_size

    with open(path, "rb") as handle:
        return script.decode(script_size.read_capped(handle, limit))


def _nothing_to_report(sql: str) -> str | None:
    """Why a script certainly writes no table (empty, or queries only), else None (the compile
    decides: a script that cannot even be split gets Flink's own reason)."""
    from planlineage import script

    try:
        statements = script.split(sql)
    except script.ScriptError:
        return None
    if not statements:
        return "the SQL file is empty: nothing is reported for this run"
    kinds = {statement.kind for statement in statements}
    if not kinds & script.SINKS and kinds & {script.Kind.QUERY, script.Kind.INSPECT}:
        return "the SQL has no INSERT (SELECT only?): nothing is reported for this run"
    return None


def _configured_store(bound: float | None = None):
    from planlineage.settings import Settings
    from planlineage.store import open_store

    # Waiting for another process's write lock (or a connection) counts against the command's bound too.
    store = open_store(wait=None if bound is None else max(0.5, min(5.0, time_left(bound))))
    if not store.exists():
        return store, False
    configured = Settings(store).configured()
    from planlineage.lifecycle import spool

    spool.remember_configured(store, configured)  # shared store: a submission while it is away is kept
    return store, configured


def _recovered_store(bound: float):
    """The store when lineage is configured, after restarting compiles whose compile service died; None
    when not configured."""
    store, configured = _configured_store(bound)
    if not configured:
        return None
    from planlineage.lifecycle import service_start

    service_start.recover(store)  # jobs wait and no service runs (it was killed): restart it
    return store


@_fail_open
def cmd_state(args) -> None:
    from planlineage.lifecycle import runs

    try:
        store = _recovered_store(STATE_FLUSH_SECONDS)
    except StoreError as error:
        from planlineage.store import open_store

        store = open_store()  # no connection made: only which store this node uses
        if not store.shared:
            raise
        # The shared store is unreachable (restart, network): record_state keeps the report in this
        # node's spool; the next state/flush here (or its compile service) records it with its
        # original time. Nothing is lost, nothing waits.
        if runs.record_state(store, args.app_id, args.state, args.error) != runs.DROPPED:
            warn(f"lineage state of {args.app_id} kept on this node until the store is back ({error})")
        return
    if store is None:
        return
    if runs.record_state(store, args.app_id, args.state, args.error) is not None:
        # Recorded; the compile service turns it into events and delivers them (building events
        # here would cost every state report ~0.4 s of CPU for the models, on the caller's path).
        from planlineage.lifecycle import service_start

        service_start.recover(store, undelivered=True)


def _hand_over(store, report) -> None:
    """Events this command could not deliver within its bound go with the compile service."""
    if report is None or report.remaining:
        from planlineage.emitter import outbox
        from planlineage.lifecycle import service_start

        if report is not None or outbox.count_pending(store):
            service_start.recover(store, undelivered=True)


@_fail_open
def cmd_flush(args) -> None:
    from planlineage.lifecycle import delivery
    from planlineage.settings import Settings

    store = _recovered_store(args.timeout)
    if store is None:
        return
    report = delivery.flush(store, Settings(store), deadline_seconds=max(0.05, time_left(args.timeout)))
    _hand_over(store, report)
    note = _compiling_note(store)
    if report is not None and args.verbose:
        print(
            f"delivered {report.delivered}, parked {report.parked_total}, pending {report.remaining}", file=sys.stderr
        )
        if _print_outbox(store, None, sys.stderr) == 0:
            print(_nothing_waiting(note), file=sys.stderr)
    elif note:
        print(f"planlineage: {note}", file=sys.stderr)


def _compiling_note(store) -> str | None:
    """What a command that finds no event says about runs whose events are still to come."""
    from planlineage.lifecycle import runs

    count = runs.count_compiling(store)
    if not count:
        return None
    return (
        f"{count} run(s) still compiling: their lineage events follow once the compile is done "
        "(the compile service delivers them; planlineage store status shows them as COMPILING)"
    )


def _nothing_waiting(note: str | None) -> str:
    return "no lineage events are waiting" + (f"; {note}" if note else "")


def _print_outbox(store, run_id: str | None, out, backend: str | None = None) -> int:
    from planlineage.emitter import outbox
    from planlineage.emitter.transports.base import short

    rows = outbox.listing(store, run_id, backend)
    for row in rows:
        state = row["state"] + (f" {row['wait']:g} s" if row["state"] == "waiting" else "")
        error = f"  {short(row['last_error'], 160)}" if row["last_error"] else ""
        # a composite transport's backend the row waits for ('' before it is fanned out: all of them)
        to = f"  -> {row['backend']}" if row["backend"] else ""
        print(
            f"{row['run_id']}  {row['event_type']:<8} {row['job_name']}{to}  {state}, "
            f"{row['attempts']} attempt(s){error}",
            file=out,
        )
    return len(rows)


@_fail_open
def cmd_outbox(args) -> None:
    store, configured = _configured_store()
    if not store.exists():
        if args.outbox_command == "list":
            print("no lineage events are waiting", file=sys.stderr)
        return
    from planlineage.emitter import outbox
    from planlineage.lifecycle import delivery
    from planlineage.settings import Settings

    if args.outbox_command == "list":
        if _print_outbox(store, args.run_id, sys.stdout, args.backend) == 0:
            print(_nothing_waiting(None if args.run_id or args.backend else _compiling_note(store)), file=sys.stderr)
        return
    count = outbox.retry(store, args.run_id, args.backend)
    print(f"{count} lineage event(s) put back in line", file=sys.stderr)
    if configured and count:
        report = delivery.flush(store, Settings(store), deadline_seconds=args.timeout)
        if report is not None:
            print(outbox.describe(report), file=sys.stderr)


def cmd_compile_service(args) -> int:
    from planlineage.lifecycle import service_start

    service_start.lower_priority()  # before the service loads anything: all of it yields to the platform
    from planlineage.lifecycle import compile_service

    return compile_service.main(args.home, lock_fd=args.lock_fd)


def _flink_job_id(text: str) -> str:
    job = text.strip().lower()
    if len(job) != 32 or any(c not in "0123456789abcdef" for c in job):
        raise argparse.ArgumentTypeError(f"a Flink JobID is 32 hex digits (as Flink's REST API shows it), not {text!r}")
    return job


def _millis(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(
            f"a start time is milliseconds since the epoch (e.g. 1796026542123), not {text!r}"
        )
    return value


def configure(name: str, parser) -> None:
    """The arguments of ``submit``, ``state``, ``flush``, ``outbox`` or ``_compile-service``."""
    if name == "submit":
        parser.add_argument(
            "--app-id", required=True, help="the platform's id of the application: `state` names the run by it"
        )
        parser.add_argument("--job-name", required=True, help="the OpenLineage job name of the application")
        parser.add_argument(
            "--flink-version", default=None, help="the job's Flink version (1.20 or 1.20.5; default 1.20)"
        )
        parser.add_argument("--sql-file", required=True, help="the file of the job's SQL script")
        parser.add_argument(
            "--jar",
            action="append",
            default=[],
            metavar="JAR",
            help="a connector, format, catalog or UDF jar the job uses (repeat it); what none provides is stood in",
        )
        from planlineage import engines  # the picker's names: `submit` asks the job's engine anyway

        parser.add_argument("--engine", choices=engines.NAMES, default=engines.DEFAULT, help="whose SQL the job is")
        parser.add_argument("--spark-version", default=None, help="with --engine spark: 3.5 or 4.0")
        parser.add_argument(
            "--lineage-enable",
            action="store_true",
            help="report this job (the platform's per-job switch; without it nothing is recorded)",
        )
        parser.add_argument(
            "--flink-job-id",
            type=_flink_job_id,
            default=None,
            help="the Flink JobID, when the job has one already: with --flink-start-time, the run id "
            "openlineage-flink's detached listener derives, shared with it",
        )
        parser.add_argument(
            "--flink-start-time",
            type=_millis,
            default=None,
            help="the job's start time, milliseconds since the epoch (Flink's REST start-time)",
        )
        parser.set_defaults(run=cmd_submit)
    elif name == "state":
        parser.add_argument("--app-id", required=True, help="the application, as given to `submit`")
        parser.add_argument(
            "--state",
            required=True,
            help="the platform's state (RUNNING, FINISHED, FAILED, CANCELED, ...): see docs/lifecycle.md",
        )
        parser.add_argument("--error", default=None, help="with a failure: its message (the errorMessage facet)")
        parser.set_defaults(run=cmd_state)
    elif name == "flush":
        parser.add_argument("--timeout", type=float, default=FLUSH_SECONDS, help="seconds (default 10)")
        parser.add_argument("--verbose", action="store_true", help="say what was delivered and what is kept")
        parser.set_defaults(run=cmd_flush)
    elif name == "outbox":
        commands = parser.add_subparsers(dest="outbox_command", required=True)
        listing = commands.add_parser("list", help="every undelivered event: due, waiting (backoff) or parked")
        listing.add_argument("--run", dest="run_id", default=None, help="only this runId")
        backend_help = "only those for this transport of a composite (its name)"
        listing.add_argument("--backend", default=None, help=backend_help)
        retry = commands.add_parser("retry", help="put parked events back in line and deliver")
        retry.add_argument("--run", dest="run_id", default=None, help="only this runId")
        retry.add_argument("--backend", default=None, help=backend_help)
        retry.add_argument("--timeout", type=float, default=FLUSH_SECONDS, help="seconds (default 10)")
        parser.set_defaults(run=cmd_outbox)
    else:  # _compile-service (internal)
        parser.add_argument("--home", required=True)
        parser.add_argument("--lock-fd", type=int, default=None)  # the service's lock, taken by its starter
        parser.set_defaults(run=cmd_compile_service)
