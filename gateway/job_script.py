"""A gateway session's recorded statements → the script compiled for the job its last one submitted.

The SQL Gateway keeps no script: a session is a sequence of REST calls, each one statement, some
of which change the session (its configuration, catalogs, databases, tables, views, functions,
modules, jars) and some of which only read or start other jobs.  The job the last statement
submitted is compiled from:

1. the session's opening properties, each as a ``SET`` (the gateway applies them first);
2. every earlier statement that shapes the catalog or the configuration: ``SET``/``RESET``,
   ``CREATE``/``DROP``/``ALTER`` (catalogs, databases, tables, views, functions), ``USE`` and
   ``USE CATALOG``, ``LOAD``/``UNLOAD MODULE``; ``ADD JAR`` is taken out of the script and its
   jar given to the compile (as the watchers pass ``--jar``) when it is readable here;
3. the submitting statement: an ``INSERT`` (or ``EXECUTE INSERT``), a ``CREATE TABLE … AS``,
   an ``EXECUTE STATEMENT SET BEGIN … END``, or the SQL client's ``BEGIN STATEMENT SET;`` …
   ``END;`` block (then the last statement is ``END``, and the INSERTs since ``BEGIN`` are the
   job's); a v4 script (one recorded entry of several statements) is the job with its sinks,
   its other statements filtered as the session's.

Left out: what only reads or shows (``SELECT`` and ``WITH`` queries, ``SHOW``, ``DESCRIBE``,
``EXPLAIN``, ``EXECUTE PLAN``) and the statements that submitted *other* jobs (earlier INSERTs,
statement sets and ``CREATE TABLE … AS``: their sinks are not this job's; a table an earlier
``CREATE TABLE … AS`` made is then unknown to this compile, which the planner's stand-ins cover
for a read, as for any table it cannot load).

The job's name is Flink's: ``pipeline.name`` as the properties and the kept ``SET``/``RESET``
statements leave it (openlineage-flink names its job the same way), else Flink's own default,
``insert-into_`` and the sinks' full names joined by ``,`` (``TableEnvironmentImpl``), which
:func:`flink_default_name` reconstructs from the text and the session's ``USE`` statements.

The one splitter and classifier is :mod:`planlineage.script`; nothing here parses SQL further
than the name of an INSERT's target.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from planlineage import script
from planlineage.script import Kind

#: Flink's defaults: a session starts in these until ``USE CATALOG`` / ``USE`` says otherwise.
DEFAULT_CATALOG = "default_catalog"
DEFAULT_DATABASE = "default_database"
PIPELINE_NAME = "pipeline.name"

#: Earlier statements of these kinds never reach the compile: they read, show, or submitted
#: another job (markers of an earlier ``BEGIN STATEMENT SET`` block included).
_LEFT_OUT = {*script.NOT_EXECUTED, *script.SINKS}

_IDENTIFIER_PART = r"(?:`(?:[^`]|``)+`|[A-Za-z_$][\w$]*)"
_TARGET = re.compile(
    rf"^\s*(?:EXECUTE\s+)?INSERT\s+(?:INTO|OVERWRITE)\s+(?:TABLE\s+)?"
    rf"({_IDENTIFIER_PART}(?:\s*\.\s*{_IDENTIFIER_PART}){{0,2}})",
    re.IGNORECASE,
)
_CTAS_TARGET = re.compile(
    rf"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMPORARY\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?"
    rf"({_IDENTIFIER_PART}(?:\s*\.\s*{_IDENTIFIER_PART}){{0,2}})",
    re.IGNORECASE,
)
_USE = re.compile(rf"^\s*USE\s+(CATALOG\s+)?({_IDENTIFIER_PART}(?:\s*\.\s*{_IDENTIFIER_PART})?)\s*$", re.IGNORECASE)
_QUOTED_PATH = re.compile(r"'((?:[^']|'')*)'")


class NotReportable(ValueError):
    """The session's statements hold no job to report (one line saying why)."""


