"""`planlineage settings set|get|unset|list`: the lineage settings (planlineage.settings).

`list` shows where the active transport came from: planlineage's own settings (``env``,
``store``, ...), or OpenLineage's configuration (``openlineage.yml: <path>``,
``OPENLINEAGE__TRANSPORT__*``, ``OPENLINEAGE_URL``) with that transport's options on the line
``openlineage.transport``, their secrets masked; ``OPENLINEAGE_DISABLED=true`` when it silences all.
"""

from __future__ import annotations

import sys

from planlineage.cli.messages import say_notices
from planlineage.errors import ExitCode


def cmd_settings(args) -> int:
    """A SettingError or StoreError is said by cli.main with its exit code (2)."""
    from planlineage import home
    from planlineage.settings import Settings, masked

    settings = Settings()
    try:
        if args.settings_command == "set":
            raw = args.value
            if raw == "-":  # from stdin: a value on the command line is readable by other local users
                raw = sys.stdin.readline().rstrip("\r\n")
            if args.key == "lineage.transport":
                _check_library_kind(raw)
            stored = settings.set(args.key, raw)
            print(f"{args.key} = {masked(args.key, stored)}")
        elif args.settings_command == "unset":
            settings.unset(args.key)
        elif args.settings_command == "get":
            value, origin = settings.source(args.key)
            if value is None:
                return ExitCode.NOT_SET
            print(masked(args.key, value))  # secrets and URL credentials never printed back
        else:
            for key, (value, origin) in settings.list_masked().items():
                print(f"{key:<26} {value:<40} ({origin})")
            for notice in home.notices():  # the state of the store, reported where people look
                print(f"! {notice['message']}")
                home.mark_said(notice["message"])
        for problem in settings.problems:  # a sealed token: its new key, or no key on this node
            print(f"planlineage: {problem}", file=sys.stderr)
        say_notices()
    except BrokenPipeError:  # stdout's reader left (`| head -1`): main() ends quietly, not a settings problem
        raise
    except OSError as error:
        where = error.filename or settings.path
        print(
            f"planlineage: cannot write {where}: {error.strerror or error}; check the folder's permissions",
            file=sys.stderr,
        )
        return ExitCode.INPUT
    return ExitCode.OK


def _check_library_kind(raw: str) -> None:
    """A transport name planlineage does not build itself must be one openlineage-python's factory
    knows (a dotted class path is imported where events are sent, not here)."""
    from planlineage.emitter.transport_kinds import TRANSPORT_KINDS, check_kind
    from planlineage.errors import SettingError

    try:
        kind = check_kind(raw)
    except ValueError as error:
        raise SettingError(f"lineage.transport: {error}") from None
    if not kind or kind in TRANSPORT_KINDS or "." in kind:
        return
    from planlineage.emitter.transports.openlineage import known_kinds

    known = known_kinds()
    if kind not in known:
        raise SettingError(
            f"lineage.transport: {kind!r} is not a transport planlineage or openlineage-python builds "
            f"({', '.join([*TRANSPORT_KINDS, *known])}); a transport of your own: its dotted class path"
        )


def configure(name: str, parser) -> None:
    commands = parser.add_subparsers(dest="settings_command", required=True)
    set_ = commands.add_parser("set", help="store a setting")
    key_help = "a setting's name, e.g. lineage.address (`planlineage settings list` lists them)"
    set_.add_argument("key", help=key_help)
    set_.add_argument("value", help="the value; - reads it from stdin (use this for lineage.token)")
    get = commands.add_parser("get", help="print a setting (secrets masked)")
    get.add_argument("key", help=key_help)
    unset = commands.add_parser("unset", help="remove a stored setting")
    unset.add_argument("key", help=key_help)
    commands.add_parser("list", help="every setting, its value (secrets masked) and origin")
    parser.set_defaults(run=cmd_settings)
