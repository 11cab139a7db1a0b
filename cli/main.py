"""The `planlineage` command line."""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import sys
from pathlib import Path

from planlineage import __version__
from planlineage.errors import EXIT_INPUT, InputError, PlanlineageError

EXIT_OK = 0

log = logging.getLogger("planlineage")


def _read_script(path: str) -> str:
    from planlineage.pipeline import read_script  # bytes in: undecodable input is an ExtractError

    try:
        return read_script(path)
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror}.") from None


def _identity_config(args):
    from planlineage.registry import load_config

    return load_config(
        getattr(args, "rules", None),
        profile=getattr(args, "profile", None) or "openlineage",
        metalake=getattr(args, "metalake", None),
    )


def cmd_extract(args) -> int:
    from planlineage.pipeline import extract

    if len(args.script) > 1 or Path(args.script[0]).is_dir():
        if args.engine == "spark":
            raise InputError("--engine spark extracts one script at a time; pass a single file.")
        return cmd_backfill(args)
    script = _read_script(args.script[0])
    identity = _identity_config(args)
    if args.engine == "spark":
        from planlineage.spark import extract as spark_extract

        if args.jar:
            print("planlineage: --jar applies to Flink only; ignored for Spark.", file=sys.stderr)

        conf = dict(pair.split("=", 1) for pair in args.spark_conf)
        lineage = spark_extract(
            script, spark_version=args.spark_version, identity=identity, conf=conf, columns=args.columns
        )
    else:
        lineage = extract(
            script, flink_version=args.flink_version, jars=_jars(args), identity=identity, columns=args.columns
        )
    fmt = args.format or ("table" if sys.stdout.isatty() else "json")
    if fmt == "json":
        print(json.dumps(lineage.to_json_dict(), indent=2))
    elif fmt == "dot":
        from planlineage.graph import script_dot

        print(script_dot(lineage, args.script[0]), end="")
    else:
        print(render_table(lineage))
    return EXIT_OK


def cmd_backfill(args) -> int:
    """Many scripts: one JSON line each on stdout; exit 0 when all compiled, 2 when any failed."""
    from planlineage import backfill

    scripts = backfill.collect_scripts(args.script)
    if not scripts:
        raise InputError("no .sql scripts found in " + ", ".join(args.script))
    _, failed = backfill.run(
        scripts,
        flink_version=args.flink_version,
        jars=_jars(args),
        identity=_identity_config(args),
        jobs=args.jobs,
        columns=args.columns,
    )
    return EXIT_INPUT if failed else EXIT_OK


def _jars(args) -> list[str]:
    """--jar first, then the cluster's own jars (--flink-home): the precedence the README states."""
    from planlineage.planner.cluster_jars import cluster_jars

    return [*args.jar, *cluster_jars(getattr(args, "flink_home", None))]


def cmd_planner(args) -> int:
    from planlineage.planner import warm

    limits = warm.Limits(job_timeout=args.job_timeout, max_jobs=args.max_jobs, max_rss_mb=args.max_rss_mb)
    if args.planner_command == "serve":
        return warm.serve(args.flink_version, limits, args.idle_timeout)
    if args.planner_command == "start":
        for version in args.flink_version_list or [None]:
            info = warm.start(version, limits, args.idle_timeout)
            print(f"Flink {info['flink_version']} warm planner running (pid {info['pid']}, {info['socket']})")
        return EXIT_OK
    if args.planner_command == "stop":
        stopped = warm.stop(args.flink_version)
        print(f"{stopped} warm planner(s) stopped")
        return EXIT_OK
    planners = warm.status()
    if not planners:
        print("no warm planner running")
    for info in planners:
        print(json.dumps(info))
    return EXIT_OK


def cmd_worker_deprecated(args) -> int:
    print("planlineage: `planlineage worker` is deprecated; use `planlineage planner`.", file=sys.stderr)
    return cmd_planner(args)


def _add_planner_commands(parser: argparse.ArgumentParser) -> None:
    planner_commands = parser.add_subparsers(dest="planner_command", required=True)
    for name, text in (
        ("start", "start a warm planner per version (default 1.20)"),
        ("serve", "run a warm planner in the foreground"),
        ("stop", "stop warm planners"),
        ("status", "show running warm planners"),
    ):
        sub = planner_commands.add_parser(name, help=text)
        if name == "start":
            sub.add_argument("flink_version_list", nargs="*", metavar="VERSION")
        elif name in ("serve", "stop"):
            sub.add_argument("--flink-version", default=None)
        sub.add_argument("--idle-timeout", type=float, default=900.0, help="stop after this many idle seconds")
        sub.add_argument("--max-jobs", type=int, default=500, help="recycle the JVM after this many jobs")
        sub.add_argument("--max-rss-mb", type=int, default=600, help="recycle the JVM above this resident memory")
        sub.add_argument("--job-timeout", type=float, default=120.0, help="a job running longer is stopped")


