"""What `ui`, `graph` and `doctor` are pointed at, told apart by content (a suffix can lie):

- a folder: the `.sql` scripts below it, compiled;
- a SQL script (a `.sql` file, or text whose statements are SQL): compiled with the version's
  planner, as `extract` compiles it;
- `extract --format json`'s document (one job), or `extract DIR`'s JSON lines (one per script):
  the lineage they hold;
- OpenLineage events (JSON lines, a log4j log such as gravitino_lineage.log, a JSON array,
  pretty-printed events, gzip): read as before (doctor.sources), and tailed by `ui`.

Scripts and documents become the START events `submit` would report for them
(planlineage.script_events); they are made once, in memory: nothing is written and nothing sent.
Anything else is said to be none of these, with what each expects.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from planlineage.errors import UnreadableInput

from .sources import UnreadableLine, events_in_line, is_event, scrub

#: How much of a file is looked at to tell what it is.
_HEAD_BYTES = 256 * 1024
#: Lines of a file searched for an OpenLineage event before it is taken for something else.
_HEAD_LINES = 200
#: The largest extract document read whole to recognise it (extract's output of one script).
_DOCUMENT_BYTES = 64 << 20
_DECODER = json.JSONDecoder()

SCRIPT, DOCUMENT, DOCUMENT_LINES, EVENTS = "script", "extract document", "extract lines", "events"

#: Words a SQL statement starts with (the splitter takes any text for a statement).
_SQL_WORDS = frozenset(
    [
        "CREATE",
        "ALTER",
        "DROP",
        "USE",
        "INSERT",
        "EXECUTE",
        "SET",
        "RESET",
        "ADD",
        "SELECT",
        "WITH",
        "VALUES",
        "EXPLAIN",
        "SHOW",
        "DESCRIBE",
        "DESC",
        "BEGIN",
        "END",
        "LOAD",
        "UNLOAD",
        "REPLACE",
        "DELETE",
        "UPDATE",
        "MERGE",
        "TRUNCATE",
        "ANALYZE",
        "CALL",
    ]
)

NONE_OF_THESE = (
    "is none of what this command reads: not a SQL script, not `planlineage extract --format json` output, "
    "and no OpenLineage event in it; pass a .sql script, a folder of them, extract's JSON output, or "
    "OpenLineage events as JSON lines (Gravitino's gravitino_lineage.log, a file transport's output)"
)


@dataclass
class PageInputs:
    """The inputs resolved: event files (read by doctor.sources as before) and the events made
    from scripts and extract documents, with one line per input saying what it gave."""

    files: list[str] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)


def kind_of(path: Path) -> str:
    """SCRIPT, DOCUMENT, DOCUMENT_LINES or EVENTS, from the file's content; raises UnreadableInput
    for a file that is none of them (or cannot be read)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(_HEAD_BYTES)
            size = path.stat().st_size
    except FileNotFoundError:
        raise UnreadableInput(f"{path}: no such file or folder") from None
    except OSError as error:
        raise UnreadableInput(f"cannot read {path}: {error.strerror or error}") from None
    if head[:2] == b"\x1f\x8b":
        return EVENTS  # a rolled, gzip-compressed log
    text = head.decode("utf-8", errors="replace")
    stripped = text.lstrip("\ufeff \t\r\n")
    if stripped[:1] in "{[" and stripped:
        found = _json_kind(path, text, len(head) >= size, size)
        if found:
            return found
    lines = text.splitlines()[:_HEAD_LINES]
    for line in lines:
        try:
            if events_in_line(line):
                return EVENTS
        except UnreadableLine:
            return EVENTS  # JSON that looks like an event: the reader names the line
    if path.suffix.lower() == ".sql" or _looks_like_sql(text):
        return SCRIPT
    if stripped[:1] in "{[" and stripped:
        return EVENTS  # JSON beyond the head: the reader says whether it holds any event
    raise UnreadableInput(f"{path} {NONE_OF_THESE}")


def _json_kind(path: Path, head: str, whole: bool, size: int) -> str | None:
    """DOCUMENT, DOCUMENT_LINES or EVENTS for a file that starts with JSON; None when its first
    value says nothing (the lines are searched for events next). Only the head is decoded, unless
    its first value goes on beyond it (a document larger than the head, read whole up to a bound):
    a log of JSON lines is never read whole here."""
    from planlineage.script_events import document_lineage

    text = head.lstrip("\ufeff \t\r\n")
    try:
        first, end = _DECODER.raw_decode(text)
        alone = not text[end:].strip()
    except (ValueError, RecursionError):
        if whole or size > _DOCUMENT_BYTES:
            return None
        try:
            first, alone = json.loads(path.read_text(encoding="utf-8")), True
        except (ValueError, OSError, RecursionError):
            return None
    if document_lineage(first) is not None:
        return DOCUMENT if alone else DOCUMENT_LINES
    if _is_extract_line(first):
        return DOCUMENT_LINES  # `extract DIR`: one line per script
    if is_event(first) or (isinstance(first, list) and any(is_event(e) for e in first)):
        return EVENTS
    return None


