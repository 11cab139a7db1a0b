"""The graph `planlineage ui` serves, kept current by reading only what was appended to its inputs.

Re-reading a whole events file on every change cost a 100 MB Gravitino log 0.68 of a core and made
new jobs ~21 s late. Here each JSON-lines file is read once from its start, then from the offset
where the last whole line ended: what was appended is added to the graph and to the doctor's
inventory of datasets (the splits are found again over the inventory, not over the events). A file
that shrank or was replaced (another inode: a rolled log) is read again from its start, with the
rest; so is a gzip file or a file that is not JSON lines (one array, pretty-printed events), which
are read whole by the doctor. The recorded runs (`--state`) are read again when they change (a
shared store: every few seconds) and laid over what the files made, never re-reading the files.
The events made from scripts and extract documents (`events`: doctor.inputs, compiled once when
`ui` starts) come first in every full read, so a file read again never loses them.

When an input cannot be read, the last good graph stays served and `problem` says what and
`problem_since` since when (the page shows it, and the graph as stale); reading everything is tried
again when the inputs change (not every second: a broken line in a 100 MB log must not make each
check read 100 MB).
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from .model import LineageGraph, add_event, add_splits, copy_dataset, copy_job, finish

#: Seconds between two looks at the inputs; a store without a file to stat is read again every
#: SHARED_STORE_SECONDS.
CHECK_SECONDS = 1.0
SHARED_STORE_SECONDS = 4.0
#: Bytes read at a time from the end of a growing file.
CHUNK = 1 << 20


def _stat(path: Path) -> tuple[int, int, int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as probe:
        return probe.read(2) == b"\x1f\x8b"


class _Inputs:
    """What the events read so far made: the graph (before `finish`) and the doctor's inventory."""

    def __init__(self) -> None:
        self.graph = LineageGraph()
        self.seen: dict = {}
        self.fallback: dict = {}
        self.lists: dict[tuple[str, ...], None] = {}
        self.sql: list[str] = []
        self.rules: str | None = None

    def add(self, event: dict) -> None:
        from planlineage.doctor.inventory import add_to_inventory
        from planlineage.doctor.kafka_clusters import bootstrap_lists, sql_of

        add_event(self.graph, event)
        add_to_inventory(self.seen, event, self.fallback)
        for entries in bootstrap_lists(sql_of([event])):
            self.lists.setdefault(tuple(entries), None)

    def overlaid(self, events: list[dict]) -> _Inputs:
        """These inputs and `events` (the recorded runs), as new inputs: the nodes and inventory
        entries the events touch are copied first, so these stay as the files made them (the
        runs are read again when they change; the files are not)."""
        from planlineage.doctor.inventory import DatasetSeen

        both = _Inputs()
        both.graph.jobs, both.graph.datasets = dict(self.graph.jobs), dict(self.graph.datasets)
        both.seen, both.fallback, both.lists = dict(self.seen), dict(self.fallback), dict(self.lists)
        both.sql, both.rules = list(self.sql), self.rules

        def own(table: dict, original: dict, key: object) -> None:
            entry = table.get(key)
            if entry is None or entry is not original.get(key):
                return  # not there, or copied already
            seen = cast(DatasetSeen, entry)
            table[key] = replace(seen, producers=set(seen.producers), jobs=set(seen.jobs), symlinks=set(seen.symlinks))

        for event in events:
            datasets = [d for d in (*(event.get("inputs") or []), *(event.get("outputs") or [])) if isinstance(d, dict)]
            if isinstance(event.get("dataset"), dict):
                datasets.append(event["dataset"])
            for d in datasets:
                key = (d.get("namespace"), d.get("name"))
                if key in both.graph.datasets and both.graph.datasets[key] is self.graph.datasets.get(key):
                    both.graph.datasets[key] = copy_dataset(both.graph.datasets[key])
                own(both.seen, self.seen, key)
                own(both.fallback, self.fallback, key[1])
            raw = event.get("job")
            job = raw if isinstance(raw, dict) else {}
            key = (str(job.get("namespace") or ""), str(job.get("name") or ""))
            if key in both.graph.jobs and both.graph.jobs[key] is self.graph.jobs.get(key):
                both.graph.jobs[key] = copy_job(both.graph.jobs[key])
            both.add(event)
        return both

    def finished(self, rules: str | None) -> LineageGraph:
        """The graph with the doctor's splits (as doctor.diagnose finds them)."""
        from planlineage.doctor.diagnose import rules_resolvers
        from planlineage.doctor.kafka_clusters import KafkaClusters, bootstrap_lists
        from planlineage.doctor.splits import find_splits

        lists = dict(self.lists)
        for entries in bootstrap_lists(self.sql):
            lists.setdefault(tuple(entries), None)
        resolvers = rules_resolvers(rules or self.rules)
        graph = finish(self.graph)
        graph.splits = []
        clusters = KafkaClusters([list(entries) for entries in lists])
        return add_splits(graph, find_splits(self.seen, clusters, resolvers, self.fallback))