def render_table(lineage) -> str:
    def datasets(table) -> str:
        if not table.datasets:
            return "(no dataset)"
        return ", ".join(f"{d.namespace} {d.name}" for d in table.datasets)

    engine = f"Spark {lineage.spark_version}" if lineage.engine == "spark" else f"Flink {lineage.flink_version}"
    lines = [f"{engine}, {lineage.runtime_mode}: {len(lineage.sinks)} sink(s)"]
    for sink in lineage.sinks:
        lines.append("")
        lines.append(f"{sink.table} [{sink.connector}]  {datasets(sink)}")
        for source in sink.inputs:
            lines.append(f"  <- {source.table} [{source.connector}]  {datasets(source)}")
        if not sink.inputs:
            lines.append("  <- (no table: constant values)")
    for warning in lineage.warnings:
        lines.append(f"WARN {warning}")
    for stand_in in lineage.stand_ins:
        lines.append(f"STAND-IN {stand_in.kind} {stand_in.name}: {stand_in.reason}")
    return "\n".join(lines)


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
    return EXIT_OK


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
        return EXIT_OK
    for version in args.versions:
        ensure(version, force=True)
    return EXIT_OK


def _add_engine_versions(commands, name: str, engine: str, examples: str, run) -> None:
    """`planlineage flink|spark install|list`: an engine's per-version environments."""
    parser = commands.add_parser(name, help=f"manage the per-version {engine} environments")
    subcommands = parser.add_subparsers(dest=f"{name}_command", required=True)
    install = subcommands.add_parser("install", help=f"(re)provision {engine} versions")
    install.add_argument("versions", nargs="+", help=examples)
    subcommands.add_parser("list", help=f"show which {engine} versions are provisioned")
    parser.set_defaults(run=run)


def _spark_conf_pair(text: str) -> str:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return text


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="planlineage", description="OpenLineage for platform-submitted Flink SQL jobs."
    )
    parser.add_argument("--version", action="version", version=f"planlineage {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    def identity_options(p):
        p.add_argument("--rules", help="a TOML file of user identity rules and namespace resolvers")
        p.add_argument("--profile", choices=["openlineage", "gravitino"], help="dataset naming convention")
        p.add_argument("--metalake", help="Gravitino metalake (profile gravitino)")

    extract = commands.add_parser("extract", help="print the table lineage of a Flink SQL script")
    extract.add_argument(
        "script", nargs="+", help="the SQL file, or - for standard input; several files or a folder: one JSON line each"
    )
    extract.add_argument("--jobs", type=int, default=2, help="planners side by side for several scripts (default 2)")
    extract.add_argument("--flink-version", default=None, help="e.g. 1.20 or 1.20.5 (default 1.20)")
    extract.add_argument("--jar", action="append", default=[], help="a connector, format, UDF or catalog jar")
    extract.add_argument(
        "--flink-home",
        metavar="DIR",
        help="the cluster's Flink installation: its lib/ jars and opt/ connectors are compiled with (after --jar)",
    )
    extract.add_argument("--format", choices=["json", "table", "dot"], default=None)
    extract.add_argument(
        "--columns",
        action="store_true",
        help="add column lineage per sink: {sink_column: [{table, column, transformations}]}",
    )
    extract.add_argument("--engine", choices=["flink", "spark"], default="flink", help="whose SQL the script is")
    extract.add_argument("--spark-version", default=None, help="with --engine spark: 3.5 or 4.0 (default 3.5)")
    extract.add_argument(
        "--spark-conf",
        action="append",
        default=[],
        type=_spark_conf_pair,
        metavar="KEY=VALUE",
        help="with --engine spark: the job's Spark conf that names tables (warehouse dir, Hive metastore URIs)",
    )
    identity_options(extract)
    extract.set_defaults(run=cmd_extract)

    identity = commands.add_parser("identity", help="the OpenLineage datasets of a table's connector options")
    identity.add_argument("options", help='the table options as JSON, e.g. \'{"connector": "kafka", ...}\'')
    identity.add_argument("--table", help="the Flink table, catalog.database.table (for symlinks)")
    identity_options(identity)
    identity.set_defaults(run=cmd_identity)

    _add_engine_versions(commands, "flink", "Flink", "e.g. 1.20 2.3", cmd_flink)
    _add_engine_versions(commands, "spark", "Spark", "e.g. 3.5 4.0", cmd_spark)

    planner = commands.add_parser("planner", help="warm planners: one long-lived JVM per Flink version")
    _add_planner_commands(planner)
    planner.set_defaults(run=cmd_planner)
    worker = commands.add_parser("worker")  # the old name of `planner`, hidden (no help)
    _add_planner_commands(worker)
    worker.set_defaults(run=cmd_worker_deprecated)

    from planlineage.cli import lifecycle as lifecycle_commands

    lifecycle_commands.add_commands(commands)
    importlib.import_module("planlineage.cli.doctor").add_command(commands)
    importlib.import_module("planlineage.cli.graph").add_command(commands)
    importlib.import_module("planlineage.cli.watch").add_command(commands)
    importlib.import_module("planlineage.cli.store").add_commands(commands)
    # Commands registered without help (internal or deprecated) stay out of the usage line too.
    listed = {action.dest for action in commands._choices_actions}
    commands.metavar = "{" + ",".join(name for name in commands.choices if name in listed) + "}"
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(message)s")  # messages carry their own prefix
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except PlanlineageError as error:  # the one place an error becomes a message and an exit code
        print(f"planlineage: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (`| head`): not an error of ours
        sys.stderr.close()
        return EXIT_OK
