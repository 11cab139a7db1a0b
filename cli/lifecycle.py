"""The commands a submission platform calls: settings, submit, state, flush, spark-conf, flink-conf.

Promises (docs/lifecycle.md):

* Nothing until configured: without ``lineage.address`` (or another configured transport), or
  without ``--lineage-enable``, ``submit``/``state``/``flush``/``spark-conf``/``flink-conf`` exit
  0, send nothing and write nothing; the conf commands echo their input byte for byte.
* Fail-open: every lifecycle command exits 0 whatever happens to lineage (one line on stderr).
* ``submit`` stays off the platform's critical path: it records the pending run with one SQLite
  transaction (the emitter loads openlineage-python and the models only when events are built),
  queues a job file and leaves the compile and the delivery to the compile service
  (:mod:`planlineage.lifecycle.runner`, :mod:`planlineage.lifecycle.compile_service`).
"""

from __future__ import annotations

import functools
import logging
import os
import sys

from planlineage.emitter.store import StoreError
from planlineage.lifecycle import delivery, runs
from planlineage.settings import Settings, is_configured
from planlineage.store import open_store

EXIT_OK = 0
EXIT_USAGE = 2

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


def warn(message: str) -> None:
    """One line on stderr, redacted (a message may quote a path or a server's answer)."""
    try:
        from planlineage.registry.secrets import redact_text

        print(f"planlineage: {redact_text(' '.join(str(message).split()))}", file=sys.stderr)
    except Exception:
        pass


# -- settings ---------------------------------------------------------------------------------


def _say_notices() -> None:
    """What an earlier command had to move aside, once per command, until the user dealt with it."""
    try:
        from planlineage import home

        home.say_notices()
    except Exception:
        pass


def cmd_settings(args) -> int:
    from planlineage import home
    from planlineage.settings import SettingError, Settings, masked

    settings = Settings()
    try:
        if args.settings_command == "set":
            raw = args.value
            if raw == "-":  # from stdin: a value on the command line is readable by other local users
                raw = sys.stdin.readline().rstrip("\r\n")
            stored = settings.set(args.key, raw)
            print(f"{args.key} = {masked(args.key, stored)}")
        elif args.settings_command == "unset":
            settings.unset(args.key)
        elif args.settings_command == "get":
            value, origin = settings.source(args.key)
            if value is None:
                return 1
            print(masked(args.key, value))  # secrets and URL credentials never printed back
        else:
            for key, (value, origin) in settings.list_masked().items():
                print(f"{key:<24} {value:<40} ({origin})")
            for notice in home.notices():  # the state of the store, reported where people look
                print(f"! {notice['message']}")
                home.mark_said(notice["message"])
        _say_notices()
    except (SettingError, StoreError) as error:
        print(f"planlineage: {error}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as error:
        where = error.filename or settings.path
        print(
            f"planlineage: cannot write {where}: {error.strerror or error}; check the folder's permissions",
            file=sys.stderr,
        )
        return EXIT_USAGE
    return EXIT_OK


# -- lifecycle --------------------------------------------------------------------------------


class _Redacted(logging.Filter):
    """Redacts what lifecycle commands log to stderr (the redaction module loads only when a
    record is written: the submission's path does not pay for it)."""

    def filter(self, record: logging.LogRecord) -> bool:
        from planlineage.registry.secrets import RedactingFilter

        return RedactingFilter().filter(record)


def _fail_open(fn):
    """A lifecycle command: notices said, logs redacted, :func:`runs.fail_open`, always exit 0."""
    guarded = runs.fail_open(f"lineage {fn.__name__.removeprefix('cmd_').replace('_', '-')}")(fn)

    @functools.wraps(fn)
    def run(args) -> int:
        for handler in logging.getLogger().handlers:
            if not any(isinstance(f, _Redacted) for f in handler.filters):
                handler.addFilter(_Redacted())
        _say_notices()
        guarded(args)
        return EXIT_OK

    return run


@_fail_open
def cmd_submit(args) -> None:
    if not args.lineage_enable:
        return
    store = open_store()
    settings = Settings(store)
    if not settings.configured():
        return
    from planlineage.lifecycle import runner

    error = None
    sql = None
    try:
        sql = _read_sql(args.sql_file)
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
    )
    if run_id is not None and error:
        warn(f"no lineage for application {args.app_id}: {error}")


