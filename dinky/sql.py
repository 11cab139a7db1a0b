"""Dinky's own syntax, resolved before a script is compiled by Flink's planner.

What Dinky runs is not plain Flink SQL (docs/dinky.md says where each rule was read):

- ``name := value;`` defines a variable (Dinky's ``VariableManager``), and ``${name}`` (the
  pattern ``\\$\\{(.+?)}``) is replaced by the script's own definitions, else by the enabled
  global variables of ``dinky_fragment``.  Only when the task's ``fragment`` switch is on, as in
  Dinky; a ``${…}`` with no value (or a JEXL expression Dinky would evaluate) is never guessed:
  the run is not reported and the reason says which.
- ``ADD CUSTOMJAR '…'`` / ``ADD JAR '…'``: the jar goes to the compile when it is readable here,
  else a warning (compiled without it); ``ADD FILE`` and ``PRINT`` (Dinky's console preview)
  change no lineage and are dropped.
- ``EXECUTE CDCSOURCE`` (whole-database sync) and ``EXECUTE JAR`` decide their tables when they
  run: such a script is not reported, with a WARN naming the statement, never a partial lineage.
- A line whose first non-blank character is ``#`` is a comment (outside a quoted string).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from planlineage import script as flink_script

_DEFINITION = re.compile(r"^\s*([^\s:=;'\"`]+)\s*:=\s*(.*?)\s*$", re.DOTALL)
_PLACEHOLDER = re.compile(r"\$\{(.+?)}")
_QUOTED = re.compile(r"'((?:[^']|'')*)'|\"([^\"]*)\"|`([^`]*)`")
_HASH_LINE = re.compile(r"(?m)^[ \t]*#[^\n]*$")
#: The most characters a script may have once its variables are substituted (as for StreamPark).
MAX_CHARS = 8 * 1024 * 1024


class Unsupported(ValueError):
    """A statement whose lineage only the running job knows, or a variable without a value."""


@dataclass
class Prepared:
    sql: str
    jars: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # said once each; the run is still reported


def strip_hash_comments(text: str) -> str:
    """``#`` comment lines blanked (their newline kept, so statement lines stay where they were),
    unless the ``#`` sits inside a quoted string."""
    if "#" not in text:
        return text
    out: list[str] = []
    last = scanned = 0
    for match in _HASH_LINE.finditer(text):
        # Strings and comments as the splitter reads them: a quote in a `--` comment opens nothing.
        scanned = flink_script.end_of_literals(text, scanned, max(scanned, match.start()))
        if scanned > match.start():
            continue  # inside a string or a /* comment
        out += (text[last : match.start()], "")
        last = match.end()
    out.append(text[last:])
    return "".join(out)


def _short(sql: str, limit: int = 80) -> str:
    one = " ".join(sql.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def _literal(sql: str) -> str | None:
    match = _QUOTED.search(sql)
    if match is None:
        words = sql.split()
        return words[-1] if len(words) > 2 else None
    return next(g for g in match.groups() if g is not None).replace("''", "'")


def substitute(text: str, variables: dict[str, str]) -> str:
    """``text`` with each ``${name}`` replaced; :class:`Unsupported` naming the first one that
    has no value."""
    pieces: list[str] = []
    last = size = 0
    for match in _PLACEHOLDER.finditer(text):
        name = match.group(1)
        if name not in variables:
            raise Unsupported(
                f"${{{name}}} has no value (no `{name} := …` before it in the script and no enabled global "
                "variable of that name in dinky_fragment): the SQL Dinky ran is not known"
            )
        value = variables[name]
        size += match.start() - last + len(value)
        if size > MAX_CHARS:
            raise Unsupported(f"its script with ${{variables}} substituted is longer than {MAX_CHARS} characters")
        pieces += (text[last : match.start()], value)
        last = match.end()
    pieces.append(text[last:])
    return "".join(pieces)


def prepare(text: str, fragments: dict[str, str] | None, readable=os.access) -> Prepared:
    """The Flink SQL of a Dinky script, the jars it adds and what was left out.

    ``fragments``: the enabled global variables when the task's fragment switch is on, None when
    it is off (then nothing is substituted, as in Dinky).  Raises :class:`Unsupported`."""
    statements = flink_script.split(strip_hash_comments(text))
    variables = dict(fragments or {})
    kept: list[str] = []
    prepared = Prepared("")
    for statement in statements:
        sql = statement.sql
        if fragments is not None:
            definition = _DEFINITION.match(sql)
            if definition is not None:
                variables[definition.group(1)] = substitute(definition.group(2), variables)
                continue
            sql = substitute(sql, variables)
        words = [w.upper() for w in re.findall(r"[A-Za-z_]+", sql)[:3]]
        if words[:2] == ["EXECUTE", "CDCSOURCE"] or words[:2] == ["EXECUTE", "JAR"]:
            what = "Dinky's whole-database sync" if words[1] == "CDCSOURCE" else "a jar's own main class"
            raise Unsupported(
                f"line {statement.line}: `{_short(sql)}` ({what}) decides its tables only when it runs: "
                "not reported, rather than a lineage without them"
            )
        if words[:2] == ["ADD", "CUSTOMJAR"] or words[:2] == ["ADD", "JAR"]:
            path = _literal(sql)
            if path and os.path.isfile(path) and readable(path, os.R_OK):
                prepared.jars.append(path)
            else:
                prepared.warnings.append(
                    f"`{_short(sql)}`: the jar is not readable here (compiled without it; a connector or UDF "
                    "it holds may fail the compile)"
                )
            continue
        if words[:2] == ["ADD", "FILE"] or words[:1] == ["PRINT"]:
            continue  # Dinky's console preview and shipped files: no table is written
        kept.append(sql)
    prepared.sql = "".join(f"{sql};\n" for sql in kept)
    return prepared
