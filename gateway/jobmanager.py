"""The JobManager side of ``planlineage gateway``: each job a gateway session submitted, followed
at the Flink JobManager's REST API until it ends (an adapter of :mod:`planlineage.watch`).

The SQL Gateway forgets a job once its statement returned the job id; the JobManager knows its
state and keeps no SQL.  :class:`Follower` polls ``GET /jobs/overview`` (one call for every job
followed) and reports each job's state on the run its START went out on, through
:func:`planlineage.lifecycle.runs.record_state` as the platform watchers do:

==============================================================  ====================
Flink state                                                     event
==============================================================  ====================
RUNNING                                                         RUNNING
FINISHED                                                        COMPLETE
FAILED                                                          FAIL (the root exception's first line)
CANCELED                                                        ABORT
INITIALIZING, CREATED, FAILING, CANCELLING, RESTARTING, …       none (remembered)
unknown to the JobManager for ``lost_grace`` seconds            ABORT
==============================================================  ====================

A job that ran and ended between two polls still gets RUNNING (the JobManager's ``timestamps``
say it ran) before its end; an end carries the JobManager's ``end-time`` as its event time and
RUNNING its RUNNING timestamp when the poll read them.  Each event
is sent once: the lifecycle queues a transition once per run, and what was reported is kept in
the store's ``watch_jobs`` table (source ``gateway:<JobManager URL>``, one row per job, its run
id in ``run_job_id``, its last Flink state in ``state``), so a restarted proxy, or another
proxy on the same store, continues without resending; a job's row goes once its run ended.

A JobManager that cannot be reached is a :class:`~planlineage.watch.connection.SourceError`:
the watch loop says it once, backs off (up to a minute) and says when it is back; nothing
ends then.  A job the JobManager answers 404 for (the cluster restarted without HA, or the job
aged out of its history, ``jobstore.expiration-time``) is ended with ABORT once it stayed
unknown for ``lost_grace`` seconds (``DEFAULT_LOST_GRACE``, 300 s, as the watchers' LOST).
"""

from __future__ import annotations

import base64
import functools
import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from planlineage.clock import format_time
from planlineage.emitter.run_ids import TERMINAL_EVENT_TYPES
from planlineage.errors import SourceError
from planlineage.lifecycle import runs, spool
from planlineage.lifecycle.run_rows import RunRecord, read_run
from planlineage.watch import DEFAULT_LOST_GRACE, ledger
from planlineage.watch.ledger import Snap
from planlineage.watch.loop import PlatformWatcher
from planlineage.watch.records import JobSeen

#: Flink's JobStatus names; a job's row keeps the index of the last one seen.
FLINK_STATES = (
    "INITIALIZING", "CREATED", "RUNNING", "FAILING", "FAILED", "CANCELLING",
    "CANCELED", "FINISHED", "RESTARTING", "SUSPENDED", "RECONCILING",
)  # fmt: skip
#: The states the lifecycle turns into events (the others are remembered, never sent).
REPORTED = {"RUNNING", "FINISHED", "FAILED", "CANCELED"}
TERMINAL = {"FINISHED", "FAILED", "CANCELED"}
REQUEST_TIMEOUT = 5.0  # seconds: a JobManager that does not answer is an outage, never a hang
JOB_KEY_PREFIX = "gateway:"  # the lifecycle's app id of a gateway job: gateway:<Flink JobID>


def job_key(job_id: str) -> str:
    return JOB_KEY_PREFIX + job_id


def clean_url(url: str) -> str:
    """The JobManager's base URL without credentials, query or trailing slash (``http://`` when
    no scheme is given): the key of its jobs in the store and the address said in messages."""
    text = url.strip()
    if "://" not in text:
        text = "http://" + text
    parts = urllib.parse.urlsplit(text)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit((parts.scheme.lower(), netloc.lower(), parts.path.rstrip("/"), "", ""))


def source_key(url: str) -> str:
    return "gateway:" + clean_url(url)


