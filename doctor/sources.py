"""Where reported OpenLineage events come from: event files, and the runs planlineage recorded.

Event files are read as JSON lines, whoever wrote them:

- Gravitino's log sink (`gravitino_lineage.log`) writes each RunEvent as the message of a log4j
  line, so a timestamp, level, thread and logger come before the JSON;
- planlineage's file transport and openlineage-python's FileTransport write bare JSON lines;
- a dump may be one JSON array (on one line, or pretty-printed), or pretty-printed events.

So each line is searched for the first `{` (or `[{`) that starts a JSON object that is an
OpenLineage event (or an array of them: each element is an event); anything else (log lines of
other loggers, stack traces, blank lines) is skipped and counted. A line that is JSON but cannot
be used (nested deeper than the parser goes, or holding half a UTF-16 character) is counted as
unreadable, named by its number, and skipped; in a file that is not JSON lines, so is a `{` that
starts no JSON value, or one the file ends inside (reading goes on after it). A file that holds
no event at all is an error: pointing the doctor at the wrong file must not look like "no
splits". Every event read is scrubbed of secrets (`scrub`) before anything else sees it: other
producers' events may carry passwords in SQL facets, properties or URLs.

Files are read as a stream (`iter_events` is a generator): only the line (or, in a pretty-printed
file, the event) being read is held, so a log of any size is read in memory bounded by its
longest line.

The state store is read strictly read-only (SQLite `mode=ro`, see `_connect_read_only`): the
doctor may run next to a platform that is submitting jobs, and must never create, migrate or
quarantine its database, nor leave files next to it.
Each recorded run becomes the events planlineage built for it (the emitter's own job pairing),
with the run's last state as the event type.
"""

from __future__ import annotations

import gzip
import json
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from planlineage.errors import StoreError, UnreadableInput

_DECODER = json.JSONDecoder()
#: Attempts per line to find the JSON object after a prefix (a log line can hold many `{`).
_MAX_ATTEMPTS = 8


def is_event(obj: Any) -> bool:
    """A RunEvent or JobEvent (a job with a name), or a DatasetEvent."""
    if not isinstance(obj, dict):
        return False
    job = obj.get("job")
    if isinstance(job, dict) and isinstance(job.get("name"), str):
        return True
    return isinstance(obj.get("dataset"), dict) and "eventTime" in obj


def scrub(value: Any, key: str = "") -> Any:
    """An event with every secret masked (registry.secrets): another producer's SQL facet, a
    namespace with URL credentials or a `password` property must not reach a report or a page."""
    from planlineage.registry.secrets import MASK, is_secret_key, redact_sql, redact_text

    if isinstance(value, dict):
        return {k: scrub(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, key) for v in value]
    if isinstance(value, str) and value:
        if key and is_secret_key(key):
            return MASK
        # a `sql` facet's query (the only SQL text of an event) may also hide one in a comment
        return redact_sql(value) if key == "query" else redact_text(value)
    return value


TOO_DEEP = "nested too deeply"
NOT_UNICODE = "a lone surrogate escape (\\ud800-\\udfff), not Unicode text"


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class UnreadableLine(Exception):
    """A piece of input that is JSON but cannot be used; its argument says why."""


def _scrubbed(obj: dict, escaped_surrogate: bool) -> dict:
    """The event scrubbed; `escaped_surrogate`: its text holds an escaped lone surrogate such as
    `\\ud800` (cheap to look for in the text, costly in the decoded value)."""
    try:
        event = scrub(obj)
    except RecursionError:
        raise UnreadableLine(TOO_DEEP) from None
    if escaped_surrogate and _has_surrogate(event):
        # JSON can escape half a character; no UTF-8 store or page can hold such a name
        raise UnreadableLine(NOT_UNICODE)
    return event