class NoSink(NotReportable):
    """The job writes no table: a query's (``SELECT``) job, which every query of a session starts."""


@dataclass
class JobScript:
    """What the compile of one submitted job is given, and the job's Flink name."""

    sql: str  # the script, statements ended by ``;`` and a newline
    jars: list[str] = field(default_factory=list)  # ADD JAR paths readable here, in order
    pipeline_name: str | None = None  # ``pipeline.name`` as the session left it (None: not set)
    default_name: str = ""  # Flink's default job name for the submitting statement
    conf: dict[str, str] = field(default_factory=dict)  # the session's configuration: properties, then SETs
    warnings: list[str] = field(default_factory=list)

    @property
    def job_name(self) -> str:
        """The Flink job's name: ``pipeline.name`` when set, else Flink's default."""
        return self.pipeline_name or self.default_name


def quoted_set(key: str, value: str) -> str:
    """``SET 'key' = 'value'`` with quotes doubled, the form Flink's parser accepts."""
    return "SET '{}' = '{}'".format(key.replace("'", "''"), value.replace("'", "''"))


def build(statements: Iterable[str], properties: Mapping[str, str] | None = None, readable=os.access) -> JobScript:
    """The script of the job the last of ``statements`` submitted.  Raises :class:`NotReportable`
    when the last statement submits no job with a sink (a ``SELECT`` also starts a job)."""
    parsed: list[list[script.Statement]] = [script.split(text) for text in statements]
    parsed = [group for group in parsed if group]
    if not parsed:
        raise NotReportable("the session recorded no statement")
    last = parsed[-1]
    unit, before = _submitting_unit(parsed)
    if not any(s.kind in script.SINKS for s in unit):
        raise NoSink(f"its statement `{_short(last[-1].sql)}` writes no table (a query's job has no sink)")
    opening = {str(k): str(v) for k, v in (properties or {}).items()}
    conf = dict(opening)
    jars: list[str] = []
    warnings: list[str] = []
    kept = [quoted_set(key, value) for key, value in opening.items()]
    catalog, database = DEFAULT_CATALOG, DEFAULT_DATABASE
    sinks: list[str] = []
    for statement, own in [(s, False) for s in before] + [(s, True) for s in unit]:
        if own and (statement.kind in script.SINKS or statement.kind is Kind.STATEMENT_SET_MARKER):
            kept.append(statement.sql)  # the job's own statements, as sent
            sinks.append(_sink_name(statement.sql, catalog, database))
            sinks.extend(_statement_set_sinks(statement, catalog, database))
            continue
        # Before the job, and a v4 script's other statements: what shapes the session only.
        if statement.kind in _LEFT_OUT:
            continue
        if statement.kind is Kind.ADD_JAR:
            _add_jar(statement.sql, jars, warnings, readable)
            continue
        if statement.words[:2] == ["REMOVE", "JAR"]:
            path = _path(statement.sql)
            jars[:] = [j for j in jars if j != path]
            continue
        if statement.kind is Kind.SET and statement.set_pair:
            conf[statement.set_pair[0]] = statement.set_pair[1]
        elif statement.kind is Kind.RESET:
            _reset(statement, conf, opening)
        elif statement.words[:1] == ["USE"]:
            catalog, database = _use(statement.sql, catalog, database)
        kept.append(statement.for_planner())
    return JobScript(
        sql="".join(f"{sql};\n" for sql in kept),
        jars=jars,
        pipeline_name=conf.get(PIPELINE_NAME) or None,
        default_name=flink_default_name([name for name in sinks if name]),
        conf=conf,
        warnings=warnings,
    )


def flink_default_name(sinks: list[str]) -> str:
    """Flink's name for a job without ``pipeline.name``: ``insert-into_`` and its sinks' full
    names (``catalog.database.table``) joined by ``,``."""
    return "insert-into_" + ",".join(sinks)