def _moment(millis: Any) -> datetime | None:
    """One of the JobManager's epoch-millisecond times (None: not set, ``-1`` for a running job's end)."""
    if not isinstance(millis, int | float) or isinstance(millis, bool) or millis <= 0:
        return None
    return datetime.fromtimestamp(millis / 1000, UTC)


def _not_before(at: str | None, recorded: str) -> str | None:
    """``at``, or the run's recording time when the JobManager's time is earlier: the job's START
    carries the time the run was recorded, and no later event of the run may be dated before it
    (the times are ISO 8601 UTC with milliseconds and ``Z``: they compare as text)."""
    return max(at, recorded) if at is not None and recorded else at


def _event_time(millis: Any) -> str | None:
    moment = _moment(millis)
    return format_time(moment) if moment is not None else None


class JobManager:
    """The few calls of Flink's JobManager REST API the follower needs (``urllib``: nothing to
    install).  Every failure to reach it is a :class:`SourceError` without credentials."""

    def __init__(self, url: str, timeout: float = REQUEST_TIMEOUT) -> None:
        self.url, self.timeout = clean_url(url), timeout
        full = url.strip().rstrip("/") if "://" in url else "http://" + url.strip().rstrip("/")
        parts = urllib.parse.urlsplit(full)
        self._headers = {"Accept": "application/json"}
        if parts.username is not None:  # a JobManager behind Basic authentication (urllib asks no userinfo)
            secret = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
            self._headers["Authorization"] = "Basic " + base64.b64encode(secret.encode()).decode("ascii")
            full = urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
        self._full = full

    def _get(self, path: str) -> Any:
        request = urllib.request.Request(self._full + path, headers=self._headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                return json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return None
            raise SourceError(f"the JobManager at {self.url} answered {error.code} to GET {path}") from None
        except (OSError, ValueError) as error:
            reason = getattr(error, "reason", None) or type(error).__name__
            raise SourceError(f"the JobManager at {self.url} cannot be reached ({reason})") from None

    def overview(self) -> dict[str, dict]:
        """Every job the JobManager knows, by JobID (``jid``, ``name``, ``state``, ``start-time``…)."""
        answer = self._get("/jobs/overview") or {}
        return {str(job.get("jid")): job for job in answer.get("jobs") or [] if isinstance(job, dict)}

    def job(self, job_id: str) -> dict | None:
        """``GET /jobs/{id}`` (its ``timestamps`` per state among the rest); None: unknown (404)."""
        answer = self._get(f"/jobs/{job_id}")
        return answer if isinstance(answer, dict) else None

    def root_exception(self, job_id: str) -> str | None:
        """The first line of the failed job's root exception, or None: ``root-exception`` (Flink
        1.x), else the newest entry of ``exceptionHistory`` (the only one Flink 2.x keeps)."""
        try:
            answer = self._get(f"/jobs/{job_id}/exceptions") or {}
        except SourceError:
            return None
        if not isinstance(answer, dict):
            return None
        text = answer.get("root-exception") or ""
        entries = (answer.get("exceptionHistory") or {}).get("entries") or []
        if not text and entries and isinstance(entries[0], dict):
            text = entries[0].get("stacktrace") or entries[0].get("exceptionName") or ""
        lines = str(text).strip().splitlines()
        return lines[0][:500] if lines else None

    def close(self) -> None:
        """Nothing to close (one connection per call); the watch loop calls it after an outage."""


@dataclass(frozen=True)
class JobManagerTarget:
    """Where the followed jobs run; what the watch loop's messages name."""

    url: str

    def key(self) -> str:
        return source_key(self.url)

    def masked(self) -> str:
        return clean_url(self.url)


@dataclass
class Options:
    lost_grace: float = DEFAULT_LOST_GRACE  # seconds a job may be unknown to the JobManager
    verbose: bool = False


@dataclass
class Follower(PlatformWatcher[JobManagerTarget, JobManager]):
    """Follows the gateway's jobs at one JobManager; one poll per :func:`planlineage.watch.loop`
    round (under the store's leadership ``gateway-jobmanager:<url>``: several proxies on one store
    poll it once)."""

    options: Options = field(default_factory=Options)
    #: Hand-overs the store could not take (kept in the node's spool): job key -> (run id, JobID, name).
    kept: dict[str, tuple[str, str, str]] = field(init=False, repr=False, default_factory=dict)

    platform = "JobManager"
    polled = "REST API"  # the watch loop's lines: "the JobManager REST API is readable again"

    def __post_init__(self) -> None:
        self.source = JobManager(self.target.url)
        self.key = self.target.key()
        self.lead_name = f"gateway-jobmanager:{clean_url(self.target.url)}"
        self.schema = None  # the watch loop clears it after an outage; a JobManager has none

    def followed(self) -> dict[str, Snap]:
        """The jobs followed now, by job key."""
        return ledger.load(self.store, self.key)[1]

    def kept_for_later(self, key: str, run_id: str, job_id: str, job_name: str) -> None:
        """A job whose hand-over the store refused: it is kept in this node's spool (run id chosen),
        and followed here once the spool is recorded."""
        self.kept[key] = (run_id, job_id, job_name)

    def _follow_kept(self) -> None:
        """The kept hand-overs, once the store takes writes again: the spool recorded (oldest
        first; a :class:`StoreError` while the store still refuses is the loop's backoff), then each
        recorded run followed as if handed over now."""
        if not self.kept:
            return
        if spool.waiting(self.store):
            runs.replay_spooled(self.store)
        for key, (run_id, job_id, job_name) in list(self.kept.items()):
            run = self.store.read(functools.partial(_run_of, key=key))
            if run is None or run.run_id != run_id:
                if not spool.waiting(self.store):
                    del self.kept[key]  # lineage is off now, or a later run replaced it: nothing to follow
                continue

            def follow(conn, key=key, job_id=job_id, run_id=run_id) -> None:
                conn.execute(
                    "INSERT INTO watch_jobs (source, job_key, state, job_id, run_job_id, lost_since, lost_sent) "
                    "VALUES (?, ?, NULL, ?, ?, NULL, 0) ON CONFLICT DO NOTHING",
                    (self.key, key, job_id, run_id),
                )

            self.store.write(follow)
            ledger.add_compile(self.store, self.key, run_id, key, job_name, self.clock())
            del self.kept[key]

    def _adopt_recorded(self) -> None:
        """The gateway runs recorded without a follow row, whose job this JobManager knows: a
        hand-over kept in the spool by a proxy that stopped before the store took it (the spool
        recorded since, by this proxy or any other command), followed from here on."""
        if spool.waiting(self.store):
            runs.replay_spooled(self.store)
        ended = tuple(TERMINAL_EVENT_TYPES)

        def orphans(conn) -> list[tuple[str, str]]:
            rows = conn.execute(
                "SELECT app_id, run_id FROM runs WHERE app_id LIKE ? "
                f"AND (last_event IS NULL OR last_event NOT IN ({', '.join('?' * len(ended))})) "
                "AND NOT EXISTS (SELECT 1 FROM watch_jobs WHERE watch_jobs.job_key = runs.app_id)",
                (JOB_KEY_PREFIX + "%", *ended),
            ).fetchall()
            return [(str(r[0]), str(r[1])) for r in rows]

        found = self.store.read(orphans)
        if not found:
            return
        known = self.source.overview()  # only this JobManager's jobs: another follower adopts its own
        for key, run_id in found:
            job_id = key[len(JOB_KEY_PREFIX) :]
            if job_id not in known:
                continue
            self.store.write(functools.partial(_adopt, source=self.key, key=key, job_id=job_id, run_id=run_id))

    def poll(self) -> None:
        """One look at the JobManager; raises :class:`SourceError` when it cannot be reached."""
        self._follow_kept()
        self._adopt_recorded()
        cursor, snaps = ledger.load(self.store, self.key)
        if not snaps:
            return  # nothing to follow: the JobManager is not asked
        before = {key: Snap(s.state, s.job_id, s.run_job_id, s.lost_since, s.lost_sent) for key, s in snaps.items()}
        jobs = self.source.overview()
        now = self.clock()
        for key, snap in list(snaps.items()):
            if self._current(key, snap) is None:
                # Its run was dropped (no lineage: the watch loop says why) or replaced: nothing to tell.
                del snaps[key]
                continue
            seen = jobs.get(snap.job_id) or self.source.job(snap.job_id)
            if seen is None:
                self._unknown(key, snap, now)
            else:
                snap.lost_since = None
                self._seen(key, snap, seen)
            if snap.lost_sent or (snap.state is not None and FLINK_STATES[snap.state] in TERMINAL):
                del snaps[key]  # its run ended: nothing more to follow
        if snaps != before:  # a poll where nothing moved writes nothing
            ledger.save(self.store, self.key, cursor or 0, snaps, before)

    def _seen(self, key: str, snap: Snap, seen: dict) -> None:
        state = str(seen.get("state") or "").upper()
        if state not in FLINK_STATES:
            return
        code = FLINK_STATES.index(state)
        if code == snap.state:
            return
        name = str(seen.get("name") or snap.job_id)
        run = self._current(key, snap)
        if state in REPORTED and run is not None:
            started = _moment(seen.get("start-time"))
            detail = self.source.job(snap.job_id)  # once per change: its per-state times
            times = (detail or {}).get("timestamps") or {}
            if state in TERMINAL and snap.state != FLINK_STATES.index("RUNNING") and times.get("RUNNING"):
                # It ran, perhaps between two polls: RUNNING first, at the JobManager's time.
                at = _not_before(_event_time(times["RUNNING"]), run.created)
                self.report(JobSeen(key, name, "RUNNING", snap.job_id, started, at=at))
            error = self.source.root_exception(snap.job_id) if state == "FAILED" else None
            ended = (detail or seen).get("end-time") if state in TERMINAL else None
            at = _not_before(_event_time(ended) or _event_time(times.get(state)), run.created)
            self.report(JobSeen(key, name, state, snap.job_id, started, error, at))
        snap.state = code

    def _unknown(self, key: str, snap: Snap, now: float) -> None:
        """The JobManager does not know the job (404): ABORT once that lasted the grace period."""
        snap.lost_since = snap.lost_since if snap.lost_since is not None else now
        lasted = now - snap.lost_since
        if lasted < self.options.lost_grace:
            self.verbose(
                f"{key}: unknown to the JobManager at {self.target.masked()}, ended (ABORT) only if that "
                f"lasts {self.options.lost_grace:g}s"
            )
            return
        snap.lost_sent = True
        if self._current(key, snap) is not None:
            gone = f"unknown to the JobManager for {lasted:.0f}s"
            self.report(JobSeen(key, snap.job_id, "CANCELED", snap.job_id), f"{gone}, ended")

    def _current(self, key: str, snap: Snap) -> runs.RunRecord | None:
        """The job's run, when it is still the one this row follows."""
        # Read here, not through runs.current_run, which answers None when the store cannot be
        # read: a store away is the loop's StoreError (backoff), never a run taken for gone.
        run = self.store.read(lambda conn: read_run(conn, key))
        return run if run is not None and run.run_id == snap.run_job_id else None


def _run_of(conn, key: str) -> RunRecord | None:
    return read_run(conn, key)


def _adopt(conn, source: str, key: str, job_id: str, run_id: str) -> None:
    """Follow an open gateway run that has no follow row yet (a row another node wrote wins)."""
    conn.execute(
        "INSERT INTO watch_jobs (source, job_key, state, job_id, run_job_id, lost_since, lost_sent) "
        "VALUES (?, ?, NULL, ?, ?, NULL, 0) ON CONFLICT DO NOTHING",
        (source, key, job_id, run_id),
    )
