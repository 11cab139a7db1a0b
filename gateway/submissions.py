"""The lineage side of ``planlineage gateway``: a job a session submitted → a lifecycle run, its
compile, START per sink, then its states at the JobManager.

The proxy's CLI makes one :class:`Lineage` and calls it from its recording thread, never on a
client's request path::

    lineage = Lineage(store, settings, jobmanager_url=None, say=print)
    lineage.start_following()           # a thread: the JobManager poll loop and delivery
    lineage.job_submitted(submitted)    # for each gateway.records.JobSubmitted; the run id or None
    lineage.stop()                      # at shutdown

For each job id, :meth:`Lineage.job_submitted` (once per job id, whoever calls it how often:
the store says which jobs were recorded, so a restarted proxy or a second proxy on the same store
records nothing twice):

1. builds the job's script from the session's statements (:mod:`planlineage.gateway.job_script`);
2. asks the JobManager for the job (``GET /jobs/{id}``: Flink's job name and ``start-time``) and
   the gateway for the session's configuration (``GET /v1/sessions/{handle}``: the gateway's
   Flink configuration merged with the session's, which names the JobManager, ``rest.address``
   and ``rest.port``, when ``--jobmanager`` did not, and openlineage-flink's listener when the
   cluster runs it);
3. records a pending run of app ``gateway:<JobID>`` under the job's name (``pipeline.name``, else
   Flink's ``insert-into_…``), or under openlineage-flink's job and run id when the job also runs
   that listener (``listener_conf.coexist``: the run id from the JobID and the JobManager's
   ``start-time``), and the job in ``watch_jobs`` in the same transaction;
4. queues the compile with the planner of the gateway's Flink version (``flink_version``;
   tables whose connector is not at hand go through the planner's stand-ins) through the
   lifecycle's compile queue, whose service sends START per sink through the outbox.

A state store that refuses the write (a shared PostgreSQL away, a SQLite file locked past its
busy timeout) loses nothing: the hand-over (its run id chosen, its compile job) is kept in this
node's spool as ``planlineage submit`` keeps a submission (:mod:`planlineage.lifecycle.spool`);
the next command or compile service that reaches the store records it and sends START, and the
JobManager follower follows the job from then on.

Nothing here raises into the proxy (fail-open: a problem is one line said, and None), and with
lineage not configured nothing is asked, written or sent.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any, Literal

from planlineage.emitter.run_ids import new_run_id
from planlineage.errors import StoreError
from planlineage.gateway import job_script, jobmanager
from planlineage.gateway.records import JobSubmitted
from planlineage.lifecycle import compile_queue, runs
from planlineage.settings import Settings
from planlineage.store.sqlite import Store
from planlineage.watch import DEFAULT_INTERVAL, DEFAULT_LOST_GRACE, ledger

log = logging.getLogger(__name__)

#: How long a submission waits for the JobManager to show the job's start time, when the run id
#: of openlineage-flink's listener is derived from it (on the recording thread, never a client's call).
START_TIME_WAIT = 10.0
NO_JOBMANAGER = "gateway:(no JobManager address)"  # the dedupe rows of jobs that cannot be followed


class RecordedElsewhere(Exception):
    """Another proxy on the store recorded the job first: the hand-over's transaction rolls back."""


def _stderr(message: str) -> None:
    print(f"planlineage gateway: {message}", file=sys.stderr, flush=True)


