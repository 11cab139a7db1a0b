"""`planlineage extract` and `planlineage identity`: what a script's tables, or one table's
connector options, name (argument parsing and rendering; the work is planlineage.pipeline and
planlineage.registry)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from planlineage import engines
from planlineage.errors import ExitCode, InputError


def _read_script(path: str) -> str:
    """The text of the script file (``-``: stdin), read as bytes under the size cap: an ExtractError
    naming the line when it is not UTF-8 text, or saying the cap when it is over it, unread."""
    from planlineage import script as sql_script
    from planlineage import script_size
    from planlineage.errors import ExtractError, ScriptError, ScriptTooLarge

    try:
        limit = script_size.max_bytes()
        if path == "-":
            data = script_size.read_capped(sys.stdin.buffer, limit)
        else:
            with open(path, "rb") as handle:
                data = script_size.read_capped(handle, limit)
        return sql_script.decode(data)
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror}.") from None
    except ScriptTooLarge as error:
        raise ExtractError(f"{path} is not analysed: {error}") from None
    except ScriptError as error:
        raise ExtractError(f"{path} cannot be read: {error}", error.line) from None


def _identity_config(args):
    from planlineage.registry import load_config

    return load_config(
        getattr(args, "rules", None),
        profile=getattr(args, "profile", None) or "openlineage",
        metalake=getattr(args, "metalake", None),
    )


def _terminated(signum, frame) -> None:
    """SIGTERM unwinds like Ctrl-C: the planner JVM this command started is stopped with it."""
    raise SystemExit(ExitCode.TERMINATED)  # the handler is SIGTERM's only: 128 + its number


def cmd_extract(args) -> int:
    import signal

    from planlineage import lazylog

    signal.signal(signal.SIGTERM, _terminated)
    many = len(args.script) > 1 or Path(args.script[0]).is_dir()
    engine = engines.get(args.engine)
    reporter = None
    if args.events or args.send:
        from planlineage.cli.extract_events import EventReporter

        reporter = EventReporter(args, many)
    if many:
        lazylog.load()
        if not engine.many_scripts:
            raise InputError(f"--engine {engine.name} extracts one script at a time; pass a single file.")
        return cmd_backfill(args, reporter)
    script = _read_script(args.script[0])
    no_lineage = _no_lineage(args, script)
    fmt = args.format or ("table" if sys.stdout.isatty() else "json")
    if reporter is not None:
        lazylog.load()
        return _said(no_lineage, reporter.single(script, fmt, lambda: _events_lineage(args, script)))
    head_start = None
    if engine.warm_planner:
        output = _from_warm_planner(args, script, fmt)
        if output is not None:
            sys.stdout.write(output)
            return _said(no_lineage, ExitCode.OK)
        head_start = _head_start(args.flink_version)
    lazylog.load()  # the work is done here: its modules log through logging, set up first
    try:
        return _said(no_lineage, _extract_here(args, script, fmt, head_start))
    finally:
        if head_start is not None:
            head_start.close()


def _no_lineage(args, script: str) -> str | None:
    """What to say of a script that writes no table (it has no lineage: the command's output
    lists no sink, exit 0); None for one that does. A script without any statement is not
    analysed: an InputError (exit 2), since the file is most likely not the one meant (an
    unsupported --flink-version is said first, as for any script)."""
    from planlineage import script as sql_script

    path = args.script[0]
    try:
        statements = sql_script.split(script)
    except sql_script.ScriptError:
        return None  # the pipeline reports it with its line
    if not statements:
        engine = engines.get(args.engine)
        engine.check_version(_version(args, engine))
        raise InputError(f"{path} holds no SQL statement (it is empty or only comments): nothing to analyse.")
    kinds = {statement.kind for statement in statements}
    if kinds & (sql_script.SINKS | {sql_script.Kind.PLAN_FILE}):
        return None  # (a plan file's sinks are warned about in the output)
    return (
        f"{path} writes no table (no INSERT, STATEMENT SET or CREATE TABLE AS), so it has no lineage: "
        "the output lists no sink."
    )


def _said(note: str | None, code: int) -> int:
    """The exit code, once the note on a script without lineage is on stderr (after the output)."""
    if note:
        print(f"planlineage: {note}", file=sys.stderr)
    return code


def _head_start(flink_version: str | None):
    """The version's planner, started now on a thread while this command imports and reads
    (planner.head_start); None for a version without CompiledPlan (read from the text)."""
    from planlineage.planner.provision import without_compiled_plan

    if without_compiled_plan(flink_version):
        return None
    from planlineage.planner.head_start import HeadStart

    return HeadStart(flink_version)


def _extract_here(args, script: str, fmt: str, planner) -> int:
    from planlineage.render import render

    lineage = _lineage_here(args, script, planner, args.columns)
    sys.stdout.write(render(lineage, fmt, args.script[0]))
    return ExitCode.OK


def _lineage_here(args, script: str, planner, columns: bool):
    from planlineage.pipeline import extract

    engine = engines.get(args.engine)
    identity = _identity_config(args)
    if not engine.takes_jars and args.jar:
        takers = " and ".join(e.display_name for e in engines.every() if e.takes_jars)
        print(f"planlineage: --jar applies to {takers} only; ignored for {engine.display_name}.", file=sys.stderr)
    return extract(
        script,
        engine=engine,
        version=_version(args, engine),
        jars=_jars(args) if engine.takes_jars else [],
        conf=dict(pair.split("=", 1) for pair in args.spark_conf),
        identity=identity,
        columns=columns,
        planner=planner,
    )


def _version(args, engine) -> str | None:
    """The version the command line asks of ``engine``: its --flink-version / --spark-version,
    whose destination is the document's version field."""
    return getattr(args, engine.version_field)