def _submitting_unit(parsed: list[list[script.Statement]]) -> tuple[list[script.Statement], list[script.Statement]]:
    """(the statements of the submitting unit, every statement before it)."""
    flat = [s for group in parsed for s in group]
    last = parsed[-1]
    if last[-1].kind is Kind.STATEMENT_SET_MARKER and last[-1].words[:1] == ["END"]:
        # The SQL client's block: INSERTs sent one by one after BEGIN STATEMENT SET, run at END.
        end = len(flat) - 1
        for begin in range(end - 1, -1, -1):
            if flat[begin].kind is Kind.STATEMENT_SET_MARKER and flat[begin].words[:1] == ["BEGIN"]:
                return flat[begin : end + 1], flat[:begin]
        raise NotReportable("its END closes no BEGIN STATEMENT SET the proxy recorded")
    start = len(flat) - len(last)
    return flat[start:], flat[:start]


def _statement_set_sinks(statement: script.Statement, catalog: str, database: str) -> list[str]:
    """The targets of an ``EXECUTE STATEMENT SET BEGIN … END``'s INSERTs ([] for anything else)."""
    if statement.kind is not Kind.STATEMENT_SET:
        return []
    body = re.sub(r"(?is)^\s*EXECUTE\s+STATEMENT\s+SET\s+BEGIN", "", statement.sql)
    body = re.sub(r"(?is)\bEND\s*$", "", body)
    return [_sink_name(inner.sql, catalog, database) for inner in script.split(body) if inner.kind is Kind.INSERT]


def _unquote(part: str) -> str:
    part = part.strip()
    return part[1:-1].replace("``", "`") if part.startswith("`") else part


def _parts(dotted: str) -> list[str]:
    return [_unquote(p) for p in re.findall(_IDENTIFIER_PART, dotted)]


def _sink_name(sql: str, catalog: str, database: str) -> str:
    """``catalog.database.table`` of an INSERT's (or CTAS's) target, as Flink's summary string
    writes it; '' for anything else (a statement set's body is read by its caller)."""
    match = _TARGET.match(sql) or _CTAS_TARGET.match(sql)
    if match is None:
        return ""
    parts = _parts(match.group(1))
    full = [catalog, database][: 3 - len(parts)] + parts
    return ".".join(full)


def _use(sql: str, catalog: str, database: str) -> tuple[str, str]:
    match = _USE.match(sql)
    if match is None:
        return catalog, database
    parts = _parts(match.group(2))
    if match.group(1):  # USE CATALOG c: the catalog's own default database, unknown here
        return parts[0], database
    if len(parts) == 2:
        return parts[0], parts[1]
    return catalog, parts[0]


def _reset(statement: script.Statement, conf: dict[str, str], opening: Mapping[str, str]) -> None:
    """``RESET 'key'`` takes a key back to the session's opening value; ``RESET`` all of them."""
    key = _path(statement.sql) if "'" in statement.sql else " ".join(statement.sql.split()[1:2])
    if not key:
        conf.clear()
        conf.update(opening)
    elif key in opening:
        conf[key] = opening[key]
    else:
        conf.pop(key, None)


def _path(sql: str) -> str:
    match = _QUOTED_PATH.search(sql)
    return match.group(1).replace("''", "'") if match else ""


def _add_jar(sql: str, jars: list[str], warnings: list[str], readable) -> None:
    path = _path(sql)
    local = path[len("file://") :] if path.startswith("file://") else path
    if local and os.path.isfile(local) and readable(local, os.R_OK):
        if local not in jars:
            jars.append(local)
    else:
        warnings.append(
            f"`{_short(sql)}`: the jar is not readable here (compiled without it; a connector or UDF it holds "
            "goes through the planner's stand-in or may fail the compile)"
        )


def _short(sql: str, limit: int = 80) -> str:
    """The statement on one line, secrets masked, cut to ``limit``: masked before it is cut, since
    a value cut off before its closing quote no longer looks like a secret to the masking."""
    from planlineage.registry.secrets import redact_text

    flat = " ".join(redact_text(sql).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
