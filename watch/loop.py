"""What every platform watcher shares (``planlineage watch``'s StreamPark and Dinky watchers, and
``planlineage gateway``'s JobManager follower): the say-once and verbose output, the states its
poll saw told to the lifecycle (:class:`JobSeen` records, one line per event), the bookkeeping of
its runs' compiles, the wait of ``--once``, and the poll loop, where each watcher polls on its
own schedule, under its own leadership, with its own outage backoff."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from planlineage.emitter import outbox
from planlineage.errors import SourceError, StoreError
from planlineage.lifecycle import compile_service, delivery, drop_reasons, runner, runs
from planlineage.settings import Settings
from planlineage.store.sqlite import Store
from planlineage.watch import ledger, transitions
from planlineage.watch.records import JobSeen


class Place(Protocol):
    """What a watcher polls, as the loop's lines name it: the database address, the JobManager."""

    def key(self) -> str: ...

    def masked(self) -> str: ...


class Polled(Protocol):
    """The watcher's open connection to it (the loop closes it after an outage)."""

    def close(self) -> None: ...


TargetT = TypeVar("TargetT", bound=Place)
SourceT = TypeVar("SourceT", bound=Polled)


@dataclass
class PlatformWatcher(Generic[TargetT, SourceT]):
    """The parts of a watcher that do not depend on its platform: the base of each platform's
    ``Watcher`` (``streampark.watcher``, ``dinky.watcher``, ``gateway.jobmanager.Follower``), which
    redefines ``options`` with its platform's and sets ``source`` and ``key`` when it is made.

    ``platform`` names the platform and ``polled`` what of it the watcher reads: the loop's lines
    say "the {platform} {polled}" ("the Dinky database", "the JobManager REST API")."""

    polled: ClassVar[str] = "database"

    target: TargetT
    store: Store
    settings: Settings
    options: Any = None  # the platform's options: ``verbose`` is read here
    say: Callable[[str], None] = print
    clock: Callable[[], float] = time.time

    source: SourceT = field(init=False, repr=False)
    key: str = field(init=False, default="")  # the source key of the watcher's ledger rows
    _said: set[str] = field(init=False, repr=False, default_factory=set)

    # -- output -----------------------------------------------------------------------------

    def once(self, key: str, message: str) -> None:
        if key not in self._said:
            self._said.add(key)
            self.say(message)

    def verbose(self, message: str) -> None:
        if self.options.verbose:
            self.say(message)

    # -- states to the lifecycle ------------------------------------------------------------

    def report(self, seen: JobSeen, shown: str | None = None) -> str | None:
        """``seen`` told to the lifecycle; one line per event queued, naming what the platform
        showed (``shown``: ``STARTING -> RUNNING``; the state alone by default), else one verbose
        line.  The event type, or None."""
        event = transitions.tell(self.store, seen)
        shown = shown or seen.state
        if event is not None:
            self.say(f"{seen.key} {seen.name}: {shown}: {event} event")
        else:
            self.verbose(f"{seen.key} {seen.name}: {shown} (no event)")
        return event

    def close_open_run(self, job_key: str, job_name: str) -> None:
        """The job's current run, if it never ended, closed with ABORT (a new start replaces it)."""
        if transitions.open_run(self.store, job_key) is not None:
            event = runs.record_state(self.store, job_key, "CANCELED")
            if event is not None:
                self.say(f"{job_key} {job_name}: previous run never ended, closed: {event} event")

    # -- compiles and delivery --------------------------------------------------------------

    def compiling(self) -> int:
        """Runs whose compile is still under way; says which compiles were dropped."""
        compile_service.recover(self.store)  # restarts a killed compile service, as `state`/`flush` do
        left = 0
        for item in ledger.compiles(self.store, self.key):
            run = runs.current_run(self.store, item["job_key"])
            if run is not None and run.run_id == item["run_id"] and run.lineage is None:
                left += 1
                continue
            if run is not None and run.run_id == item["run_id"]:
                self.verbose(f"{item['job_key']} {item['job_name']}: lineage compiled, START queued")
            elif run is None:
                why = drop_reasons.take(self.store, item["run_id"]) or (
                    f"no lineage (the reason is in {self.store.path.parent / runner.LOG_NAME})"
                )
                self.say(f"{item['job_key']} {item['job_name']}: run dropped: {why}")
            ledger.remove_compile(self.store, item["run_id"])
        return left

    def settle(self, timeout: float) -> bool:
        """Wait for this watcher's compiles and deliver; True when nothing is left behind."""
        end = time.monotonic() + timeout
        while True:
            left = self.compiling()
            report = delivery.flush(
                self.store, self.settings, deadline_seconds=max(0.5, min(5.0, end - time.monotonic()))
            )
            pending = outbox.count_pending(self.store)
            if left == 0 and pending == 0:
                return True
            if time.monotonic() >= end:
                what = f"{left} compile(s) still running" if left else ""
                if pending:
                    what = (what + ", " if what else "") + f"{pending} event(s) kept for later"
                if report is not None and report.stopped:
                    what += f" (delivery: {report.stopped})"
                self.say(f"stopped waiting after {timeout:g}s: {what}")
                return False
            time.sleep(0.2)

    def close(self) -> None:
        self.source.close()


