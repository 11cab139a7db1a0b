"""The poll loop of ``planlineage watch``: StreamPark's rows in, the lifecycle's calls out.

Each poll:

1. (Re)connect; on every new connection detect the schema generation again.
2. Read the operation-log rows after the durable cursor, then the apps.  A successful START row
   of an app is a submission: the previous run, if it never ended, is closed (ABORT), then a new
   run is recorded and its compile handed to the lifecycle's runner, exactly as ``planlineage
   submit`` does.  The effective SQL is read now, after the START row (never at STARTING: the
   console promotes the candidate SQL after setting STARTING), with the team's variables.
3. Diff ``(state, job_id)`` against the snapshot and report changed states through the
   lifecycle's state function, as ``planlineage state`` does.  An app started in this poll gets its
   current state right after START, so a job that ran and ended between two polls still gets
   START then its end event.  LOST is reported only once it has lasted ``lost_grace`` seconds.
4. Save cursor and snapshot in one transaction.  Delivery is not the poll's: `watch` delivers beside
   the polls (:class:`planlineage.watch.loop.Deliverer`), `--once` after its poll.

First poll on an install (no cursor): the cursor starts at the newest log row (history is not
replayed) and apps alive on their cluster are adopted (START, and RUNNING if they run).

Without a readable operation log, a new non-empty ``job_id`` is the submission signal.  Several
starts of one app between two polls make one run: the earlier ones ended unseen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, tzinfo
from typing import TYPE_CHECKING

from planlineage.history import job_names
from planlineage.history import ledger as history_ledger
from planlineage.lifecycle import compile_queue, runs
from planlineage.streampark import PLATFORM, compile_inputs, history, reads, shared_runs, spark
from planlineage.streampark import sql as stored_text
from planlineage.streampark.reads import App
from planlineage.streampark.schema import Schema, column_problem, detect
from planlineage.streampark.states import (
    ALIVE,
    FLINK,
    KUBERNETES_MODES,
    OPERATION_START,
    SPARK,
    SPARK_OPERATION_STOP,
    SQL_JOB_TYPE,
    state_name,
)
from planlineage.watch import DEFAULT_LOST_GRACE, ledger, transitions
from planlineage.watch.connection import Source
from planlineage.watch.ledger import Snap
from planlineage.watch.loop import PlatformWatcher
from planlineage.watch.records import JobSeen
from planlineage.watch.url import Target

if TYPE_CHECKING:
    from planlineage.config import Config

NO_LOG = -1  # the cursor while the operation log is not readable


@dataclass
class Options:
    apps: str = "all"  # all | flagged | a comma-separated list of ids (flink:<id>, spark:<id>, or <id>)
    workspace: str | None = None
    lost_grace: float = DEFAULT_LOST_GRACE
    charset: str = stored_text.DEFAULT_CHARSET
    verbose: bool = False
    zone: tzinfo = UTC  # the console's time zone (its times are wall times without one)


def selection(apps: str) -> str | frozenset[str]:
    """``all``, ``flagged`` or the set of app keys the user listed (a bare id is a Flink app)."""
    text = (apps or "all").strip().lower()
    if text in ("all", "flagged"):
        return text
    keys = set()
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        engine, _, number = item.rpartition(":")
        if engine not in ("", FLINK, SPARK) or not number.isdigit():
            raise ValueError(f"--apps: {item!r} is not an app id (flink:<id>, spark:<id> or <id>)")
        keys.add(f"{engine or FLINK}:{int(number)}")
    if not keys:
        raise ValueError("--apps: give all, flagged, or app ids such as flink:100001,spark:100002")
    return frozenset(keys)


@dataclass
class Watcher(PlatformWatcher[Target, Source]):
    options: Options = field(default_factory=Options)  # in the base's place: the 4th argument

    platform = PLATFORM

    def __post_init__(self) -> None:
        self.source = Source(self.target)
        self.schema: Schema | None = None
        self.key = self.target.key()
        self._ledger = ledger.Kept(self.store, self.key)
        self.selected = selection(self.options.apps)
        self.streampark_reports = False
        self.spark_envs: dict[int | None, spark.Env] = {}  # t_spark_env by id; None: the default one
        self._stops: set[str] = set()  # Spark apps with a successful stop in this poll's log rows
        self.lead_name = f"streampark-watch:{self.key}"
        self._log_times: dict[int, reads.LogRow] = {}  # this poll's START rows, by id
        self._candidates: dict[str, App] = {}  # the apps this poll may start (their rows read together)
        self._inputs: _Inputs | None = None  # read at the poll's first start, for every candidate
        self._started: dict[str, int] = {}  # app key -> its newest successful START row in this poll

    # -- which apps -------------------------------------------------------------------------

    def _covered_by_streampark(self, app: App) -> bool:
        """StreamPark's own reporter (PR #4498) covers flagged apps outside Kubernetes modes."""
        if not self.streampark_reports or app.lineage_enable is False:
            return False
        return app.engine == SPARK or app.deploy_mode not in KUBERNETES_MODES

    def excluded(self, app: App) -> str | None:
        """Why ``app`` is not reported, or None when it is."""
        if app.engine == FLINK and app.job_type != SQL_JOB_TYPE:
            return "not a Flink SQL job"
        if app.engine == SPARK and app.job_type != SQL_JOB_TYPE:
            return (
                "a Spark JAR/PySpark app: its lineage can only come from the OpenLineage Spark listener "
                "inside it (planlineage spark-conf adds it), never from this watcher"
            )
        if app.engine == SPARK:
            listener = spark.listener_reason(app.app_properties, self.spark_env(app).conf)
            if listener is not None:
                return f"its lineage comes from the OpenLineage Spark listener ({listener}): not reported twice"
        if app.lineage_enable is not None:
            if not app.lineage_enable:
                return "lineage_enable is off in StreamPark"
        elif self.selected == "flagged":
            return "--apps flagged, and this StreamPark has no lineage_enable column"
        if isinstance(self.selected, frozenset) and app.key not in self.selected:
            return "not listed in --apps"
        if self._covered_by_streampark(app):
            return "StreamPark reports its lineage itself (lineage.gravitino.address is set)"
        return None

    def spark_env(self, app: App) -> spark.Env:
        """The app's ``t_spark_env`` (``getByIdOrDefault``: no version_id is the default env)."""
        return self.spark_envs.get(app.version_id) or spark.Env(None, {})

    def load_spark_envs(self, schema: Schema) -> None:
        self.spark_envs = compile_inputs.spark_envs(self.source, schema, self.options.charset, self.once)

    # -- one poll ---------------------------------------------------------------------------

    def _schema(self) -> Schema:
        if self.source.connect() or self.schema is None:
            schema = detect(self.source)
            if self.schema is None or schema != self.schema:
                self.say(f"{self.target.masked()}: {schema.describe()}")
                columns = column_problem(schema)
                if columns is not None:
                    self.say(f"WARN {columns}; until then {', '.join(schema.broken)} read as absent")
                hidden = schema.unreadable_spark_tables(self.source.dialect)
                if schema.has("t_spark_app") and not schema.spark and hidden:
                    self.say(
                        f"WARN Spark SQL apps are not read: the account cannot read {', '.join(hidden)} "
                        "(watch --check lists the grants)"
                    )
            self.schema = schema
        return self.schema

    def poll(self) -> None:
        """One poll; raises :class:`SourceError` when the database cannot be read."""
        schema = self._schema()
        settings = reads.settings(self.source, schema)
        self.streampark_reports = bool((settings.get("lineage.gravitino.address") or "").strip())
        if self.streampark_reports:
            self.once(
                "streampark-reports",
                "StreamPark reports lineage itself (its lineage.gravitino.address is set): the apps it covers "
                "(lineage_enable, outside Kubernetes modes) are skipped here",
            )
        self.load_spark_envs(schema)
        cursor, snaps = self._ledger.load()
        first = cursor is None
        log_ok = self._log_readable(schema)
        rows: list[reads.LogRow] = []
        # The log is read before the apps: a START row written in between is then seen next poll
        # with its app's new state, never skipped by a cursor taken after it.
        if log_ok and cursor is not None and cursor >= 0:
            rows = reads.log_rows(self.source, schema, cursor)
        elif log_ok:
            cursor = reads.max_log_id(self.source, schema)  # start after the newest row: no history
        elif cursor is None:
            cursor = NO_LOG  # once the log becomes readable it is started at its newest row
        apps = reads.apps(self.source, schema)
        now = self.clock()
        fresh: dict[str, Snap] = {}
        skipped = 0
        started: dict[str, int] = {}  # app key -> its newest successful START row
        self._log_times = {row.id: row for row in rows}
        for row in rows:
            if row.option == OPERATION_START and row.success:
                started[row.key] = row.id
        self._stops = {r.key for r in rows if r.engine == SPARK and r.option == SPARK_OPERATION_STOP and r.success}
        self._candidates = {
            a.key: a
            for a in apps
            if _may_start(a, snaps.get(a.key), first, a.key in started) and self.excluded(a) is None
        }
        self._inputs = None
        self._started = started
        for app in apps:
            prev = snaps.get(app.key)
            if (
                not first
                and prev is not None
                and prev.state == app.state
                and prev.job_id == app.job_id
                and prev.lost_since is None
                and app.key not in started
            ):  # nothing moved (most of an estate, every poll): nothing to report, the same row
                fresh[app.key] = prev
                if (app.engine == SPARK or app.job_type == SQL_JOB_TYPE) and self.excluded(app) is not None:
                    skipped += 1
                continue
            snap = Snap(app.state, app.job_id)
            if prev is not None:
                snap.run_job_id, snap.lost_since, snap.lost_sent = prev.run_job_id, prev.lost_since, prev.lost_sent
            fresh[app.key] = snap
            reason = self.excluded(app)
            if reason is not None:
                if app.engine == SPARK or app.job_type == SQL_JOB_TYPE:
                    skipped += 1
                    if self.options.verbose:
                        self.once(f"excluded:{app.key}:{reason}", f"{app.key} {app.job_name}: not reported: {reason}")
                # The store is asked only when the app moved: an estate of thousands of apps not
                # reported costs no store read per app per poll.
                if prev is not None and _moved(app, prev, app.key in started) and self._open_run(app):
                    self._follow(app, prev, snap, app.key in started, now)
                elif app.engine == SPARK and prev is not None and prev.state != app.state:
                    self.verbose(f"{app.key} {app.job_name}: {state_name(SPARK, app.state)} (not reported: {reason})")
                continue
            self._app(app, prev, snap, first, started.get(app.key), log_ok, now)
        newest = max([r.id for r in rows], default=cursor)
        self._ledger.save(newest, fresh, before=snaps)  # only the rows that changed
        if skipped:
            self.once(
                f"skipped:{skipped}",
                f"{skipped} SQL/Spark app(s) not reported (--verbose or `watch --check` says which and why)",
            )

    def _log_readable(self, schema: Schema) -> bool:
        if schema.log_readable:
            return True
        if schema.log_table in schema.broken:  # said with the schema: only the consequence here
            self.once("no-log", "new job ids are taken as submissions while the operation log is set aside")
            return False
        self.once(
            "no-log",
            f"the operation log {schema.log_table} is not readable: new job ids are taken as submissions "
            f"(grant SELECT on {schema.log_table} for exact starts)",
        )
        return False

    def _app(self, app: App, prev: Snap | None, snap: Snap, first: bool, logged: int | None, log_ok: bool, now: float):
        """One selected SQL app, Flink or Spark: the same starts, restarts and state reports."""
        name = state_name(app.engine, app.state)
        if first:
            if name in ALIVE[app.engine] and self._start(app, snap, "adopted"):
                self._report(app, name)
            return
        start = logged is not None
        if not start and prev is not None and app.job_id and app.job_id != prev.job_id:
            # No START row: a restart whose row was deleted (or is not visible yet), or no log at all.
            start = bool(prev.job_id) or not log_ok
        if logged is not None and snap.run_job_id == f"job:{app.job_id}":
            start = False  # already started when its new job id showed up before its log row
            snap.run_job_id = f"logged:{logged}"
        if logged is not None and _started_by_row(snap) >= logged:
            start = False  # started by this very row before a crash stopped the poll from saving
        held = shared_runs.held(snap.run_job_id)
        if held is not None and not start and not shared_runs.waits(app):
            start, logged = True, held[1]  # the tracker has written Flink's start time: started now
            self._start(app, snap, held[0], logged)
        elif start:
            self._start(app, snap, "logged" if logged is not None else "job", logged)
        self._state(app, prev, snap, now, force=start)

    def _state(self, app: App, prev: Snap | None, snap: Snap, now: float, force: bool = False) -> None:
        """Report the app's state if it changed (``force``: right after a start); LOST only once it
        has lasted the grace period, so a job that comes back keeps its open run."""
        name = self._platform_state(app, prev)
        if name == "LOST":
            snap.lost_since = snap.lost_since if snap.lost_since is not None else now
            if not snap.lost_sent and now - snap.lost_since >= self.options.lost_grace:
                snap.lost_sent = True
                self._report(app, name, prev)
            elif not snap.lost_sent:
                grace = self.options.lost_grace
                self.verbose(f"{app.key} {app.job_name}: LOST, reported only if it lasts {grace:g}s")
            return
        snap.lost_since, snap.lost_sent = None, False
        if force or prev is None or prev.state != app.state:
            self._report(app, name, prev)

    def _platform_state(self, app: App, prev: Snap | None) -> str:
        """The state name the lifecycle is told.  Spark has no CANCELED: a stop from the console
        is STOPPING, a CANCEL row in the log, then KILLED (``doStopped`` / YARN).  A KILLED that
        follows a stop is told as CANCELED, so it ends the run with ABORT as a Flink cancel does;
        any other KILLED is a failure."""
        name = state_name(app.engine, app.state)
        stopped = app.key in self._stops or (prev is not None and state_name(SPARK, prev.state) == "STOPPING")
        return "CANCELED" if app.engine == SPARK and name == "KILLED" and stopped else name

    def _read_inputs(self, app: App) -> _Inputs:
        """The compile inputs of this poll's starts, read at its first start for every app it may
        start (``app`` among them; one outside them is read again with them)."""
        assert self.schema is not None
        if self._inputs is None or app.key not in self._candidates:
            self._candidates.setdefault(app.key, app)
            apps = list(self._candidates.values())
            flink = [a for a in apps if a.engine == FLINK]
            starts = reads.last_starts(self.source, self.schema, flink) if self.schema.log_readable else {}
            rows = [*starts.values(), *(self._log_times[i] for a in flink if (i := self._started.get(a.key)))]
            self._inputs = _Inputs(
                starts=starts,
                sqls=reads.effective_sqls(self.source, self.schema, apps),
                variables=reads.team_variables(self.source, self.schema, [a.team_id for a in apps]),
                envs=reads.flink_envs(self.source) if flink else {},
                recorded=history_ledger.lookup_many(self.store, [history.run_key(r.app_id, r.id) for r in rows]),
                flink_starts=reads.flink_starts(self.source, self.schema, flink) if flink else {},
            )
        return self._inputs

    def _shared_run(self, app: App, text: str, version: str | None, inputs: _Inputs) -> shared_runs.Decision:
        """The listener's job and run for a run of ``app`` starting now (or a wait for them)."""
        if app.engine == FLINK and inputs.config is None:
            inputs.config = self.settings.config()
        row, zone = inputs.flink_starts.get(app.key), self.options.zone
        decision = shared_runs.decide(app, text, inputs.config, version, row, zone, self.source.target.dialect)
        if decision.warning:
            self.once(f"shared-run:{app.key}", f"WARN {app.key} {app.job_name}: {decision.warning}")
        return decision

    def _open_run(self, app: App) -> bool:
        return transitions.open_run(self.store, app.key) is not None

    def _follow(self, app: App, prev: Snap, snap: Snap, logged: bool, now: float) -> None:
        """An app no longer selected (opt-in switched off, StreamPark now reporting itself) whose
        run the watcher started: its states are still reported until that run ends; a new start
        of it closes the run (ABORT) and is not taken."""
        if logged or (app.job_id and prev.job_id and app.job_id != prev.job_id):
            self._close_previous(app)
        elif prev.state != app.state or state_name(app.engine, app.state) == "LOST":
            self._state(app, prev, snap, now)

    def _report(self, app: App, name: str, prev: Snap | None = None) -> None:
        """Tell the lifecycle, naming the state change that caused it (``STARTING -> RUNNING:
        RUNNING event``); a state that did not change (the report right after a restart, an
        adoption, a LOST that lasted) is named alone, never as ``X -> X``."""
        shown = "KILLED after a stop" if name == "CANCELED" and app.engine == SPARK else name
        before = state_name(app.engine, prev.state) if prev is not None and prev.state is not None else None
        if before is not None and before != state_name(app.engine, app.state):
            shown = f"{before} -> {shown}"
        self.report(JobSeen(app.key, app.job_name, name, app.job_id), shown)

    def _close_previous(self, app: App) -> None:
        self.close_open_run(app.key, app.job_name)

    def _start(self, app: App, snap: Snap, how: str, log_id: int | None = None) -> bool:
        """A new run of ``app`` (its previous one closed first); False when it cannot be started."""
        assert self.schema is not None
        inputs = self._read_inputs(app)
        logged = self._log_times.get(log_id or 0)
        if logged is None and log_id and (newest := inputs.starts.get(app.key)) is not None and newest.id == log_id:
            logged = newest  # a start held for Flink's start time: its row was read in an earlier poll
        key, began = history.watched_run(
            self.source, self.schema, app, how, logged, self.options.zone, starts=inputs.starts
        )
        replayed = transitions.replayed(self.store, key, app.key, inputs.recorded) if key is not None else None
        if key is not None and replayed is not None:  # reported already (history replay): never sent twice
            if replayed:
                snap.run_job_id = f"logged:{key.rpartition('=')[2]}"
                ledger.save_app(self.store, self.key, app.key, snap)
                self.say(f"{app.key} {app.job_name}: {how} run continues its replayed run")
            return replayed
        self._close_previous(app)
        row = inputs.sqls.get(app.key)
        if row is None:
            self.say(f"{app.key} {app.job_name}: not reported: it has no effective SQL")
            return False
        try:
            text = stored_text.decode(row["text"], self.options.charset) or ""
            text = stored_text.replace_variables(text, inputs.variables.get(app.team_id, {})) or ""
        except stored_text.TooLarge as error:  # a row past the watcher's limits: this app only
            self.say(f"WARN {app.key} {app.job_name}: not reported: {error}")
            return False
        except stored_text.DecodeError as error:
            self.say(f"{app.key} {app.job_name}: not reported: {error}")
            return False
        if app.engine == SPARK:
            compile_with = compile_inputs.spark_job(app, self.spark_env(app), self.once)
        else:
            env = inputs.envs.get(app.version_id, (None, None))
            compile_with = compile_inputs.flink_job(
                self.source, self.schema, app, row, self.options, self.once, env=env
            )
        if compile_with is None:
            return False
        fields, label = compile_with
        shared = self._shared_run(app, text, fields.get("flink_version"), inputs)
        if shared.wait:  # held until the tracker writes Flink's start time
            snap.run_job_id = shared_runs.held_mark(how, log_id)
            self.verbose(f"{app.key} {app.job_name}: {how} run waits for the job's start time (shared run id)")
            return False
        derived = history_ledger.run_id_for(key, began) if key is not None and began is not None else None
        if shared.run is not None:  # the run openlineage-flink's listener reports too
            fields.update(job_namespace=shared.run.job_namespace, job_name=shared.run.job_name)
            derived = shared.run.run_id or derived

        def mark(conn, run_id: str) -> None:  # a later history replay leaves this run out
            if key is not None and began is not None:
                history_ledger.mark_in(conn, key, run_id, app.key, began, "watch")

        # The listener's job when coexisting (in fields), else the app's job kept apart by platform.
        job_name = fields.pop("job_name", None) or job_names.platform_job_name(
            "streampark", app.job_name, self.settings
        )
        run_id = runs.record_pending_submission(
            self.store,
            app.key,
            job_name,
            None,
            self.settings,
            run_id=derived,
            also=mark,
            namespace=fields.get("job_namespace"),
        )
        if run_id is None:
            return False
        try:
            compile_queue.start(
                self.store,
                compile_queue.new_compile_job(app_id=app.key, run_id=run_id, job_name=job_name, sql=text, **fields),
            )
        except compile_queue.QueueFailed as problem:  # never left compiling for ever: dropped, said, as submit does
            runs.abandon_lineage(self.store, app.key, run_id)
            self.say(
                f"WARN {app.key} {app.job_name}: run dropped: its compile could not be queued ({problem}); "
                "make that folder writable (disk space, permissions): the app's next start is reported"
            )
            run_id = None
        snap.run_job_id = {"job": f"job:{app.job_id}", "logged": f"logged:{log_id}"}.get(how, f"{how}:")
        # Saved at once, not with the poll: a watcher killed before the poll ends does not start
        # this run again from the same START row; with its compile record, in one transaction.
        ledger.save_started(self.store, self.key, app.key, snap, run_id, app.job_name, self.clock())
        if run_id is None:
            return False
        self.say(f"{app.key} {app.job_name}: {how} run, {label}: compiling")
        return True