def _is_extract_line(obj: Any) -> bool:
    """One line of `extract DIR`: {"script", "ok", "lineage" | "error"}."""
    return isinstance(obj, dict) and isinstance(obj.get("script"), str) and isinstance(obj.get("ok"), bool)


def _looks_like_sql(text: str) -> bool:
    from planlineage import script as sql_script

    try:
        statements = sql_script.split(text)
    except sql_script.ScriptError:
        return False
    return bool(statements) and all(s.sql.split(None, 1)[0].upper().strip("(") in _SQL_WORDS for s in statements)


def resolve(
    paths: Sequence[str],
    *,
    flink_version: str | None = None,
    job_namespace: str | None = None,
    err: IO[str] = sys.stderr,
) -> PageInputs:
    """Each path told apart and turned into events (scripts compiled once, together). Raises
    UnreadableInput for a path that is nothing this reads, or when no script could be compiled
    and nothing else was given."""
    from planlineage.backfill import collect_scripts

    result = PageInputs()
    scripts: list[Path] = []
    documents: list[tuple[Path, str]] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            found = collect_scripts([name])
            if not found:
                raise UnreadableInput(
                    f"{path} is a folder without a .sql script below it; pass the scripts, or the event files inside it"
                )
            scripts.extend(found)
            continue
        kind = kind_of(path)
        if kind == EVENTS:
            result.files.append(name)
        elif kind == SCRIPT:
            scripts.append(path)
        else:
            documents.append((path, kind))
    if not scripts and not documents:
        return result
    from planlineage.lifecycle.sql_facet import limit_of
    from planlineage.settings import Settings

    settings = Settings()
    namespace = job_namespace or settings.config().namespace
    limit = limit_of(settings)
    for path, kind in documents:
        _add_documents(result, path, kind, namespace, limit)
    if scripts:
        _add_scripts(result, scripts, flink_version, namespace, limit, err)
    return result


def _add(result: PageInputs, lineage, *, job_name: str, sql: str | None, namespace: str, limit: int) -> int:
    from planlineage.script_events import start_events

    if not lineage.has_datasets():
        return 0
    events = start_events(lineage, job_name=job_name, namespace=namespace, sql=sql, limit=limit)
    result.events.extend(scrub(event) for event in events)
    return len(events)


def _add_scripts(
    result: PageInputs, scripts: list[Path], flink_version: str | None, namespace: str, limit: int, err: IO[str]
) -> None:
    from planlineage.errors import PlanlineageError
    from planlineage.printable import visible
    from planlineage.script_events import compile_scripts, job_name_of

    try:
        compiled = compile_scripts(scripts, flink_version=flink_version, err=err)
    except PlanlineageError as error:  # the planner cannot be had (an unsupported version, no JDK, ...)
        raise UnreadableInput(f"the scripts cannot be compiled: {error}") from None
    failed = []
    for done in compiled:
        if done.lineage is None:
            failed.append(done)
            result.sources.append(f"{done.path}: not compiled: {done.error}")
            print(f"planlineage: {visible(str(done.path))} is left out: {visible(done.error or '')}", file=err)
            continue
        count = _add(
            result,
            done.lineage,
            job_name=job_name_of(done.sql, done.path),
            sql=done.sql,
            namespace=namespace,
            limit=limit,
        )
        what = f"{count} event(s)" if count else "no event (it writes no table planlineage can name)"
        result.sources.append(f"{done.path}: script compiled: {what}")
    if len(failed) == len(compiled) and not result.files and not result.events:
        first = failed[0]
        raise UnreadableInput(
            f"{first.path} cannot be compiled: {first.error}"
            if len(failed) == 1
            else f"none of the {len(failed)} scripts compiled (the first, {first.path}: {first.error})"
        )


def _add_documents(result: PageInputs, path: Path, kind: str, namespace: str, limit: int) -> None:
    from planlineage.script_events import document_lineage, job_name_of

    if kind == DOCUMENT:
        lineage = document_lineage(json.loads(path.read_text(encoding="utf-8")))
        count = _add(result, lineage, job_name=job_name_of(None, path), sql=None, namespace=namespace, limit=limit)
        result.sources.append(f"{path}: extract document: {count} event(s)")
        return
    count = jobs = 0
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if not isinstance(obj, dict):
                continue
            lineage = document_lineage(obj.get("lineage") if "script" in obj else obj)
            if lineage is None:
                continue
            script = Path(str(obj.get("script") or path))
            sql = _read_quietly(script) if "script" in obj else None
            jobs += 1
            count += _add(result, lineage, job_name=job_name_of(sql, script), sql=sql, namespace=namespace, limit=limit)
    result.sources.append(f"{path}: extract lines: {jobs} job(s), {count} event(s)")


def _read_quietly(path: Path) -> str | None:
    """The script a line of `extract DIR` names, when it is still there (its job name and SQL)."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
