"""Loggers that load :mod:`logging` only when a record is about to be logged.

``submit`` and ``state`` run for every job a platform starts, often many at once, and log nothing
when all goes well; importing :mod:`logging` alone would cost each of them ~7 ms of CPU (~0.07 s
of wall time at 20 concurrent commands on 2 cores).  The modules on that path take their logger
from here.  Whoever sets logging up (the command line) registers it with :func:`on_load`: it runs
once, before the first record, so every record is formatted and redacted as configured.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

_hooks: list[Callable[[ModuleType], None]] = []
_done = False


def on_load(hook: Callable[[ModuleType], None]) -> None:
    """Run ``hook(logging)`` before the first record is logged through this module (at once when
    logging was set up already)."""
    if _done:
        hook(_logging())
    else:
        _hooks.append(hook)


def _logging() -> ModuleType:
    global _done
    import logging

    if not _done:
        _done = True
        for hook in _hooks:
            hook(logging)
        _hooks.clear()
    return logging


def load() -> None:
    """Set logging up now (a command that logs anyway, or one whose modules use :mod:`logging`
    directly)."""
    _logging()


class Logger:
    """A stand-in for ``logging.getLogger(name)``: any use loads logging (and its set-up)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __getattr__(self, attribute: str):
        return getattr(_logging().getLogger(self.name), attribute)


def getLogger(name: str) -> Logger:
    return Logger(name)
