"""The `planlineage` command line: the table of commands and the one place errors become exit codes.

Start-up is most of what a short command costs (a platform runs `submit` and `state` for every
job, often many at once), so the parser is built lazily: the table below names each command's
module and help text, and only the chosen command's module is imported to add its arguments.
`planlineage --help` (or no command, or an unknown one) lists every command from the table
alone, importing none of them.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from planlineage import __version__, deprecated, lazylog
from planlineage.errors import ExitCode, PlanlineageError

#: command -> (module under planlineage.cli, help text); in the order `--help` lists them.  A
#: command without help text (internal or deprecated) is accepted but not listed.  Each module's
#: ``configure(name, parser)`` adds the command's arguments and sets ``run``.
COMMANDS: dict[str, tuple[str, str | None]] = {
    "extract": ("extract", "print the table lineage of a Flink SQL script"),
    "identity": ("extract", "the OpenLineage datasets of a table's connector options"),
    "flink": ("engines", "manage the per-version Flink environments"),
    "spark": ("engines", "manage the per-version Spark environments"),
    "planner": ("planner", "warm planners: one long-lived JVM per Flink version"),
    "settings": ("settings", "lineage settings (address, token, namespace, ...)"),
    "submit": ("lifecycle", "a platform submits a Flink SQL job: record a run, emit START"),
    "state": ("lifecycle", "a platform reports an application state"),
    "flush": ("lifecycle", "deliver the pending lineage events"),
    "outbox": ("lifecycle", "lineage events not delivered yet: list them, retry parked ones"),
    "spark-conf": ("conf", "add the OpenLineage Spark listener to app properties (stdin -> stdout)"),
    "flink-conf": ("conf", "add the OpenLineage Flink listener to a Flink configuration (stdin -> stdout)"),
    "_compile-service": ("lifecycle", None),  # internal: the lifecycle's compile service
    "doctor": ("doctor", "find datasets that name one physical table differently (splits) in reported events"),
    "graph": ("graph", "draw reported lineage as one self-contained HTML page (or DOT)"),
    "ui": ("ui", "serve the lineage page live: new runs and state changes without a reload (read only)"),
    "watch": ("watch", "report the SQL jobs StreamPark and Dinky run by reading their databases (read only)"),
    "gateway": ("gateway", "a transparent proxy in front of a Flink SQL Gateway: reports the jobs its sessions submit"),
    "store": ("store", "the state store: status, migrations"),
}
#: Old command names still accepted (not listed): each runs its new name's module, which says so.
COMMANDS.update({old: (COMMANDS[new][0], None) for old, new in deprecated.COMMANDS.items()})


class _Parser(argparse.ArgumentParser):
    """argparse's parser, with the help width found as ``shutil.get_terminal_size`` finds it but
    without importing shutil (and the compression modules it loads) on every command: argparse
    makes a help formatter for each argument it adds, even when no help is printed."""

    def _get_formatter(self):
        return self.formatter_class(prog=self.prog, width=_terminal_columns() - 2)


def _terminal_columns() -> int:
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):  # no stdout (None), closed, or not a terminal
            columns = 0
    return columns or 80


def chosen_command(argv: list[str]) -> str | None:
    """The command ``argv`` runs when it is its first word; None when the top-level parser acts
    first (``--help``, ``--version``, no command, an unknown one)."""
    return argv[0] if argv and argv[0] in COMMANDS else None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command (each command's module imported), or with ``only`` of that one
    command alone, which parses its arguments exactly as the full parser does (usage and errors
    included: a subcommand's usage names only the program and itself)."""
    parser, commands = _top_level()
    for name, (module, text) in COMMANDS.items():
        if only is None or name == only:
            sub = commands.add_parser(name) if text is None else commands.add_parser(name, help=text)
            importlib.import_module(f"planlineage.cli.{module}").configure(name, sub)
    return parser


def listing_parser() -> argparse.ArgumentParser:
    """The parser for `--help`, `--version`, a missing or an unknown command: every command
    listed with its help text from the table, none imported (no command's arguments are parsed
    by it: a chosen command gets :func:`build_parser`)."""
    parser, commands = _top_level()
    for name, (_module, text) in COMMANDS.items():
        if text is None:
            commands.add_parser(name)
        else:
            commands.add_parser(name, help=text)
    return parser


