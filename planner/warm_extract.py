"""The warm planner's `extract`: a script compiled, walked, named and rendered in the process that
holds the planner, for a command line that imports none of it.

`planlineage extract SCRIPT` with a warm planner of the version running sends the script and its
options (planner.warm_client.extract_warm) and prints the text it gets back: the same bytes the
command renders itself without one, for every `--format`. An error meant for the user comes back
as its class and message and ends the command as it would have in the command's own process.
Whatever the warm planner cannot answer exactly as the command would (another patch version, a
rules file it cannot read, a fault of its own) comes back as `fallback`: the command then does
the work itself, so the answer never depends on which process gave it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from planlineage.errors import PlanlineageError
from planlineage.pipeline import extract
from planlineage.planner.protocol import CompileAnswer, CompileRequest, ExtractAnswer, ExtractRequest
from planlineage.planner.provision import resolve_version
from planlineage.planner.provisioned import Provisioned
from planlineage.registry import load_config
from planlineage.render import FORMATS, render

log = logging.getLogger(__name__)


class _InTurn:
    """The warm planner's JVM for the pipeline: one job at a time, through the daemon's lock."""

    def __init__(self, provisioned: Provisioned, compile_in_turn: Callable[[CompileRequest], CompileAnswer]):
        self.provisioned = provisioned
        self._compile = compile_in_turn

    def compile(self, request: CompileRequest, timeout: float = 0.0) -> CompileAnswer:
        return self._compile(request)


def extract_answer(
    request: ExtractRequest, provisioned: Provisioned, compile_in_turn: Callable[[CompileRequest], CompileAnswer]
) -> ExtractAnswer:
    """The finished output of `extract` for one script, compiled by `compile_in_turn` (the daemon's
    planner, one job at a time); its user error, or why the command must answer itself."""
    try:
        return _answer(request, provisioned, compile_in_turn)
    except Exception:  # a fault of ours, or a request it cannot read: the command's own run answers
        log.exception("planlineage: the warm planner could not extract a script; the command does it itself")
        return {"ok": False, "fallback": "the warm planner failed"}


def _answer(
    request: ExtractRequest, provisioned: Provisioned, compile_in_turn: Callable[[CompileRequest], CompileAnswer]
) -> ExtractAnswer:
    try:
        if resolve_version(request["flink_version"]).version != provisioned.flink.version:
            return {"ok": False, "fallback": "another Flink version"}
        identity = load_config(request["rules"], profile=request["profile"], metalake=request["metalake"])
    except PlanlineageError as error:
        # Said by the command itself, with the paths and the order of checks the user knows.
        return {"ok": False, "fallback": str(error)}
    try:
        lineage = extract(
            request["script"],
            flink_version=request["flink_version"],
            jars=request["jars"],
            identity=identity,
            planner=_InTurn(provisioned, compile_in_turn),
            columns=request["columns"],
            max_bytes=request["max_bytes"],
        )
        return {"ok": True, "output": render(lineage, request["format"], request["name"])}
    except PlanlineageError as error:
        line = getattr(error, "line", None)
        return {"ok": False, "error": {"kind": type(error).__name__, "message": str(error), "line": line}}


def prepare(provisioned: Provisioned, compile_in_turn: Callable[[CompileRequest], CompileAnswer], script: str) -> None:
    """One script through every format, columns included, at the warm planner's start: the first
    command's answer then pays no import and no first use of the walk, the naming or a renderer."""
    for fmt in FORMATS:
        request: ExtractRequest = {
            "script": script,
            "name": "warm-up.sql",
            "flink_version": provisioned.flink.version,
            "jars": [],
            "rules": None,
            "profile": "openlineage",
            "metalake": None,
            "columns": True,
            "format": fmt,
            "max_bytes": len(script.encode()) + 1,
        }
        answer = extract_answer(request, provisioned, compile_in_turn)
        if not answer["ok"]:
            log.warning("planlineage: the warm planner's extract warm-up did not answer: %s", answer)