def run_forever(watchers, interval: float, stop: threading.Event | None = None) -> None:
    """:func:`watch` until SIGTERM/SIGINT (or ``stop``): the command's entry, in the main thread
    (Python sets signal handlers there only); the handlers it replaced are put back at the end.

    ``watchers``: one or several (``--streampark-db`` and ``--dinky-db`` in one process)."""
    stop = stop or threading.Event()
    group = watchers if isinstance(watchers, list) else [watchers]

    def on_signal(signum, frame):
        stop.set()

    before = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        watch(group, interval, stop)
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def watch(group: list, interval: float, stop: threading.Event) -> None:
    """Poll every ``interval`` seconds until ``stop`` is set; backoff while what a watcher polls
    cannot be read, with one line when it goes away and one when it is back. No signal handler:
    any thread may run it (``planlineage gateway`` follows its JobManagers on one of its own).

    Each of ``group`` needs ``poll``, ``compiling``, ``source``, ``say``, ``close``,
    ``lead_name``, ``platform`` and ``polled``, and has its own leadership, outage and backoff:
    one database down never stops the other. Delivery runs beside the polls (:class:`Deliverer`),
    one sender per store."""
    ceiling = min(60.0, max(5.0, 10 * interval))
    # Every node may watch one platform database; one leads (planlineage.store.leadership): the
    # others look twice per interval and take over within 2 intervals, from the shared cursor.
    from planlineage.store.leadership import Leadership

    leads = [Leadership(w.store, w.lead_name, interval=interval) for w in group]
    failures = [0] * len(group)
    roles = [""] * len(group)  # "leads" / "stands by", as last said
    due = [0.0] * len(group)
    senders = [Deliverer(w.store, w.settings, stop) for w in {id(w.store): w for w in group}.values()]
    for sender in senders:
        sender.start()
    while not stop.is_set():
        now = time.monotonic()
        for i, (watcher, leadership) in enumerate(zip(group, leads, strict=True)):
            if now < due[i]:
                continue
            due[i] = now + _one_round(watcher, leadership, failures, roles, i, interval, ceiling)
            for sender in senders:
                sender.wake.set()  # what the poll recorded goes out now, not at the sender's next look
        stop.wait(max(0.05, min(due) - time.monotonic()))
    for sender in senders:
        sender.wake.set()
        sender.join(timeout=DELIVERY_SECONDS + 1.0)
    for watcher, leadership in zip(group, leads, strict=True):
        try:
            leadership.release()  # a clean stop hands the lead over at once
        except StoreError:
            pass
        watcher.close()


#: How long one delivery pass may take (a backend that does not answer holds the sender no longer);
#: then it looks again, so at stop the sender is done within this time.
DELIVERY_SECONDS = 3.0
#: How often the sender looks for work when nothing woke it: a compile the compile service finishes
#: queues its START without telling the watcher.
DELIVERY_LOOK_SECONDS = 0.5
#: ... and while events wait out their retry backoff (a backend away): no pass twice a second for nothing.
DELIVERY_RETRY_LOOK_SECONDS = 2.0


class Deliverer(threading.Thread):
    """Delivers what the watchers of one store recorded, beside their polls: a poll never waits
    for the backend (a slow or unreachable one cost every poll up to 3 s when polls delivered), and
    an event goes out as soon as it is queued, not at the next poll. Every node delivers (the
    outbox's claims keep two nodes off one event), leader or not, as ``flush`` does."""

    def __init__(self, store: Store, settings: Settings, stop: threading.Event) -> None:
        super().__init__(name="planlineage-delivery", daemon=True)
        self.store, self.settings, self.stop = store, settings, stop
        self.wake = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            self.wake.clear()
            if delivery.has_work(self.store):  # fail-open both: a problem is a log line, never the end
                delivery.flush(self.store, self.settings, deadline_seconds=DELIVERY_SECONDS)
                if delivery.has_work(self.store):  # kept for later: the outbox's backoff says when it is due
                    self.wake.wait(DELIVERY_RETRY_LOOK_SECONDS)
                    continue
            self.wake.wait(DELIVERY_LOOK_SECONDS)


def _polled(watcher) -> str:
    """What the watcher polls, as its lines name it: "StreamPark database", "JobManager REST API"."""
    return f"{watcher.platform} {watcher.polled}"


def _say_role(watcher, leadership, roles: list[str], i: int, leading: bool) -> None:
    """One line when a watcher starts standing by for another and one when it takes the lead: a
    second watcher on the same home or store otherwise waited without a word."""
    role = "leads" if leading else "stands by"
    if roles[i] == role:
        return
    if leading:
        if roles[i]:
            watcher.say(f"this watcher leads now: it reports the {_polled(watcher)}'s jobs")
    else:
        try:
            current = leadership.leader()
        except StoreError:
            current = None
        who = ""
        if current is not None and current.holder.count(":") >= 2:
            who = f"node {current.node} (pid {current.holder.rsplit(':', 2)[1]})"
        watcher.say(
            f"another watcher{' on ' + who if who else ''} reports the {_polled(watcher)}'s jobs for this "
            f"state store: this one stands by and takes over within {2 * leadership.interval:g}s if it stops"
        )
    roles[i] = role


def _one_round(
    watcher, leadership, failures: list[int], roles: list[str], i: int, interval: float, ceiling: float
) -> float:
    """One poll of one watcher if it leads; the seconds until its next round."""
    try:
        leading = leadership.acquire()
    except StoreError:
        return leadership.follower_poll  # the store is away: nobody reports until it is back
    _say_role(watcher, leadership, roles, i, leading)
    if not leading:
        return leadership.follower_poll
    try:
        watcher.poll()
        watcher.compiling()
        if failures[i]:
            watcher.say(f"back to normal: the {_polled(watcher)} is readable again")
        failures[i] = 0
        return interval
    except (SourceError, StoreError) as error:  # fail-open: one line per outage, then backoff
        if isinstance(error, SourceError):
            watcher.source.close()
            watcher.schema = None
        if failures[i] == 0:
            watcher.say(f"{error}; retrying with backoff")
        failures[i] += 1
        return min(ceiling, interval * 2 ** failures[i])
