"""`planlineage extract` and `planlineage identity`: what a script's tables, or one table's
connector options, name (argument parsing and rendering; the work is planlineage.pipeline and
planlineage.registry)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from planlineage.errors import EXIT_INPUT, InputError

EXIT_OK = 0


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


def _terminated(signum, frame) -> None:
    """SIGTERM unwinds like Ctrl-C: the planner JVM this command started is stopped with it."""
    raise SystemExit(128 + signum)


def cmd_extract(args) -> int:
    import signal

    from planlineage.pipeline import extract

    signal.signal(signal.SIGTERM, _terminated)
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
    """--jar first, then the cluster's own jars (--flink-home): the precedence docs/how-it-works.md states."""
    from planlineage.planner.cluster_jars import cluster_jars

    return [*args.jar, *cluster_jars(getattr(args, "flink_home", None))]


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
        if sink.columns is not None:  # asked for (--columns)
            lines.extend(_column_lines(sink.columns))
    for warning in lineage.warnings:
        lines.append(f"WARN {warning}")
    for stand_in in lineage.stand_ins:
        lines.append(f"STAND-IN {stand_in.kind} {stand_in.name}: {stand_in.reason}")
    return "\n".join(lines)


def _column_lines(columns) -> list[str]:
    """A sink's column lineage, one line per sink column: each source column with how it gets
    there (OpenLineage's transformation type/subtype), in the sink's column order."""
    if not columns:
        return ["  columns: (none found)"]
    lines = ["  columns:"]
    width = max(len(name) for name in columns)
    for name, sources in columns.items():
        reached = ", ".join(f"{source.table}.{source.column}{_how(source)}" for source in sources)
        lines.append(f"    {name:<{width}} <- {reached or '(no source column: constant values)'}")
    return lines


def _how(source) -> str:
    kinds = [
        "/".join(part for part in (t.type, t.subtype) if part) + (" masking" if t.masking else "")
        for t in source.transformations
    ]
    return f" ({', '.join(kinds)})" if kinds else ""


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
    parser.add_argument("--format", choices=["json", "table", "dot"], default=None)
    parser.add_argument(
        "--columns",
        action="store_true",
        help="add column lineage per sink: {sink_column: [{table, column, transformations}]}",
    )
    parser.add_argument("--engine", choices=["flink", "spark"], default="flink", help="whose SQL the script is")
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
    parser.set_defaults(run=cmd_extract)
