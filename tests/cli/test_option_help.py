"""Every option and argument of every command a user runs says what it is (`--help`): `submit`'s
and `state`'s options had no help text at all."""

from __future__ import annotations

import argparse

from planlineage.cli.main import build_parser

#: internal commands and old names kept for scripts: not in the help a user reads
UNLISTED = ("_compile-service", "worker")


def _undocumented(parser: argparse.ArgumentParser, path: list[str]):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if name not in UNLISTED:
                    yield from _undocumented(sub, [*path, name])
        elif not isinstance(action, argparse._HelpAction | argparse._VersionAction) and not action.help:
            yield f"{' '.join(path)} {'/'.join(action.option_strings) or action.dest}"


def test_every_option_of_every_command_has_help():
    assert list(_undocumented(build_parser(), [])) == []
