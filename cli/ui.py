"""`planlineage ui`: argument parsing and the messages of the live lineage page (planlineage.graph.server)."""

from __future__ import annotations

import sys

from planlineage.errors import ExitCode


def configure(name: str, parser) -> None:
    from planlineage.cli.page_inputs import add_inputs

    add_inputs(parser)
    parser.add_argument("--rules", help="a rules TOML file whose namespace resolvers count for splits")
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default 127.0.0.1); any other than loopback requires a token",
    )
    parser.add_argument("--port", type=int, default=8765, help="the port (default 8765; 0 picks a free one)")
    parser.set_defaults(run=cmd_ui)


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def cmd_ui(args) -> int:
    from planlineage.cli.page_inputs import missing, nothing_given, resolve
    from planlineage.errors import UnreadableInput
    from planlineage.graph import page_data
    from planlineage.graph.server import LiveGraph, is_loopback, resolve_token, serve
    from planlineage.printable import visible

    if nothing_given(args):
        _say(missing("ui"))
        return ExitCode.INPUT
    if not 0 <= args.port <= 65535:
        _say("planlineage ui: --port must be between 0 and 65535.")
        return ExitCode.INPUT
    try:
        inputs = resolve(args)
        live = LiveGraph(
            files=inputs.files,
            state=args.state,
            rules=args.rules,
            page=lambda g, around: page_data(g, around),
            events=inputs.events,
        )
        live.refresh()
    except UnreadableInput as error:
        _say(f"planlineage ui: {visible(str(error))}")
        return ExitCode.INPUT
    token, generated = resolve_token(args.host)  # a weak lineage.ui-token: said by cli.main, exit 2

    def ready(server) -> None:
        host, port = server.server_address[:2]
        shown = f"[{host}]" if ":" in host else host
        if token is None:
            _say(f"planlineage ui: serving http://{shown}:{port}/ (read only; Ctrl-C stops it)")
            return
        if generated:  # printed once, here; the fragment never reaches a server or its log
            _say(f"planlineage ui: open http://{shown}:{port}/#token={token} (read only; Ctrl-C stops it)")
        else:
            _say(f"planlineage ui: serving http://{shown}:{port}/ (open it as …/#token=<lineage.ui-token>)")
        if not is_loopback(args.host):
            _say("planlineage ui: listening beyond loopback: whoever holds the token reads the lineage")

    try:
        serve(live, args.host, args.port, token, ready, _say)
    except OSError as error:
        _say(
            f"planlineage ui: cannot listen on {visible(args.host)}:{args.port}: {error.strerror or error}; "
            "pick another --port (or 0 for a free one)"
        )
        return ExitCode.INPUT
    except KeyboardInterrupt:
        return ExitCode.OK
    return ExitCode.OK