#: How long the command waits for a warm planner's answer; the warm planner stops a job itself
#: after its job timeout (default 120 s) and answers with the error.
WARM_ANSWER_TIMEOUT = 300.0


def _from_warm_planner(args, script: str, fmt: str, columns: bool | None = None) -> str | None:
    """What the running warm planner of the version printed for this script (it compiles, walks,
    names and renders: this process imports none of that); None when there is none to ask or it
    cannot answer exactly as this process would, which then does the work itself. A user error
    it reports ends the command here, as it would have in this process."""
    from planlineage import errors
    from planlineage.planner import warm_client
    from planlineage.planner.versions import minor
    from planlineage.script_size import max_bytes

    try:
        jars = _jars(args)
    except InputError:
        return None  # said by this process, in the order of its own checks
    if not all(Path(jar).is_file() for jar in jars):
        return None  # the pipeline's check names the jar as the user gave it
    rules = getattr(args, "rules", None)
    answer = warm_client.extract_warm(
        minor(args.flink_version),
        {
            "script": script,
            "name": args.script[0],
            "flink_version": args.flink_version,
            "jars": [str(Path(jar).resolve()) for jar in jars],
            "rules": str(Path(rules).resolve()) if rules else None,
            "profile": getattr(args, "profile", None) or "openlineage",
            "metalake": getattr(args, "metalake", None),
            "columns": bool(args.columns if columns is None else columns),
            "format": fmt,  # type: ignore[typeddict-item]  # one of FORMATS (argparse's choices)
            "max_bytes": max_bytes(),
        },
        WARM_ANSWER_TIMEOUT,
    )
    if answer is None:
        return None
    if answer["ok"]:
        return answer["output"]
    error = answer["error"]
    kind = getattr(errors, error["kind"], None)
    if not (isinstance(kind, type) and issubclass(kind, errors.PlanlineageError)):
        return None
    if issubclass(kind, errors.ExtractError):
        raise kind(error["message"], error["line"])
    if any("__init__" in vars(c) for c in kind.__mro__ if issubclass(c, errors.PlanlineageError)):
        return None  # not built from its message alone (ScriptTooLarge): the command answers itself
    raise kind(error["message"])


def cmd_backfill(args, reporter=None) -> int:
    """Many scripts: one JSON line each on stdout; exit 0 when all compiled, 2 when any failed
    (with `--events`/`--send`: 3 when events could not be delivered)."""
    from planlineage import backfill

    scripts = backfill.collect_scripts(args.script)
    if not scripts:
        raise InputError("no .sql scripts found in " + ", ".join(args.script))
    _, failed = backfill.run(
        scripts,
        flink_version=args.flink_version,
        jars=_jars(args),
        identity=lambda: _identity_config(args),  # loaded while the planner's JVM starts
        jobs=args.jobs,
        columns=args.columns or reporter is not None,  # events carry column lineage, as submit's do
        out=reporter.lines(sys.stdout) if reporter is not None else sys.stdout,
    )
    delivered = reporter.finish() if reporter is not None else ExitCode.OK
    return ExitCode.INPUT if failed else delivered