@dataclass
class _Inputs:
    """What the runs a poll starts are compiled from, read for all of them at once: one query per
    kind, where each start read its own rows (a first start adopting hundreds of apps)."""

    starts: dict[str, reads.LogRow]  # each app's newest successful START row (adoption)
    sqls: dict[str, dict]  # effective SQL rows, by app key
    variables: dict[int | None, dict[str, str]]  # by team id
    envs: dict[int | None, tuple[str | None, str | None]]  # t_flink_env (version, home) by id; None: default
    recorded: dict[str, str]  # the history ledger's run ids of the runs these START rows began
    flink_starts: dict[str, dict]  # t_flink_app start time, options, dynamic properties, by app key
    config: Config | None = None  # the settings, read at the poll's first Flink start


def _may_start(app: App, prev: Snap | None, first: bool, logged: bool) -> bool:
    """Whether :meth:`Watcher._app` may start a run of ``app`` in this poll (a superset: its rows
    are read with the others')."""
    if first:
        return state_name(app.engine, app.state) in ALIVE[app.engine]
    return logged or bool(app.job_id and (prev is None or app.job_id != prev.job_id))


def _moved(app: App, prev: Snap, logged: bool) -> bool:
    """Whether :meth:`Watcher._follow` has anything to do for an app no longer selected."""
    restarted = bool(app.job_id and prev.job_id and app.job_id != prev.job_id)
    return logged or restarted or prev.state != app.state or state_name(app.engine, app.state) == "LOST"


def _started_by_row(snap: Snap) -> int:
    """The operation-log row that started the app's current run (0: none)."""
    how, _, value = (snap.run_job_id or "").partition(":")
    return int(value) if how == "logged" and value.isdigit() else 0