class _Tail:
    """One events file: where its last whole line ended, and whether it can be read on from there."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.ident: tuple[int, int] | None = None
        self.offset = 0
        self.whole = False  # read whole every time it changes (gzip, not JSON lines)

    def read_all(self, inputs: _Inputs) -> None:
        """From the start. Raises the doctor's UnreadableInput as its reading of the file does."""
        from planlineage.doctor.sources import iter_events

        stat = _stat(self.path)
        self.ident = stat[:2] if stat else None
        self.offset, self.whole = 0, False
        try:
            gz = _is_gzip(self.path)
        except OSError:
            gz = True  # the doctor's reading names the error
        if not gz:
            found = self._read_lines(inputs)
            if found:
                return
        self.whole = True
        for event in iter_events(str(self.path)):
            inputs.add(event)

    def grown(self, stat: tuple | None) -> bool | None:
        """True: appended to (read on), False: unchanged, None: read again from the start."""
        if stat is None or self.whole or stat[:2] != self.ident or stat[4] < self.offset:
            return None
        return stat[4] > self.offset

    def _read_lines(self, inputs: _Inputs) -> int:
        """The events of the whole lines after `offset`; the offset moves past the last one."""
        from planlineage.doctor import UnreadableInput
        from planlineage.doctor.sources import UnreadableLine, events_in_line

        found = 0
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self.offset)
                rest = b""
                while True:
                    chunk = handle.read(CHUNK)
                    if not chunk:
                        break
                    data = rest + chunk
                    end = data.rfind(b"\n") + 1
                    rest = data[end:]
                    for raw in data[:end].splitlines():
                        try:
                            events = events_in_line(raw.decode("utf-8"))
                        except UnreadableLine:
                            continue  # counted by `planlineage doctor`; the page skips it
                        except UnicodeDecodeError:
                            raise UnreadableInput(
                                f"{self.path} is not UTF-8 text; OpenLineage events are JSON lines"
                            ) from None
                        for event in events:
                            inputs.add(event)
                            found += 1
                    self.offset += end
        except OSError as error:
            raise UnreadableInput(f"cannot read {self.path}: {error.strerror or error}") from None
        return found

    def read_on(self, inputs: _Inputs) -> None:
        self._read_lines(inputs)