def _events_lineage(args, script: str):
    """The script's lineage as `submit` computes it (Flink: with column lineage)."""
    from planlineage.document import JobLineage

    if not engines.get(args.engine).warm_planner:  # (columns as asked: an engine without a warm planner)
        return _lineage_here(args, script, None, args.columns)
    output = _from_warm_planner(args, script, "json", columns=True)
    if output is not None:
        return JobLineage.model_validate(json.loads(output))
    head_start = _head_start(args.flink_version)
    try:
        return _lineage_here(args, script, head_start, True)
    finally:
        if head_start is not None:
            head_start.close()


def _jars(args) -> list[str]:
    """--jar first, then the cluster's own jars (--flink-home): the precedence docs/how-it-works.md states."""
    from planlineage.planner.cluster_jars import cluster_jars

    return [*args.jar, *cluster_jars(getattr(args, "flink_home", None))]


def cmd_identity(args) -> int:
    from planlineage.registry import resolve

    try:
        options = json.loads(args.options)
        if not isinstance(options, dict) or not all(isinstance(v, str) for v in options.values()):
            raise ValueError("expected a JSON object of string options")
    except ValueError as error:
        raise InputError(f"the options are not a JSON object of strings ({error}).") from None
    resolution = resolve(options, table=args.table or "", config=_identity_config(args))
    print(
        json.dumps(
            {
                "datasets": [d.model_dump(mode="json") for d in resolution.datasets],
                "warnings": resolution.warnings,
            },
            indent=2,
        )
    )
    return ExitCode.OK


def _spark_conf_pair(text: str) -> str:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return text


def _identity_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rules", help="a TOML file of user identity rules and namespace resolvers")
    parser.add_argument("--profile", choices=["openlineage", "gravitino"], help="dataset naming convention")
    parser.add_argument("--metalake", help="Gravitino metalake (profile gravitino)")


def configure(name: str, parser: argparse.ArgumentParser) -> None:
    """The arguments of ``extract`` or ``identity`` (planlineage.cli.main names the command)."""
    if name == "identity":
        parser.add_argument("options", help='the table options as JSON, e.g. \'{"connector": "kafka", ...}\'')
        parser.add_argument("--table", help="the Flink table, catalog.database.table (for symlinks)")
        _identity_options(parser)
        parser.set_defaults(run=cmd_identity)
        return
    parser.add_argument(
        "script", nargs="+", help="the SQL file, or - for standard input; several files or a folder: one JSON line each"
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=2,
        help=(
            "jobs compiled at once for several scripts (default 2): a running warm planner of the "
            "version is one, the rest are threads of one new JVM"
        ),
    )
    parser.add_argument("--flink-version", default=None, help="e.g. 1.20 or 1.20.5 (default 1.20)")
    parser.add_argument("--jar", action="append", default=[], help="a connector, format, UDF or catalog jar")
    parser.add_argument(
        "--flink-home",
        metavar="DIR",
        help="the cluster's Flink installation: its lib/ jars and opt/ connectors are compiled with (after --jar)",
    )
    parser.add_argument(
        "--format",
        choices=["json", "table", "dot"],
        default=None,
        help="json: the lineage document (the default when piped); table: for reading; dot: Graphviz",
    )
    parser.add_argument(
        "--columns",
        action="store_true",
        help="add column lineage per sink: {sink_column: [{table, column, transformations}]}",
    )
    parser.add_argument("--engine", choices=engines.NAMES, default=engines.DEFAULT, help="whose SQL the script is")
    parser.add_argument("--spark-version", default=None, help="with --engine spark: 3.5 or 4.0 (default 3.5)")
    parser.add_argument(
        "--spark-conf",
        action="append",
        default=[],
        type=_spark_conf_pair,
        metavar="KEY=VALUE",
        help="with --engine spark: the job's Spark conf that names tables (warehouse dir, Hive metastore URIs)",
    )
    _identity_options(parser)
    events = parser.add_argument_group(
        "OpenLineage events", "the START events `submit` would send for each script's job (one job per script)"
    )
    events.add_argument(
        "--events", metavar="FILE", help="append them to FILE as JSON lines (what the file transport writes)"
    )
    events.add_argument(
        "--send",
        action="store_true",
        help="send them through the configured transport (kept in the outbox until delivered)",
    )
    events.add_argument(
        "--job-name", help="the job's name (default: the script's SET 'pipeline.name', else the file's stem)"
    )
    events.add_argument(
        "--job-namespace", metavar="NS", help="the job's namespace (default: the lineage.namespace setting)"
    )
    parser.set_defaults(run=cmd_extract)
