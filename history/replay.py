"""The replay: past runs in, each run's START and end event out, with their original times.

``replay(store, settings, runs)`` takes :class:`PastRun` records from any platform's reader
(StreamPark's :mod:`planlineage.streampark.history`, Dinky's) and, oldest first:

1. leaves out every run already reported (its ``run_key`` is in the ledger,
   :mod:`planlineage.history.ledger`: replayed before, or started or adopted by a live watcher),
   and a still-running run whose app a live watcher already follows with another run;
2. takes at most ``lineage.history-max-runs`` of the rest (the oldest; the next invocation goes on
   from there);
3. compiles each distinct script once with the backfill engine: per Flink version one planner JVM
   compiling ``lineage.history-threads`` scripts at once, fed by backfill threads
   (:func:`planlineage.backfill.each_on_a_planner`; a running warm planner answers first);
4. queues, at most ``lineage.history-rate`` runs per second, START at ``started_at`` then the end
   event at ``ended_at`` (RUNNING at ``started_at`` while the run still runs), under the run id
   :func:`~planlineage.history.ledger.run_id_for` derives from the run key, in the same
   transaction as the run's ledger row: a second replay queues nothing.  A still-running run
   becomes its app's current run in the lifecycle, so the live watcher reports its end.  The job
   is the one the live watcher names (:func:`job_of`); a time later than the replay, or an end
   before its start, is sent at the replay's time or the start, and said (:func:`event_times`);
5. delivers through the outbox as it goes, then until nothing is pending or ``timeout``.

A run whose script does not compile, or whose Flink version is not provided, is said and left
out of the ledger (a later replay tries it again); nothing is sent for it.  Progress goes to
``err``: a bar on a terminal, a line per quarter otherwise.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, TextIO

from planlineage.clock import format_time, utc_now
from planlineage.emitter.run_ids import TERMINAL_EVENT_TYPES
from planlineage.history import job_names, ledger
from planlineage.history.records import PastRun

if TYPE_CHECKING:
    from planlineage.document import JobLineage
    from planlineage.settings import Settings
    from planlineage.store.sqlite import Store

FLUSH_SECONDS = 15.0  # the longest delivery pass between runs (it ends once nothing is pending)
_pause = time.sleep  # the rate limit's pause (a test counts them)
_LISTENER_WORD = "OpenLineageJobStatusChangedListener"  # openlineage-flink's factory, as a configuration names it


@dataclass
class Report:
    replayed: int = 0  # runs whose events were queued now
    events: int = 0
    already: int = 0  # runs reported before (ledger) or followed by a live watcher
    failed: int = 0  # runs left out: no lineage
    left: int = 0  # runs over the cap, for the next invocation
    compiled: int = 0  # distinct scripts compiled
    pending: int = 0  # events still undelivered at the end
    clamped: int = 0  # runs replayed whose recorded times were impossible (each said when queued)
    reasons: Counter = field(default_factory=Counter)

    def lines(self) -> list[str]:
        said = [
            f"history: {self.replayed} run(s) replayed ({self.events} event(s) queued, {self.compiled} distinct "
            f"script(s) compiled), {self.already} reported before, {self.failed} without lineage"
        ]
        if self.clamped:
            said.append(
                f"history: {self.clamped} run(s) had a time in the future or an end before its start: sent at "
                "the replay's time or at their start (each said above)"
            )
        if self.left:
            said.append(
                f"history: {self.left} older run(s) over lineage.history-max-runs: run the replay again to send them"
            )
        for reason, count in self.reasons.most_common(5):
            said.append(f"history: {count} run(s) not replayed: {reason}")
        if self.pending:
            said.append(f"history: {self.pending} event(s) not delivered yet: kept, delivered by the next flush")
        return said


def limits(settings: Settings) -> tuple[float, int, int]:
    """``(runs per second, runs per invocation, compile threads)`` from the settings."""
    bounds = settings.config().limits
    return bounds.history_rate, bounds.history_max_runs, bounds.history_threads_or_cores()


def replay(
    store: Store,
    settings: Settings,
    runs: Iterable[PastRun],
    *,
    say: Callable[[str], None],
    err: TextIO = sys.stderr,
    timeout: float = 300.0,
) -> Report:
    """Replay ``runs`` (see the module's text); what was done."""
    rate, max_runs, threads = limits(settings)
    report = Report()
    done = ledger.known(store)
    following = _open_runs(store)
    todo: list[PastRun] = []
    seen: set[str] = set()
    for run in sorted(runs, key=lambda r: (r.started_at, r.run_key)):
        if run.run_key in done or run.run_key in seen:
            report.already += 1
            continue
        seen.add(run.run_key)
        run_id = ledger.run_id_for(run.run_key, run.started_at)
        if run.ended_at is None and following.get(run.app_id, run_id) != run_id:
            report.already += 1  # the live watcher follows this app's current run already
            continue
        todo.append(run)
    report.left = max(0, len(todo) - max_runs)
    todo = todo[:max_runs]
    if not todo:
        return report
    lineages = compile_all(todo, settings, threads, report, err)
    _queue(store, settings, todo, lineages, rate, report, err, say)
    report.pending = _deliver(store, settings, timeout)
    return report


def _open_runs(store: Store) -> dict[str, str]:
    """App -> its current run id, for apps whose current run is still open."""

    def read(conn) -> dict[str, str]:
        rows = conn.execute("SELECT app_id, run_id, last_event FROM runs").fetchall()
        return {r["app_id"]: r["run_id"] for r in rows if r["last_event"] not in TERMINAL_EVENT_TYPES}

    return store.read(read, default={})


def _script_key(run: PastRun) -> tuple:
    return (run.flink_version, run.sql, run.jars)


def compile_all(
    todo: list[PastRun], settings: Settings, threads: int, report: Report, err: TextIO
) -> dict[tuple, JobLineage | str]:
    """Each distinct script once: its lineage, or why there is none."""
    from planlineage.backfill import each_on_a_planner
    from planlineage.lifecycle import runner
    from planlineage.pipeline import extract
    from planlineage.planner.provision import ensure, without_compiled_plan
    from planlineage.planner.warm import Limits

    scripts: dict[tuple, PastRun] = {}
    for run in todo:
        scripts.setdefault(_script_key(run), run)
    report.compiled = len(scripts)
    config = settings.config()
    identity = runner._identity(config)
    limit = config.limits.script_max_bytes
    results: dict[tuple, JobLineage | str] = {}
    progress = Progress("compiled", len(scripts), err)
    lock = threading.Lock()

    def one(key: tuple, planner) -> None:
        run = scripts[key]
        try:
            found: JobLineage | str = extract(
                run.sql,
                flink_version=run.flink_version,
                jars=list(run.jars),
                identity=identity,
                planner=planner,
                timeout=runner.job_timeout(),
                columns=True,
                max_bytes=limit,
            )
        except Exception as error:  # ExtractError / PlannerError / ProvisionError: said, never raised
            found = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        with lock:
            results[key] = found
            progress.step()

    versions: dict[str | None, list[tuple]] = {}
    for key, run in scripts.items():
        versions.setdefault(run.flink_version, []).append(key)
    for version, keys in versions.items():
        if without_compiled_plan(version):  # read from the SQL text: no planner
            for key in keys:
                one(key, None)
            continue
        try:
            provisioned = ensure(version)
        except Exception as error:
            for key in keys:
                with lock:
                    results[key] = f"Flink {version or 'default'}: {error}"
                    progress.step()
            continue
        each_on_a_planner(provisioned, keys, threads, Limits(job_timeout=runner.job_timeout()), one)
    progress.end()
    return results


def _queue(
    store: Store,
    settings: Settings,
    todo: list[PastRun],
    lineages: dict[tuple, JobLineage | str],
    rate: float,
    report: Report,
    err: TextIO,
    say: Callable[[str], None],
) -> None:
    from planlineage.lifecycle import delivery, runs
    from planlineage.lifecycle.run_rows import RunRecord, build_events, load_event_models
    from planlineage.lifecycle.sql_facet import cap_sql, cap_statements, redacted

    load_event_models()
    now = datetime.now(UTC)  # no event of a run is sent later than the replay itself
    runs.close_replaced(store)  # transitions a watcher recorded go to the outbox before any run row is replaced
    runs.materialize(store)
    config = settings.config()
    namespace = config.namespace
    sql_limit = config.limits.sql_max_bytes
    began = time.monotonic()
    last_flush = began
    progress = Progress("sent", len(todo), err)
    for number, run in enumerate(todo):
        wait = began + number / rate - time.monotonic()
        if wait > 0:
            _pause(wait)  # the rate limit: never more than `rate` runs a second
        progress.step()
        lineage = lineages.get(_script_key(run))
        if isinstance(lineage, str) or lineage is None:
            report.failed += 1
            report.reasons[lineage or "not compiled"] += 1
            continue
        if not lineage.has_datasets():
            report.failed += 1
            report.reasons["the job writes no table planlineage can name"] += 1
            continue
        run_id = ledger.run_id_for(run.run_key, run.started_at)  # the recorded start: ids never change
        sql, _ = cap_sql(redacted(run.sql), sql_limit)
        cap_statements(lineage, sql_limit)
        job_namespace, job_name = job_of(run, settings, namespace)
        record = RunRecord(run.app_id, run_id, job_name, job_namespace, lineage, sql, None, None, [], "", "")
        started, ended, warning = event_times(run, now)
        start = format_time(started)
        built = build_events(record, lineage, "START", start)
        if ended is None:
            built += build_events(record, lineage, "RUNNING", start)
        else:
            error = runs._scrub(run.error) if run.error and run.end_event == "FAIL" else None
            built += build_events(record, lineage, run.end_event or "ABORT", format_time(ended), error)
        queued = store.write(
            partial(
                _write, run=run, run_id=run_id, built=built, lineage=lineage, sql=sql, job=(job_namespace, job_name)
            )
        )
        if queued:
            report.replayed += 1
            report.events += queued
            if warning:
                report.clamped += 1
                say(f"WARN history: {run.app_id} {run.job_name} (run {run_id}): {warning}")
        else:
            report.already += 1
        if time.monotonic() - last_flush >= 1.0:  # deliver as it goes: the outbox never grows large
            # A pass ends as soon as nothing is pending; its deadline also cuts each request's
            # timeout, and a request cut short while the server was still taking it is sent again:
            # a short deadline on a loaded machine would deliver such events twice.
            delivery.flush(store, settings, deadline_seconds=FLUSH_SECONDS)
            last_flush = time.monotonic()
    progress.end()


def job_of(run: PastRun, settings: Settings, namespace: str) -> tuple[str, str]:
    """``(job namespace, job name)`` of a past run, as the live watcher names its run: the
    listener's job when the job coexists with openlineage-flink's listener, else the platform's
    job kept apart by platform (:mod:`planlineage.history.job_names`) in ``namespace``."""
    shared = _coexisting(run, settings)
    if shared is not None:
        return shared.job_namespace, shared.job_name
    return namespace, job_names.platform_job_name(run.platform, run.job_name, settings)


def _coexisting(run: PastRun, settings: Settings):
    """The listener's job when the run's script, planlineage's ``flink-conf`` injection or the
    options its platform gives the job name the listener (fail-open: None, planlineage's job)."""
    from planlineage.lifecycle import runner

    given = dict(run.job_conf)
    config = settings.config()
    chosen = config.flink_runs
    if not given or chosen == "own":
        return runner.coexisting_run(settings, run.sql, run.flink_version, run.job_name)
    named = any(_LISTENER_WORD in text for text in (run.sql, *given.values()))
    if chosen == "auto" and not named and not config.flink_listener:
        return None
    try:
        from planlineage.listener_conf import coexist

        conf = coexist.job_conf(run.sql, config, run.flink_version, given)
        return coexist.coexisting_run(conf, config, run.job_name)
    except Exception:  # a lineage gap never stops a replay: planlineage's own job, as runner does
        return None


def event_times(run: PastRun, now: datetime) -> tuple[datetime, datetime | None, str | None]:
    """``(start, end, warning)``: the times the run's events carry, and what was wrong with the
    recorded ones.  Backends order a job's runs and a run's events by event time (Marquez's latest
    run, Data.Rentgen's run list): a time in the future would make the run the job's newest until
    that time passes, and an end before its start would leave the run started after it ended.  So a
    time after ``now`` is sent as ``now`` and an end before its start at its start: the run is still
    sent (its lineage is real), with the recorded times said once, in the warning."""
    start, end = run.started_at, run.ended_at
    wrong = []
    if start > now:
        wrong.append(f"recorded start {format_time(start)} is in the future")
        start = now
    if end is not None and end > now:
        wrong.append(f"recorded end {format_time(end)} is in the future")
        end = now
    if end is not None and end < start:
        wrong.append(f"recorded end {format_time(end)} precedes its start {format_time(run.started_at)}")
        end = start
    if not wrong:
        return start, end, None
    sent = f"sent START at {format_time(start)}" + (
        f", {run.end_event or 'ABORT'} at {format_time(end)}" if end else ""
    )
    return start, end, f"{'; '.join(wrong)} (the platform's clock or time zone, or a bad row): {sent}"


def _write(conn, run: PastRun, run_id: str, built: list, lineage: JobLineage, sql: str, job: tuple[str, str]) -> int:
    """One run's ledger row, its events and (still running) its row in ``runs``, in one
    transaction; how many events (0: reported already, by another replay or a watcher)."""
    from planlineage.lifecycle.run_rows import queue_events

    current = conn.execute("SELECT run_id, last_event, pending FROM runs WHERE app_id = ?", (run.app_id,)).fetchone()
    still_open = current is not None and (
        current["last_event"] not in TERMINAL_EVENT_TYPES or current["pending"] != "[]"
    )
    if run.ended_at is None and still_open and current["run_id"] != run_id:
        return 0  # a live watcher opened a run for this app meanwhile (or has events of it to queue)
    if not ledger.mark_in(conn, run.run_key, run_id, run.app_id, run.started_at, "replay"):
        return 0
    count = queue_events(conn, run_id, built)
    namespace, job_name = job
    if run.ended_at is None and (current is None or not still_open):
        # The app's current run: the live watcher reports its next states on it.
        now = utc_now()
        conn.execute(
            "INSERT INTO runs (app_id, run_id, job_name, namespace, lineage, sql, platform_state, last_event, "
            "pending, created, updated) VALUES (?, ?, ?, ?, ?, ?, 'RUNNING', 'RUNNING', '[]', ?, ?) "
            "ON CONFLICT (app_id) DO UPDATE SET run_id = excluded.run_id, job_name = excluded.job_name, "
            "namespace = excluded.namespace, lineage = excluded.lineage, sql = excluded.sql, "
            "platform_state = 'RUNNING', last_event = 'RUNNING', pending = '[]', created = excluded.created, "
            "updated = excluded.updated",
            (
                run.app_id,
                run_id,
                job_name,
                namespace,
                json.dumps(lineage.to_json_dict(), sort_keys=True),
                sql,
                format_time(run.started_at),
                now,
            ),
        )
    return count


def _deliver(store: Store, settings: Settings, timeout: float) -> int:
    """Deliver until nothing is pending or ``timeout``; the events left."""
    from planlineage.emitter import outbox
    from planlineage.lifecycle import delivery

    end = time.monotonic() + timeout
    while True:
        left = end - time.monotonic()
        report = delivery.flush(store, settings, deadline_seconds=max(FLUSH_SECONDS, min(60.0, left)))
        pending = outbox.count_pending(store)
        if pending == 0 or time.monotonic() >= end or (report is not None and report.stopped):
            return pending


class Progress:
    """``[done/total] what``: a bar redrawn on a terminal, a line at each quarter otherwise."""

    WIDTH = 30

    def __init__(self, what: str, total: int, err: TextIO):
        self.what, self.total, self.err = what, total, err
        self.done = 0
        self.started = time.monotonic()
        self.tty = bool(getattr(err, "isatty", lambda: False)())
        self.quarter = 0

    def step(self) -> None:
        self.done += 1
        if self.tty:
            filled = self.WIDTH * self.done // max(1, self.total)
            rate = self.done / max(time.monotonic() - self.started, 1e-6)
            self.err.write(
                f"\rhistory: [{'#' * filled}{'.' * (self.WIDTH - filled)}] {self.done}/{self.total} "
                f"{self.what} ({rate:.1f}/s)"
            )
            self.err.flush()
        elif self.total and self.done * 4 // self.total > self.quarter:
            self.quarter = self.done * 4 // self.total
            self.err.write(f"planlineage watch: history: {self.done}/{self.total} {self.what}\n")
            self.err.flush()

    def end(self) -> None:
        if self.tty and self.total:
            self.err.write("\n")
            self.err.flush()
