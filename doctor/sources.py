"""Where reported OpenLineage events come from: event files, and the runs planlineage recorded.

Event files are read as JSON lines, whoever wrote them:

- Gravitino's log sink (`gravitino_lineage.log`) writes each RunEvent as the message of a log4j
  line, so a timestamp, level, thread and logger come before the JSON;
- planlineage's file transport and openlineage-python's FileTransport write bare JSON lines;
- a dump may be one JSON array, or one pretty-printed event per file.

So each line is searched for the first `{` that starts a JSON object that is an OpenLineage
event; anything else (log lines of other loggers, stack traces, blank lines) is skipped and
counted. A file that holds no event at all is an error: pointing the doctor at the wrong file
must not look like "no splits". Every event read is scrubbed of secrets (`scrub`) before anything
else sees it: other producers' events may carry passwords in SQL facets, properties or URLs.

The state store is read strictly read-only (SQLite `mode=ro`, see `_connect_read_only`): the
doctor may run next to a platform that is submitting jobs, and must never create, migrate or
quarantine its database, nor leave files next to it.
Each recorded run becomes the events planlineage built for it (the emitter's own job pairing),
with the run's last state as the event type.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from planlineage.errors import InputError

_DECODER = json.JSONDecoder()
#: Attempts per line to find the JSON object after a prefix (a log line can hold many `{`).
_MAX_ATTEMPTS = 8


class UnreadableInput(InputError):
    """An input that cannot be read as OpenLineage events; the message says what to do."""


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
    from planlineage.registry.secrets import MASK, is_secret_key, redact_text

    if isinstance(value, dict):
        return {k: scrub(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, key) for v in value]
    if isinstance(value, str) and value:
        return MASK if key and is_secret_key(key) else redact_text(value)
    return value


def _events_in_line(line: str) -> Iterator[dict]:
    start = line.find("{")
    attempts = 0
    while start >= 0 and attempts < _MAX_ATTEMPTS:
        attempts += 1
        try:
            obj, _ = _DECODER.raw_decode(line, start)
        except ValueError:
            start = line.find("{", start + 1)
            continue
        if is_event(obj):
            yield scrub(obj)
        return


def _events_in_document(text: str) -> list[dict]:
    """A whole file as one JSON value (array of events) or a sequence of pretty-printed objects."""
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            data = json.loads(stripped)
        except ValueError:
            return []
        return [scrub(e) for e in data if is_event(e)] if isinstance(data, list) else []
    found: list[dict] = []
    pos = 0
    while True:
        pos = stripped.find("{", pos)
        if pos < 0:
            return found
        try:
            obj, end = _DECODER.raw_decode(stripped, pos)
        except ValueError:
            return found
        if is_event(obj):
            found.append(scrub(obj))
        pos = end


@dataclass
class FileEvents:
    path: str
    events: list[dict] = field(default_factory=list)
    skipped_lines: int = 0


def _open_text(path: str) -> IO[str]:
    """The file as text; gzip-compressed when it starts with gzip's magic bytes (Gravitino's log
    sink rolls `gravitino_lineage.log` into `gravitino_lineage_<date>.log.gz`)."""
    with open(path, "rb") as probe:
        compressed = probe.read(2) == b"\x1f\x8b"
    if compressed:
        return gzip.open(path, "rt", encoding="utf-8", errors="strict")
    return open(path, encoding="utf-8", errors="strict")


def read_event_file(path: str) -> FileEvents:
    """The events of one file, read line by line (a log sink file can be large)."""
    result = FileEvents(path)
    try:
        with _open_text(path) as handle:
            for line in handle:
                found = list(_events_in_line(line))
                if found:
                    result.events.extend(found)
                elif line.strip():
                    result.skipped_lines += 1
        if not result.events:  # not JSON lines: one JSON array, or pretty-printed events
            with _open_text(path) as handle:
                result.events = _events_in_document(handle.read())
            result.skipped_lines = 0 if result.events else result.skipped_lines
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
    if not result.events:
        raise UnreadableInput(
            f"{path} holds no OpenLineage event ({result.skipped_lines} non-event line(s)); expected JSON "
            "lines such as Gravitino's gravitino_lineage.log or a file transport's output"
        )
    return result


# -- the lifecycle store ----------------------------------------------------------------------------


@dataclass
class StateRuns:
    path: str
    events: list[dict] = field(default_factory=list)
    sql: list[str] = field(default_factory=list)  # the runs' (redacted) scripts: Kafka evidence
    rules: str | None = None  # the configured lineage.rules file, if any
    runs: int = 0


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
    from planlineage.emitter.store import DB_NAME, home_dir

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
        raise UnreadableInput(
            f"state database {path} cannot be read ({error}); the doctor only reads it: the next lifecycle "
            "command that uses it (e.g. `planlineage flush`) moves a corrupt store aside and starts a fresh one"
        ) from None
    from planlineage.settings import Settings

    if not stored:  # settings live in their own file next to the store (a version-1 store held them)
        from planlineage.emitter.store import Store

        try:
            stored = Settings(Store(path)).stored()
        except Exception:
            stored = {}
    return _fill(result, rows, stored)


def _read_shared_state() -> StateRuns:
    """The runs of the node's shared store (reads only: a store not migrated yet has none)."""
    from planlineage.emitter.store import StoreError
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
        lineage = JobLineage.model_validate(json.loads(row["lineage"]))
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
    return [ev.to_dict(e) for e in built]