class Lineage:
    """``Lineage(store, settings, jobmanager_url=None, *, say=None, interval=5.0, lost_grace=300.0,
    verbose=False)``

    * ``store``: the state store (:class:`planlineage.store.sqlite.Store`, SQLite or PostgreSQL);
    * ``settings``: planlineage's :class:`~planlineage.settings.Settings` (lineage unconfigured:
      every call is a no-op);
    * ``jobmanager_url``: ``--jobmanager``; None: read from each session's configuration
      (``rest.address``/``rest.port``), and said once when it is not there;
    * ``say``: one line for the user (default: standard error);
    * ``interval``: seconds between two looks at the JobManager; ``lost_grace``: seconds a job may
      be unknown to the JobManager before its run ends with ABORT.

    Methods: :meth:`job_submitted` ``(JobSubmitted) -> str | None`` (the run id), thread-safe and
    never raising; :meth:`start_following` ``() -> None``; :meth:`stop` ``(timeout=10.0) -> None``.
    """

    def __init__(
        self,
        store: Store,
        settings: Settings,
        jobmanager_url: str | None = None,
        *,
        say: Callable[[str], None] | None = None,
        interval: float = DEFAULT_INTERVAL,
        lost_grace: float = DEFAULT_LOST_GRACE,
        verbose: bool = False,
    ) -> None:
        self.store, self.settings = store, settings
        self.say = say or _stderr
        self.interval, self.lost_grace, self.verbose = interval, lost_grace, verbose
        self.jobmanager_url = jobmanager_url.strip() if jobmanager_url and jobmanager_url.strip() else None
        self._lock = threading.Lock()
        self._followers: dict[str, jobmanager.Follower] = {}
        self._said: set[str] = set()
        self._stop: threading.Event | None = None
        self._thread: threading.Thread | None = None
        self._gateway_jobmanagers: dict[str, str | None] = {}  # gateway URL -> JobManager URL found
        self._kept: dict[str, str] = {}  # job key -> run id of hand-overs kept in the spool

    # -- the entry points -------------------------------------------------------------------

    def job_submitted(self, submitted: JobSubmitted) -> str | None:
        """Record the job's run and queue its compile; the run id (the earlier one when the job was
        recorded before), or None when nothing is reported (said why).  Never raises."""
        try:
            if not self.settings.configured():
                return None  # nothing until configured: not a request, not a row
            with self._lock:  # one job at a time: a job handed over twice is recorded once
                return self._job_submitted(submitted)
        except Exception as problem:  # fail-open: the proxy's recording thread goes on
            why = _reason(problem)
            self._once(f"failed:{submitted.job_id}:{why}", f"WARN job {submitted.job_id}: not reported ({why})")
            return None

    def start_following(self) -> None:
        """Start the thread that follows the submitted jobs at the JobManager and delivers the
        events; also the jobs an earlier run of the proxy left unfinished (from the store)."""
        with self._lock:
            if self._stop is not None:
                return
            if self._configured():
                # --jobmanager first: it may hold the credentials the remembered address (stored
                # without them) lacks, and the first follower made for an address is the one kept.
                urls = [self.jobmanager_url] if self.jobmanager_url else []
                urls += self._remembered_jobmanagers()
                for url in urls:
                    self._follower(url)  # before the loop: it starts once, with all of them
            self._stop = threading.Event()
            self._restart_loop()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop following (what is queued stays in the outbox for the next start)."""
        with self._lock:
            stop, thread = self._stop, self._thread
            self._stop, self._thread = None, None
        if stop is not None:
            stop.set()
        if thread is not None:
            thread.join(timeout)

    # -- one submission ---------------------------------------------------------------------

    def _job_submitted(self, submitted: JobSubmitted) -> str | None:
        job_id = submitted.job_id.strip().lower()
        if len(job_id) != 32 or any(c not in "0123456789abcdef" for c in job_id):
            self.say(f"WARN {job_id!r} is not a Flink JobID: not reported")
            return None
        key = jobmanager.job_key(job_id)
        known = runs.current_run(self.store, key)
        if known is not None:
            return known.run_id  # handed over before (twice, or before a restart): nothing again
        if key in self._kept:
            return self._kept[key]  # handed over again while the first waits in the spool
        try:
            job = job_script.build(submitted.statements, submitted.properties)
        except job_script.NotReportable as why:
            if self.verbose or not isinstance(why, job_script.NoSink):  # a query's job: every SELECT starts one
                self.say(f"job {job_id}: not reported: {why}")
            return None
        for warning in job.warnings:
            self._once(f"jar:{job_id}:{warning}", f"WARN job {job_id}: {warning}")
        version = self._flink_version(submitted, job_id)
        if version is False:
            return None
        session_conf = self._session_conf(submitted)
        url = self.jobmanager_url or self._jobmanager_of(submitted, session_conf)
        follower = self._follower(url) if url else None
        if follower is None:
            self._once(
                "no-jobmanager",
                "WARN no JobManager address: START is sent for each job but not its states; give "
                "`planlineage gateway --jobmanager http://HOST:8081` (the gateway's configuration names no "
                "rest.address)",
            )
        seen = self._job_at(follower, job_id, wait=False)
        job_name = str((seen or {}).get("name") or "") or job.job_name
        namespace, run_id = None, None
        shared = self._shared_run(job, session_conf, version, job_name, job_id, follower, seen)
        if shared is not None:
            namespace, job_name, run_id = shared.job_namespace, shared.job_name, shared.run_id
        source = follower.key if follower is not None else NO_JOBMANAGER
        run_id = run_id or new_run_id()  # chosen here: a hand-over kept in the spool keeps it
        compile_job = compile_queue.new_compile_job(
            app_id=key, run_id=run_id, job_name=job_name, sql=job.sql,
            flink_version=version, jars=job.jars, job_namespace=namespace,
        )  # fmt: skip

        def follow(conn, new_run_id: str) -> None:
            # Writes are serialized (SQLite's write lock, PostgreSQL's advisory lock): a second
            # hand-over of the job (another proxy) sees the first's row and records nothing.
            if conn.execute("SELECT 1 FROM watch_jobs WHERE job_key = ?", (key,)).fetchone() is not None:
                raise RecordedElsewhere
            conn.execute(
                "INSERT INTO watch_jobs (source, job_key, state, job_id, run_job_id, lost_since, lost_sent) "
                "VALUES (?, ?, NULL, ?, ?, NULL, 0)",
                (source, key, job_id, new_run_id),
            )

        try:
            recorded = runs.submit_pending(
                self.store, key, job_name, self.settings, run_id, namespace=namespace, also=follow
            )
        except RecordedElsewhere:
            recorded = None
        except StoreError as away:  # the store refuses writes (away, busy, read-only): kept, never lost
            return self._keep_for_later(compile_job, follower, job_id, away)
        if recorded is None:
            known = runs.current_run(self.store, key)
            return known.run_id if known is not None else None
        try:
            compile_queue.start(self.store, compile_job)
        except Exception as problem:  # QueueFailed (a job file that cannot be written) or worse
            runs.abandon_lineage(self.store, key, run_id)  # never left compiling for ever
            self.say(
                f"WARN job {job_id} {job_name}: run dropped: its compile could not be queued ({_reason(problem)}); "
                "make that folder writable (disk space, permissions): later jobs are reported"
            )
            return None
        if follower is not None:
            ledger.add_compile(self.store, follower.key, run_id, key, job_name, time.time())
        label = f"Flink {submitted.flink_version}" if submitted.flink_version else "the default Flink"
        self.say(f"{key} {job_name}: submitted through session {submitted.session}, {label}: compiling")
        return run_id

    def _keep_for_later(self, compile_job, follower, job_id: str, away: StoreError) -> str | None:
        """The hand-over in this node's spool, as ``planlineage submit`` keeps a submission: the
        next command or compile service that reaches the store records it (run, compile, START),
        and the follower follows the job then.  The run id, or None (said why) when the spool
        cannot keep it either."""
        from planlineage.lifecycle import runner

        key, run_id, job_name = compile_job["app_id"], compile_job["run_id"], compile_job["job_name"]
        try:
            runner.spool_submission(self.store, compile_job, runs.utc_now())
        except Exception as problem:  # SpoolFull (its message says what to do) or a folder that cannot be written
            self.say(
                f"WARN job {job_id} {job_name}: not reported: the state store cannot be written ({_reason(away)}) "
                f"and this node's spool cannot keep it ({_reason(problem)})"
            )
            return None
        self._kept[key] = run_id
        if follower is not None:
            follower.kept_for_later(key, run_id, job_id, job_name)
        self.say(
            f"{key} {job_name}: the state store cannot be written ({_reason(away)}): kept in this node's spool, "
            "reported once the store takes it"
        )
        return run_id

    def _flink_version(self, submitted: JobSubmitted, job_id: str) -> str | None | Literal[False]:
        """The minor version to compile with (None: planlineage's default), or False (said) when
        planlineage provides no such Flink."""
        from planlineage.errors import ProvisionError
        from planlineage.planner.provision import resolve_version
        from planlineage.watch.versions import minor_version

        if not submitted.flink_version:
            self._once("no-version", "the gateway did not say its Flink version: jobs compiled with the default")
            return None
        minor = minor_version(submitted.flink_version)
        try:
            resolve_version(minor or submitted.flink_version)
        except ProvisionError as problem:
            self._once(
                f"version:{submitted.flink_version}",
                f"WARN job {job_id}: not reported: Flink {submitted.flink_version} (the gateway's) is not a "
                f"version planlineage provides ({problem})",
            )
            return False
        return minor

    def _shared_run(self, job, session_conf, version, job_name, job_id, follower, seen):
        """openlineage-flink's job (and run) when the job also runs that listener, else None."""
        from planlineage.listener_conf import coexist

        config = self.settings.config()
        conf = coexist.job_conf(job.sql, config, version, session_conf)
        if coexist.mode(config.flink_runs, conf) != "coexist":
            return None
        millis = _millis((seen or {}).get("start-time"))
        if coexist.derives_run_id(conf) and millis is None and follower is not None:
            millis = _millis((self._job_at(follower, job_id, wait=True) or {}).get("start-time"))
        shared = coexist.coexisting_run(conf, config, job_name, job_id, millis)
        if shared is not None and shared.run_id is None and coexist.derives_run_id(conf):
            self.say(
                f"WARN job {job_id}: the listener's run id cannot be derived (the JobManager did not give the job's "
                "start-time): planlineage's own run id is used on the listener's job"
            )
        return shared

    # -- the JobManager and the gateway -----------------------------------------------------

    def _job_at(self, follower, job_id: str, wait: bool) -> dict | None:
        """``GET /jobs/{id}`` (None when it cannot be answered); with ``wait``, until it shows the
        job's start time or :data:`START_TIME_WAIT` passed."""
        if follower is None:
            return None
        end = time.monotonic() + (START_TIME_WAIT if wait else 0.0)
        while True:
            try:
                seen = follower.source.job(job_id)
            except Exception:  # fail-open: the job is reported without it
                seen = None
            if not wait or _millis((seen or {}).get("start-time")) is not None or time.monotonic() >= end:
                return seen
            time.sleep(0.5)

    def _session_conf(self, submitted: JobSubmitted) -> dict[str, str]:
        """The session's configuration as the gateway has it (its Flink configuration and the
        session's), or {} when the gateway does not answer."""
        path = f"/v1/sessions/{urllib.parse.quote(submitted.session, safe='')}"
        try:
            request = urllib.request.Request(
                submitted.gateway.rstrip("/") + path, headers={"Accept": "application/json"}
            )
            with urllib.request.urlopen(request, timeout=jobmanager.REQUEST_TIMEOUT) as answer:
                body = json.loads(answer.read() or b"{}")
        except (OSError, ValueError):
            return {}
        properties = body.get("properties") if isinstance(body, dict) else None
        return {str(k): str(v) for k, v in properties.items()} if isinstance(properties, dict) else {}

    def _jobmanager_of(self, submitted: JobSubmitted, conf: dict[str, str]) -> str | None:
        """The JobManager the gateway submits to, from its configuration: ``rest.address``
        (else ``jobmanager.rpc.address``) and ``rest.port`` (8081), https with REST SSL on."""
        if submitted.gateway in self._gateway_jobmanagers and not conf:
            return self._gateway_jobmanagers[submitted.gateway]
        host = (conf.get("rest.address") or conf.get("jobmanager.rpc.address") or "").strip()
        url = None
        if host:
            port = (conf.get("rest.port") or "8081").strip()
            scheme = "https" if conf.get("security.ssl.rest.enabled", "").strip().lower() == "true" else "http"
            url = f"{scheme}://{f'[{host}]' if ':' in host and not host.startswith('[') else host}:{port}"
            self._once(f"jm:{url}", f"following jobs at the JobManager {url} (the gateway's rest.address/rest.port)")
        self._gateway_jobmanagers[submitted.gateway] = url
        return url

    # -- following --------------------------------------------------------------------------

    def _configured(self) -> bool:
        try:
            return self.settings.configured()
        except Exception:  # unreadable settings: nothing reported, as unconfigured
            return False

    def _remembered_jobmanagers(self) -> list[str]:
        """The JobManagers of jobs an earlier run left unfinished (``watch_jobs`` of this adapter)."""

        def read(conn) -> list[str]:
            rows = conn.execute("SELECT DISTINCT source FROM watch_jobs WHERE source LIKE 'gateway:%'").fetchall()
            return [r[0][len("gateway:") :] for r in rows if r[0] != NO_JOBMANAGER]

        try:
            return self.store.read(read, default=[])
        except Exception:  # a store that cannot be read: nothing remembered now
            return []

    def _follower(self, url: str) -> jobmanager.Follower:
        """The follower of the JobManager at ``url`` (made once); the loop restarts to take a new one."""
        clean = jobmanager.clean_url(url)
        follower = self._followers.get(clean)
        if follower is None:
            follower = jobmanager.Follower(
                jobmanager.JobManagerTarget(url), self.store, self.settings,
                jobmanager.Options(lost_grace=self.lost_grace, verbose=self.verbose), say=self.say,
            )  # fmt: skip
            self._followers[clean] = follower
            if self._stop is not None:  # following already: the loop takes this JobManager too
                self._restart_loop()
        return follower

    def _restart_loop(self) -> None:
        """(Re)start the poll loop thread over every follower (a JobManager learnt later joins)."""
        from planlineage.watch import loop

        if self._stop is None or not self._followers:
            return
        if self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=10.0)
            self._stop = threading.Event()
        group, stop, interval = list(self._followers.values()), self._stop, self.interval

        def run() -> None:
            try:
                loop.watch(group, interval, stop)  # no signal handler: this is not the main thread
            except Exception as problem:  # never a traceback into the proxy
                self.say(f"WARN following jobs at the JobManager stopped: {_reason(problem)}")

        self._thread = threading.Thread(target=run, name="planlineage-gateway-jobmanager", daemon=True)
        self._thread.start()

    def _once(self, key: str, message: str) -> None:
        if key not in self._said:
            self._said.add(key)
            self.say(message)


def _millis(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and value > 0 else None


def _reason(problem: Exception) -> str:
    try:
        from planlineage.emitter.transports.base import scrub, short

        return short(scrub(str(problem) or type(problem).__name__), 240)
    except Exception:
        return type(problem).__name__
