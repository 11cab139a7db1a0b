"""The `planlineage` command line."""

from __future__ import annotations

import argparse
import json
import logging
import sys

from planlineage import __version__

EXIT_OK = 0
EXIT_FAILED = 2  # the input cannot be processed (bad SQL, bad options, bad rules file)
EXIT_ENVIRONMENT = 3  # the machine lacks something (a Flink version cannot be provisioned, no Java)

log = logging.getLogger("planlineage")


def _read_script(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def _identity_config(args):
    from planlineage.registry import load_config

    return load_config(getattr(args, "rules", None), profile=getattr(args, "profile", None) or "openlineage",
                       metalake=getattr(args, "metalake", None))


def cmd_extract(args) -> int:
    from planlineage.extract import ExtractError, PlannerError, ProvisionError, extract
    from planlineage.registry import ConfigError

    try:
        script = _read_script(args.script)
    except OSError as error:
        print(f"planlineage: cannot read {args.script}: {error.strerror}.", file=sys.stderr)
        return EXIT_FAILED
    try:
        identity = _identity_config(args)
        lineage = extract(script, flink_version=args.flink_version, jars=args.jar, identity=identity)
    except (ExtractError, ConfigError) as error:
        print(f"planlineage: {error}", file=sys.stderr)
        return EXIT_FAILED
    except (ProvisionError, PlannerError) as error:
        print(f"planlineage: {error}", file=sys.stderr)
        return EXIT_ENVIRONMENT
    fmt = args.format or ("table" if sys.stdout.isatty() else "json")
    if fmt == "json":
        print(json.dumps(lineage.to_json_dict(), indent=2))
    else:
        print(render_table(lineage))
    return EXIT_OK


def render_table(lineage) -> str:
    def datasets(table) -> str:
        if not table.datasets:
            return "(no dataset)"
        return ", ".join(f"{d.namespace} {d.name}" for d in table.datasets)

    lines = [f"Flink {lineage.flink_version}, {lineage.runtime_mode}: {len(lineage.sinks)} sink(s)"]
    for sink in lineage.sinks:
        lines.append("")
        lines.append(f"{sink.table} [{sink.connector}]  {datasets(sink)}")
        for source in sink.inputs:
            lines.append(f"  <- {source.table} [{source.connector}]  {datasets(source)}")
        if not sink.inputs:
            lines.append("  <- (no table: constant values)")
    for warning in lineage.warnings:
        lines.append(f"WARN {warning}")
    return "\n".join(lines)


def cmd_identity(args) -> int:
    from planlineage.registry import ConfigError, resolve

    try:
        options = json.loads(args.options)
        if not isinstance(options, dict) or not all(isinstance(v, str) for v in options.values()):
            raise ValueError("expected a JSON object of string options")
        identity = _identity_config(args)
    except ValueError as error:
        print(f"planlineage: the options are not a JSON object of strings ({error}).", file=sys.stderr)
        return EXIT_FAILED
    except ConfigError as error:
        print(f"planlineage: {error}", file=sys.stderr)
        return EXIT_FAILED
    resolution = resolve(options, table=args.table or "", config=identity)
    print(json.dumps({
        "datasets": [d.model_dump(mode="json") for d in resolution.datasets],
        "warnings": resolution.warnings,
    }, indent=2))
    return EXIT_OK


def cmd_flink(args) -> int:
    from planlineage.planner.provision import ProvisionError, ensure, list_installed

    if args.flink_command == "list":
        for minor, info in list_installed().items():
            print(f"{minor:<5} {info['version']:<7} {info['state']:<14} {info['path']}")
        return EXIT_OK
    try:
        for version in args.versions:
            ensure(version, force=True)
    except ProvisionError as error:
        print(f"planlineage: {error}", file=sys.stderr)
        return EXIT_ENVIRONMENT
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="planlineage", description="OpenLineage for platform-submitted Flink SQL jobs.")
    parser.add_argument("--version", action="version", version=f"planlineage {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    def identity_options(p):
        p.add_argument("--rules", help="a TOML file of user identity rules and namespace resolvers")
        p.add_argument("--profile", choices=["openlineage", "gravitino"], help="dataset naming convention")
        p.add_argument("--metalake", help="Gravitino metalake (profile gravitino)")

    extract = commands.add_parser("extract", help="print the table lineage of a Flink SQL script")
    extract.add_argument("script", help="the SQL file, or - for standard input")
    extract.add_argument("--flink-version", default=None, help="e.g. 1.20 or 1.20.5 (default 1.20)")
    extract.add_argument("--jar", action="append", default=[], help="a connector, format, UDF or catalog jar")
    extract.add_argument("--format", choices=["json", "table"], default=None)
    identity_options(extract)
    extract.set_defaults(run=cmd_extract)

    identity = commands.add_parser("identity", help="the OpenLineage datasets of a table's connector options")
    identity.add_argument("options", help='the table options as JSON, e.g. \'{"connector": "kafka", ...}\'')
    identity.add_argument("--table", help="the Flink table, catalog.database.table (for symlinks)")
    identity_options(identity)
    identity.set_defaults(run=cmd_identity)

    flink = commands.add_parser("flink", help="manage the per-version Flink environments")
    flink_commands = flink.add_subparsers(dest="flink_command", required=True)
    install = flink_commands.add_parser("install", help="(re)provision Flink versions")
    install.add_argument("versions", nargs="+", help="e.g. 1.20 2.3")
    flink_commands.add_parser("list", help="show which versions are provisioned")
    flink.set_defaults(run=cmd_flink)

    from planlineage import lifecycle_cli

    lifecycle_cli.add_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(message)s")  # messages carry their own prefix
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (`| head`): not an error of ours
        sys.stderr.close()
        return EXIT_OK