def _has_surrogate(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _decode(text: str, start: int) -> tuple[Any, int]:
    try:
        return _DECODER.raw_decode(text, start)
    except RecursionError:
        raise UnreadableLine(TOO_DEEP) from None


#: Where a JSON value that can hold events starts: an object, or an array of objects (a log4j
#: prefix's `[thread]` is not one).
_VALUE_START = re.compile(r"\{|\[\s*\{")


def _next_value(line: str, start: int) -> int:
    """The next `{` or `[{` at or after `start` (-1: none)."""
    found = _VALUE_START.search(line, start)
    return found.start() if found else -1


def events_in_line(line: str) -> list[dict]:
    """The events of one line: a JSON object, or a JSON array of them (a dump on one line), after
    any prefix (a log4j line's timestamp, level, `[thread]` and logger). Raises UnreadableLine."""
    start = _next_value(line, 0)
    escaped_surrogate = _SURROGATE_ESCAPE.search(line) is not None
    attempts = 0
    while start >= 0 and attempts < _MAX_ATTEMPTS:
        attempts += 1
        try:
            obj, _ = _decode(line, start)
        except ValueError:
            start = _next_value(line, start + 1)
            continue
        if isinstance(obj, list):
            found = [_scrubbed(e, escaped_surrogate) for e in obj if is_event(e)]
            if found:
                return found
            start = _next_value(line, start + 1)  # an array without events: look further
            continue
        return [_scrubbed(obj, escaped_surrogate)] if is_event(obj) else []
    return []


#: Characters read at a time from a file that is not JSON lines.
_CHUNK = 1 << 16
#: The longest single event read from such a file; beyond it the rest of the file is unreadable.
_MAX_EVENT_CHARS = 64 << 20

NOT_JSON = "not JSON"
CUT_SHORT = "cut short: the file ends inside a JSON value"
TOO_LONG = f"a JSON value longer than {_MAX_EVENT_CHARS} characters (the rest of the file is not read)"
#: The rest of a file that ends inside one token (a string, a number, `true`…): cut short, not invalid.
_LAST_TOKEN = re.compile(r'(?:"(?:[^"\\\n]|\\.)*\\?|[^\s"{}\[\],:]*)\s*')


def _read_lines(handle: IO[str], tail: str, size: int) -> tuple[str, str, bool]:
    """`tail` and at least `size` characters more, up to the last line end read: (that text, the
    rest of its last line, whether the file has ended). A value cut at a line end is cut between
    two tokens (a JSON string holds no line end), so the decoder stops at the very end of the text
    when a value goes on; cut inside a string or a number, it would stop before and the value
    would look like invalid JSON. A line longer than `_MAX_EVENT_CHARS` is cut where it is."""
    pieces, length = [tail], len(tail)
    while True:
        more = handle.read(size)
        if not more:
            return "".join(pieces), "", True
        newline = more.rfind("\n") + 1
        if newline:
            pieces.append(more[:newline])
            return "".join(pieces), more[newline:], False
        pieces.append(more)
        length += len(more)
        if length > _MAX_EVENT_CHARS:
            return "".join(pieces), "", False


def _events_in_document(handle: IO[str], counts: FileEvents) -> Iterator[dict]:
    """The events of a file that is one JSON array or a sequence of pretty-printed objects, read
    in chunks: each top-level object is decoded on its own (an array's brackets and commas are
    skipped), so only the event being read is held, never the whole file.

    A `{` that starts no JSON value (or one the file ends inside) is counted as unreadable once,
    with the `{`s inside it, and reading goes on from the next `{`: an event after it, or inside
    it, is still read. A value that goes on past the text read so far is read further, up to
    `_MAX_EVENT_CHARS`."""
    buffer, tail, pos, eof = "", "", 0, False
    counted_to = 0  # where the last value counted as unreadable went wrong: a `{` before is part of it
    while True:
        start = buffer.find("{", pos)
        if start < 0:
            if eof:
                return
            buffer, tail, eof = _read_lines(handle, tail, _CHUNK)
            pos = counted_to = 0
            continue
        try:
            obj, end = _decode(buffer, start)
        except ValueError as error:
            # where the decoder stopped; at the end of the text read, the value may go on after it
            where = error.pos if isinstance(error, json.JSONDecodeError) else start + 1
            if where < len(buffer) or eof:
                if start >= counted_to:
                    cut = eof and _LAST_TOKEN.fullmatch(buffer, where) is not None
                    counts.unreadable_at(CUT_SHORT if cut else NOT_JSON, None)
                counted_to, pos = max(counted_to, where), start + 1
                continue
            if len(buffer) - start > _MAX_EVENT_CHARS:
                counts.unreadable_at(TOO_LONG, None)
                return
            # doubles: linear in the event's size
            more, tail, eof = _read_lines(handle, tail, max(_CHUNK, len(buffer) - start))
            buffer, pos, counted_to = buffer[start:] + more, 0, max(0, counted_to - start)
            continue
        except UnreadableLine as why:
            counts.unreadable_at(why.args[0], None)
            return  # where a too-deep value ends is unknown: the rest cannot be read
        pos = end
        if is_event(obj):
            try:
                event = _scrubbed(obj, _SURROGATE_ESCAPE.search(buffer, start, end) is not None)
            except UnreadableLine as why:
                counts.unreadable_at(why.args[0], None)
                continue
            counts.events += 1
            yield event


#: Line numbers of unreadable lines named in a report, per reason.
_LINES_NAMED = 5


@dataclass
class FileEvents:
    """What reading one file found, filled in while its events are read."""

    path: str
    events: int = 0
    skipped_lines: int = 0
    #: lines (in a file that is not JSON lines: values) that could not be used, by reason:
    #: (how many, the first few line numbers)
    unreadable: dict[str, tuple[int, list[int]]] = field(default_factory=dict)

    def unreadable_at(self, reason: str, line: int | None) -> None:
        count, lines = self.unreadable.get(reason, (0, []))
        if line is not None and len(lines) < _LINES_NAMED:
            lines.append(line)
        self.unreadable[reason] = (count + 1, lines)

    def describe(self) -> str:
        text = f"{self.path}: {self.events} event(s), {self.skipped_lines} other line(s) skipped"
        if self.unreadable:
            total = sum(count for count, _ in self.unreadable.values())
            text += f", {total} unreadable line(s) ({self.reasons()})"
        return text

    def reasons(self) -> str:
        """`nested too deeply: lines 2, 3; … : line 7` (line numbers: the first few of each reason)."""
        parts = []
        for reason, (count, lines) in self.unreadable.items():
            more = ", …" if count > len(lines) else ""
            where = f": line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}{more}" if lines else ""
            parts.append(reason + where)
        return "; ".join(parts)


def _open_text(path: str) -> IO[str]:
    """The file as text; gzip-compressed when it starts with gzip's magic bytes (Gravitino's log
    sink rolls `gravitino_lineage.log` into `gravitino_lineage_<date>.log.gz`)."""
    with open(path, "rb") as probe:
        compressed = probe.read(2) == b"\x1f\x8b"
    if compressed:
        return gzip.open(path, "rt", encoding="utf-8", errors="strict")
    return open(path, encoding="utf-8", errors="strict")


def iter_events(path: str, counts: FileEvents | None = None) -> Iterator[dict]:
    """The events of one file, one at a time, read line by line: a log sink file can be larger
    than memory, so nothing but the line being read is held. `counts` is filled in as it goes.
    Raises UnreadableInput (when the file cannot be read, or holds no event at all)."""
    counts = counts if counts is not None else FileEvents(path)
    try:
        with _open_text(path) as handle:
            for number, line in enumerate(handle, 1):
                try:
                    found = events_in_line(line)
                except UnreadableLine as why:
                    counts.unreadable_at(why.args[0], number)
                    continue
                if found:
                    counts.events += len(found)
                    yield from found
                elif line.strip():
                    counts.skipped_lines += 1
        if not counts.events:  # not JSON lines: one JSON array, or pretty-printed events
            as_lines = counts.skipped_lines, counts.unreadable
            counts.skipped_lines, counts.unreadable = 0, {}
            with _open_text(path) as handle:
                yield from _events_in_document(handle, counts)
            if not counts.events:
                counts.skipped_lines, counts.unreadable = as_lines
    except FileNotFoundError:
        raise UnreadableInput(f"{path}: no such file; pass a file of OpenLineage events (JSON lines)") from None
    except IsADirectoryError:
        raise UnreadableInput(f"{path} is a folder; pass the event files inside it") from None
    except (gzip.BadGzipFile, EOFError):
        raise UnreadableInput(f"{path} is a damaged gzip file; pass the rolled log whole, or unpacked") from None
    except UnicodeDecodeError:
        raise UnreadableInput(f"{path} is not UTF-8 text; OpenLineage events are JSON lines") from None
    except OSError as error:
        raise UnreadableInput(f"cannot read {path}: {error.strerror or error}") from None
    if not counts.events:
        unreadable = f", unreadable: {counts.reasons()}" if counts.unreadable else ""
        raise UnreadableInput(
            f"{path} holds no OpenLineage event ({counts.skipped_lines} non-event line(s){unreadable}); expected "
            "JSON lines such as Gravitino's gravitino_lineage.log or a file transport's output"
        )


# -- the lifecycle store ----------------------------------------------------------------------------


@dataclass
class StateRuns:
    path: str
    events: list[dict] = field(default_factory=list)
    sql: list[str] = field(default_factory=list)  # the runs' (redacted) scripts: Kafka evidence
    rules: str | None = None  # the configured lineage.rules file, if any
    runs: int = 0


def unreadable_store(path, error: sqlite3.DatabaseError) -> UnreadableInput:
    """A state database the doctor cannot read, and what mends it."""
    return UnreadableInput(
        f"state database {path} cannot be read ({error}); the doctor only reads it: the next lifecycle "
        "command that uses it (e.g. `planlineage flush`) moves a corrupt store aside and starts a fresh one"
    )


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that cannot write and leaves no file behind.

    A WAL database opened read-only still creates `-wal`/`-shm` files when there are none (and
    cannot remove them again). When no `-wal` exists, every committed page is in the main file
    and no writer is connected, so the file is opened `immutable` (no locks, no side files).
    When a writer is active, its `-wal`/`-shm` exist already and a plain read-only open shares them.
    """
    wal = Path(f"{path}-wal")
    flags = "mode=ro" if wal.exists() else "mode=ro&immutable=1"
    conn = sqlite3.connect(f"file:{path}?{flags}", uri=True, timeout=5.0)
    conn.row_factory = sqlite3.Row
    return conn


def read_state(store_path: Path | None = None) -> StateRuns:
    """The runs recorded in the lifecycle store, as the events planlineage reports for them."""
    from planlineage.store.sqlite import DB_NAME, home_dir

    if store_path is None:
        from planlineage.store import store_url

        if store_url()[0]:  # the node uses a shared PostgreSQL store: its runs are there
            return _read_shared_state()
    path = store_path or home_dir() / DB_NAME
    result = StateRuns(str(path))
    if not path.is_file():
        return result  # nothing recorded (nothing until configured): no runs, and nothing created
    try:
        conn = _connect_read_only(path)
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            rows = [dict(r) for r in conn.execute("SELECT * FROM runs ORDER BY created")] if "runs" in tables else []
            stored = (
                {r["key"]: r["value"] for r in conn.execute("SELECT key, value FROM settings")}
                if "settings" in tables
                else {}
            )
        finally:
            conn.close()
    except sqlite3.DatabaseError as error:
        raise unreadable_store(path, error) from None
    from planlineage.settings import Settings

    if not stored:  # settings live in their own file next to the store (a version-1 store held them)
        from planlineage.store.sqlite import Store

        try:
            stored = Settings(Store(path)).stored()
        except Exception:
            stored = {}
    return _fill(result, rows, stored)


def _read_shared_state() -> StateRuns:
    """The runs of the node's shared store (reads only: a store not migrated yet has none)."""
    from planlineage.settings import Settings
    from planlineage.store import open_store

    try:
        store = open_store()
        result = StateRuns(store.describe())  # the URL with its password masked
        rows = store.read(lambda c: [dict(r) for r in c.execute("SELECT * FROM runs ORDER BY created")], default=[])
        stored = Settings(store).stored()
    except StoreError as error:
        raise UnreadableInput(
            f"{error}; the doctor reads the state store named by lineage.store (or PLANLINEAGE_STORE): "
            "check that it is reachable, or leave --state out"
        ) from None
    return _fill(result, rows, stored)


def _fill(result: StateRuns, rows: list[dict[str, Any]], stored: dict[str, str]) -> StateRuns:
    from planlineage.settings import Settings

    result.rules = Settings(store=None, environ=None).source("lineage.rules", _stored=stored)[0]
    result.runs = len(rows)
    for row in rows:
        result.events.extend(_run_events(row))
        if row.get("sql"):
            result.sql.append(row["sql"])
    return result


def _run_events(row: dict[str, Any]) -> list[dict]:
    """The events of one recorded run (none while its lineage is still being computed)."""
    if not row.get("lineage"):
        return []
    from planlineage.document import JobLineage
    from planlineage.emitter import events as ev

    try:
        lineage = JobLineage.stored(json.loads(row["lineage"]))
    except ValueError:
        return []
    built = ev.build_events(
        lineage,
        job_name=row["job_name"],
        job_namespace=row["namespace"],
        run_id=row["run_id"],
        event_type=row.get("last_event") or "START",
        sql=row.get("sql"),
        event_time=row.get("updated"),
    )
    return [_with_flink_tables(ev.to_dict(e), lineage) for e in built]


def _with_flink_tables(event: dict, lineage) -> dict:
    """The event with each dataset's Flink table as a TABLE symlink, for the doctor's eyes only.

    The events sent carry no in-memory catalog's name (it names nothing outside the job), but the
    recorded document knows which Flink table each dataset is: the doctor joins openlineage-flink's
    fallback dataset (an empty namespace and that very `catalog.database.table`) to it by this."""
    tables: dict[tuple[str, str], set[str]] = {}
    for sink in lineage.sinks:
        for table, datasets in [(sink.table, sink.datasets), *((t.table, t.datasets) for t in sink.inputs)]:
            for dataset in datasets:
                tables.setdefault((dataset.namespace, dataset.name), set()).add(table)
    for side in ("inputs", "outputs"):
        for dataset in event.get(side) or []:
            names = tables.get((dataset.get("namespace"), dataset.get("name")), set())
            facets = dataset.setdefault("facets", {})
            links = facets.setdefault("symlinks", {"identifiers": []}).setdefault("identifiers", [])
            known = {(link.get("name"), str(link.get("type") or "").upper()) for link in links}
            links.extend(
                {"namespace": dataset["namespace"], "name": name, "type": "TABLE"}
                for name in sorted(names)
                if name and (name, "TABLE") not in known
            )
            if not links:
                del facets["symlinks"]
    return event