def _read_sql(path: str) -> str:
    from planlineage.planner import script

    with open(path, "rb") as handle:
        return script.decode(handle.read())


def _nothing_to_report(sql: str) -> str | None:
    """Why a script certainly writes no table (empty, or queries only), else None (the compile
    decides: a script that cannot even be split gets Flink's own reason)."""
    from planlineage.planner import script

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
    # Waiting for another process's write lock (or a connection) counts against the command's bound too.
    store = open_store(wait=None if bound is None else max(0.5, min(5.0, time_left(bound))))
    if not store.exists():
        return store, False
    return store, Settings(store).configured()


def _recovered_store(bound: float):
    """The store when lineage is configured, after restarting compiles whose worker died; None
    when not configured."""
    store, configured = _configured_store(bound)
    if not configured:
        return None
    from planlineage.lifecycle import compile_service

    compile_service.recover(store)  # jobs wait and no service runs (it was killed): restart it
    return store


@_fail_open
def cmd_state(args) -> None:
    try:
        store = _recovered_store(STATE_FLUSH_SECONDS)
    except StoreError as error:
        store = open_store()  # no connection made: only which store this node uses
        if not store.shared:
            raise
        # The shared store is unreachable (restart, network): record_state keeps the report in this
        # node's spool; the next state/flush here (or its compile service) records it with its
        # original time. Nothing is lost, nothing waits.
        runs.record_state(store, args.app_id, args.state, args.error)
        warn(f"lineage state of {args.app_id} kept on this node until the store is back ({error})")
        return
    if store is None:
        return
    if runs.record_state(store, args.app_id, args.state, args.error) is not None:
        # Recorded; the compile service turns it into events and delivers them (building events
        # here would cost every state report ~0.4 s of CPU for the models, on the caller's path).
        from planlineage.lifecycle import compile_service

        compile_service.recover(store, undelivered=True)


def _hand_over(store, report) -> None:
    """Events this command could not deliver within its bound go with the compile service."""
    if report is None or report.remaining:
        from planlineage.emitter import outbox
        from planlineage.lifecycle import compile_service

        if report is not None or outbox.count_pending(store):
            compile_service.recover(store, undelivered=True)


@_fail_open
def cmd_flush(args) -> None:
    store = _recovered_store(args.timeout)
    if store is None:
        return
    report = delivery.flush(store, Settings(store), deadline_seconds=max(0.05, time_left(args.timeout)))
    _hand_over(store, report)
    if report is not None and args.verbose:
        print(
            f"delivered {report.delivered}, parked {report.parked_total}, pending {report.remaining}", file=sys.stderr
        )
        _print_outbox(store, None, sys.stderr)