class LiveGraph:
    """The current JSON of the inputs. With `build` (a function returning the whole graph), it is
    called again whenever the inputs change; without, the event `files` are read incrementally.
    A read that fails keeps the last good graph (`problem`, `problem_since` say why, since when)."""

    def __init__(
        self,
        build: Callable[[], LineageGraph] | None = None,
        files: Sequence[str] = (),
        state: bool = False,
        rules: str | None = None,
        page: Callable[[LineageGraph, str | None], dict[str, Any]] | None = None,
        events: Sequence[dict] = (),
    ) -> None:
        self._build = build
        self._made = list(events)  # from scripts and extract documents: made once, added on each full read
        self._files = [Path(f) for f in files]
        self._tails = [_Tail(p) for p in self._files]
        self._state = state
        self._rules = rules
        self._inputs: _Inputs | None = None
        self._lock = threading.Lock()
        self._signature: object = None
        self._failed: object = None  # the inputs as they were when reading them failed
        self._page = page
        self.graph: LineageGraph | None = None
        self.body = b""
        self.etag = ""
        self.problem = ""
        self.problem_since = ""
        self.version = 0
        self._around: dict[str, tuple[str, bytes]] = {}

    def _state_signature(self) -> object:
        if not self._state:
            return None
        from planlineage.store import store_url
        from planlineage.store.sqlite import DB_NAME, home_dir

        if store_url()[0]:  # a shared store: no file to look at
            return int(time.monotonic() // SHARED_STORE_SECONDS)
        db = home_dir() / DB_NAME
        return tuple(_stat(Path(str(db) + suffix)) for suffix in ("", "-wal"))

    def _read(self, stats: list, state_signature: object) -> LineageGraph:
        if self._build is not None:
            return self._build()
        from planlineage.doctor import UnreadableInput

        for path, stat in zip(self._files, stats):
            if stat is None:  # said at once, without reading the other files first
                raise UnreadableInput(f"{path}: no such file (or it cannot be looked at)")
        grown = [tail.grown(stat) for tail, stat in zip(self._tails, stats)]
        inputs, self._inputs = self._inputs, None  # a failed read leaves nothing half-added behind
        if inputs is None or None in grown:
            inputs = _Inputs()
            for event in self._made:
                inputs.add(event)
            for tail in self._tails:
                tail.read_all(inputs)
        else:
            for tail, more in zip(self._tails, grown):
                if more:
                    tail.read_on(inputs)
        self._inputs = inputs
        if not self._state:
            return inputs.finished(self._rules)
        from planlineage.doctor.sources import read_state

        runs = read_state()
        both = inputs.overlaid(runs.events)
        both.sql.extend(runs.sql)
        both.rules = runs.rules
        return both.finished(self._rules)

    def refresh(self) -> bool:
        """Reads what changed; True when the JSON changed. Raises the read's error only on the
        first read (nothing to serve yet)."""
        with self._lock:
            stats = [_stat(p) for p in self._files]
            signature = (tuple(stats), self._state_signature())
            if signature == (self._failed if self.problem else self._signature):
                return False  # unchanged; a failed read is tried again once the inputs change
            try:
                graph = self._read(stats, signature[1])
                body = self._body(graph, None)
            except Exception as error:  # the last good graph stays served; the page says why
                if not self.body:
                    raise
                problem = _describe(error)
                if problem != self.problem:
                    self.problem = problem
                    self.problem_since = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                self._signature, self._failed = None, signature
                return False
            self._signature = signature
            self.problem = self.problem_since = ""
            self.graph = graph
            self._around = {}
            etag = _etag(body)
            if etag == self.etag:
                return False
            self.body, self.etag = body, etag
            self.version += 1
            return True

    def _body(self, graph: LineageGraph, around: str | None) -> bytes:
        from .html import view_json
        from .view import view

        data = self._page(graph, around) if self._page else view(graph)
        return view_json(data)

    def around(self, node: str) -> tuple[str, bytes] | None:
        """(ETag, JSON) of the part of the graph around this node id (a large estate's page asks
        for it); None when no graph is served yet."""
        with self._lock:
            graph = self.graph
            if graph is None:
                return None
            if node not in self._around:
                if len(self._around) > 16:
                    self._around.clear()
                body = self._body(graph, node)
                self._around[node] = (_etag(body), body)
            return self._around[node]

    def watch(self, stop: threading.Event, say: Callable[[str], None]) -> None:
        said = ""
        while not stop.wait(CHECK_SECONDS):
            try:
                self.refresh()
            except Exception:  # never raised after the first read; the thread must not die
                pass
            if self.problem and self.problem != said:
                say(f"planlineage ui: {self.problem}; the page keeps showing the last graph read")
            said = self.problem


def _etag(body: bytes) -> str:
    return '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'


def _describe(error: Exception) -> str:
    from planlineage.doctor import UnreadableInput
    from planlineage.printable import visible

    if isinstance(error, UnreadableInput):
        return visible(str(error))
    return visible(f"the inputs could not be read again ({type(error).__name__}: {error})")