def _top_level():
    parser = _Parser(prog="planlineage", description="OpenLineage for platform-submitted Flink SQL jobs.")
    parser.add_argument("--version", action="version", version=f"planlineage {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    # Commands registered without help (internal or deprecated) stay out of the usage line too.
    commands.metavar = "{" + ",".join(name for name, (_, text) in COMMANDS.items() if text is not None) + "}"
    return parser, commands


#: Commands whose whole path logs through planlineage.lazylog: logging is set up (and loaded)
#: only if they log something (the tests of their imports hold it). `extract` answered by a warm
#: planner logs nothing; its other paths load logging themselves (cli/extract.py).
LAZY_LOGGING = frozenset({"submit", "state", "extract"})


def _set_up_logging(logging) -> None:
    logging.basicConfig(level=logging.WARNING, format="%(message)s")  # messages carry their own prefix


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError as error:  # the reader went away (`| head -1`), from any command or its --help
        if not _reader_left():  # not stdout: a connection of the command's own closed
            print(f"planlineage: the other end closed the connection ({error.strerror or error})", file=sys.stderr)
            return ExitCode.CONNECTION_CLOSED
        return reader_gone()


def _reader_left() -> bool:
    """Whether stdout is a pipe whose reader has closed it (poll reports an error on its end)."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), 0)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (AttributeError, ValueError, OSError):  # no stdout, or one without a descriptor
        return False


def _main(argv: list[str] | None) -> int:
    lazylog.on_load(_set_up_logging)
    argv = sys.argv[1:] if argv is None else list(argv)
    only = chosen_command(argv)
    if only is not None and only not in LAZY_LOGGING:  # (the listing of commands logs nothing)
        lazylog.load()
    args = (build_parser(only) if only is not None else listing_parser()).parse_args(argv)
    try:
        return args.run(args)
    except PlanlineageError as error:
        return failed(error)
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED


def failed(error: PlanlineageError) -> int:
    """The one place an error a command ended with becomes what the user reads and the exit code:
    one line on stderr (the message says what was wrong and what to do), the code its class
    chooses (planlineage.errors). No command catches these to say them itself. A message may carry
    a driver's or a platform's text: every secret in it is masked and every control character
    escaped (a terminal escape from a database), line by line."""
    from planlineage.printable import visible
    from planlineage.registry.secrets import redact_text

    shown = "\n".join(visible(line) for line in redact_text(str(error)).split("\n"))
    print(f"planlineage: {shown}", file=sys.stderr)
    return error.exit_code


def reader_gone() -> int:
    """Stdout's reader closed the pipe (`planlineage settings list | head -1`): nobody wants the
    rest, which is not an error of the command's. Exit 0 without a word, as ``head`` leaves a
    pipeline that did its job (and a platform's `submit` keeps its exit 0). Stdout is pointed at
    /dev/null, the Python documentation's way, so that the interpreter's last flush of what is
    still buffered does not fail again ("Exception ignored ... BrokenPipeError", exit 120).
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (AttributeError, ValueError, OSError):  # no stdout (None) or one without a descriptor
        pass
    return ExitCode.OK


def console() -> None:
    """The installed command (and ``python -m planlineage``): :func:`main`, then exit.

    ``submit`` and ``state`` run on the platform's own path, often many at once: they leave without
    the interpreter's teardown (unloading every module costs ~5 ms of a ~45 ms command), once
    their output is flushed, when nothing that teardown would finish is running (no logging
    loaded, hence no handler to flush; no other thread). Their writes are committed or
    closed before :func:`main` returns. Every other command exits the ordinary way.
    """
    try:
        code = main()
    except SystemExit:  # argparse's --help, --version and usage errors leave this way
        _flush_stdout()
        raise
    _flush_stdout()
    if chosen_command(sys.argv[1:]) in LAZY_LOGGING and "logging" not in sys.modules:
        threading = sys.modules.get("threading")  # not loaded: no thread was started through it
        if threading is None or threading.active_count() == 1:
            try:
                sys.stderr.flush()
            except (AttributeError, ValueError, OSError):
                pass
            os._exit(code)
    raise SystemExit(code)


def _flush_stdout() -> None:
    """What stdout still buffers, written here where a closed pipe can be handled (the exit code
    stands: the command did its work)."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        reader_gone()
    except (AttributeError, ValueError):  # no stdout, or a closed one
        pass