def _print_outbox(store, run_id: str | None, out) -> int:
    from planlineage.emitter import outbox
    from planlineage.emitter.transports.base import short

    rows = outbox.listing(store, run_id)
    for row in rows:
        state = row["state"] + (f" {row['wait']:g} s" if row["state"] == "waiting" else "")
        error = f"  {short(row['last_error'], 160)}" if row["last_error"] else ""
        print(
            f"{row['run_id']}  {row['event_type']:<8} {row['job_name']}  {state}, {row['attempts']} attempt(s){error}",
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

    if args.outbox_command == "list":
        if _print_outbox(store, args.run_id, sys.stdout) == 0:
            print("no lineage events are waiting", file=sys.stderr)
        return
    count = outbox.retry(store, args.run_id)
    print(f"{count} lineage event(s) put back in line", file=sys.stderr)
    if configured and count:
        report = delivery.flush(store, Settings(store), deadline_seconds=args.timeout)
        if report is not None:
            print(outbox.describe(report), file=sys.stderr)


def _conf(args, merge) -> int:
    data = b""
    _say_notices()
    try:
        data = sys.stdin.buffer.read()
        out = data
        if args.lineage_enable:
            values = Settings().list()
            if is_configured(values):
                out = merge(data, values, args)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # fail-open: the platform gets its own configuration back
        warn(f"lineage {args.command} skipped: {type(error).__name__}")
        out = data
    sys.stdout.buffer.write(out)
    sys.stdout.buffer.flush()
    return EXIT_OK


def cmd_spark_conf(args) -> int:
    from planlineage.lifecycle import listener_conf

    return _conf(
        args,
        lambda data, values, a: listener_conf.merge_bytes(
            data, listener_conf.spark_entries, values, warn=warn, default_style="="
        ),
    )


def cmd_flink_conf(args) -> int:
    from planlineage.lifecycle import listener_conf

    def entries(values, existing, w):
        return listener_conf.flink_entries(values, args.flink_version, existing, w)

    return _conf(
        args, lambda data, values, a: listener_conf.merge_bytes(data, entries, values, warn=warn, default_style=":")
    )


def cmd_compile_service(args) -> int:
    from planlineage.lifecycle import compile_service

    return compile_service.main(args.home)


def add_commands(commands) -> None:
    """Registers the lifecycle subcommands on the `planlineage` parser."""
    settings = commands.add_parser("settings", help="lineage settings (address, token, namespace, ...)")
    settings_commands = settings.add_subparsers(dest="settings_command", required=True)
    set_ = settings_commands.add_parser("set", help="store a setting")
    set_.add_argument("key")
    set_.add_argument("value", help="the value; - reads it from stdin (use this for lineage.token)")
    get = settings_commands.add_parser("get", help="print a setting (secrets masked)")
    get.add_argument("key")
    unset = settings_commands.add_parser("unset", help="remove a stored setting")
    unset.add_argument("key")
    settings_commands.add_parser("list", help="every setting, its value (secrets masked) and origin")
    settings.set_defaults(run=cmd_settings)

    submit = commands.add_parser("submit", help="a platform submits a Flink SQL job: record a run, emit START")
    submit.add_argument("--app-id", required=True)
    submit.add_argument("--job-name", required=True)
    submit.add_argument("--flink-version", default=None)
    submit.add_argument("--sql-file", required=True)
    submit.add_argument("--jar", action="append", default=[])
    submit.add_argument("--engine", choices=["flink", "spark"], default="flink", help="whose SQL the job is")
    submit.add_argument("--spark-version", default=None, help="with --engine spark: 3.5 or 4.0")
    submit.add_argument("--lineage-enable", action="store_true")
    submit.set_defaults(run=cmd_submit)

    state = commands.add_parser("state", help="a platform reports an application state")
    state.add_argument("--app-id", required=True)
    state.add_argument("--state", required=True)
    state.add_argument("--error", default=None)
    state.set_defaults(run=cmd_state)

    flush = commands.add_parser("flush", help="deliver the pending lineage events")
    flush.add_argument("--timeout", type=float, default=FLUSH_SECONDS, help="seconds (default 10)")
    flush.add_argument("--verbose", action="store_true")
    flush.set_defaults(run=cmd_flush)

    box = commands.add_parser("outbox", help="lineage events not delivered yet: list them, retry parked ones")
    box_commands = box.add_subparsers(dest="outbox_command", required=True)
    box_list = box_commands.add_parser("list", help="every undelivered event: due, waiting (backoff) or parked")
    box_list.add_argument("--run", dest="run_id", default=None, help="only this runId")
    box_retry = box_commands.add_parser("retry", help="put parked events back in line and deliver")
    box_retry.add_argument("--run", dest="run_id", default=None, help="only this runId")
    box_retry.add_argument("--timeout", type=float, default=FLUSH_SECONDS, help="seconds (default 10)")
    box.set_defaults(run=cmd_outbox)

    spark = commands.add_parser(
        "spark-conf", help="add the OpenLineage Spark listener to app properties (stdin -> stdout)"
    )
    spark.add_argument("--app-id", default=None)
    spark.add_argument("--lineage-enable", action="store_true")
    spark.set_defaults(run=cmd_spark_conf)

    flink = commands.add_parser(
        "flink-conf", help="add the OpenLineage Flink listener to a Flink configuration (stdin -> stdout)"
    )
    flink.add_argument("--flink-version", required=True)
    flink.add_argument("--app-id", default=None)
    flink.add_argument("--lineage-enable", action="store_true")
    flink.set_defaults(run=cmd_flink_conf)

    hidden = commands.add_parser("_compile-service")  # internal: no help, so not listed
    hidden.add_argument("--home", required=True)
    hidden.set_defaults(run=cmd_compile_service)
