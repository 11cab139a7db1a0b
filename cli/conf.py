"""`planlineage spark-conf` and `flink-conf`: the platform's configuration in, the same with the
OpenLineage listener added out (planlineage.listener_conf); fail-open, byte for byte."""

from __future__ import annotations

import sys

from planlineage.cli.messages import say_notices, warn
from planlineage.errors import ExitCode


def _conf(args, merge) -> int:
    data = b""
    say_notices()
    try:
        data = sys.stdin.buffer.read()
        out = data
        if args.lineage_enable:
            from planlineage.settings import Settings

            config = Settings().config()
            if config.configured:
                out = merge(data, config, args)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # fail-open: the platform gets its own configuration back
        warn(f"lineage {args.command} skipped: {type(error).__name__}")
        out = data
    sys.stdout.buffer.write(out)
    sys.stdout.buffer.flush()
    return ExitCode.OK


def cmd_spark_conf(args) -> int:
    from planlineage import listener_conf

    return _conf(
        args,
        lambda data, config, a: listener_conf.merge_bytes(
            data, listener_conf.spark_entries, config, warn=warn, default_style="="
        ),
    )


def cmd_flink_conf(args) -> int:
    from planlineage import listener_conf

    def entries(config, existing, w):
        return listener_conf.flink_entries(config, args.flink_version, existing, w)

    return _conf(
        args, lambda data, config, a: listener_conf.merge_bytes(data, entries, config, warn=warn, default_style=":")
    )


def configure(name: str, parser) -> None:
    if name == "flink-conf":
        parser.add_argument("--flink-version", required=True, help="the job's Flink version (the listener is 2.x's)")
    parser.add_argument("--app-id", default=None, help="the application's id, for the messages")
    parser.add_argument(
        "--lineage-enable", action="store_true", help="the job reports lineage (without it the file is left as it is)"
    )
    parser.set_defaults(run=cmd_flink_conf if name == "flink-conf" else cmd_spark_conf)
