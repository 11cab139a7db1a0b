"""The poll loop of ``planlineage watch --dinky-db``: Dinky's rows in, the lifecycle's calls out.

A Dinky task is an application (app id ``dinky:<task id>``, job name the task's name); each
submission of it is a new ``dinky_job_instance`` row, which is one run whose id derives from the
instance id and its creation time (:func:`planlineage.history.ledger.run_id_for` of
``dinky:instance=<id>``), recorded in the history ledger: a history replay and this watcher never
send one run twice.  Each poll:

1. (Re)connect; on every new connection detect the schema again.
2. Read the instances after the durable cursor (the newest instance id handled).  A task's newest
   new instance starts a run: its previous run, if open, is closed (ABORT); the SQL is the
   instance's ``dinky_history.statement`` (Dinky prepends the environment to it), Dinky's own
   syntax resolved (:mod:`.sql`), compiled with the Flink version of its cluster.
3. The instance of each open run is read again and its status change reported
   (:mod:`.states`); UNKNOWN and RECONNECTING only once they lasted ``lost_grace``.  A
   soft-deleted (``is_delete``) or vanished row ends nothing.
4. Cursor and snapshot saved in one transaction (:mod:`planlineage.watch.ledger`, under the
   source key ``dinky:<address>``), then what is pending delivered.

First poll on an install (no cursor): the cursor starts at the newest instance (history is left
to ``--history``) and each task's newest instance that is not done is adopted.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, tzinfo

from planlineage.dinky import PLATFORM, reads, states
from planlineage.dinky import sql as dinky_sql
from planlineage.dinky.reads import Instance, Task
from planlineage.dinky.schema import Schema, detect
from planlineage.history import job_names
from planlineage.history import ledger as history_ledger
from planlineage.lifecycle import compile_queue, runner, runs
from planlineage.watch import DEFAULT_LOST_GRACE, ledger
from planlineage.watch.connection import Source
from planlineage.watch.ledger import Snap
from planlineage.watch.loop import PlatformWatcher
from planlineage.watch.records import JobSeen
from planlineage.watch.transitions import replayed
from planlineage.watch.url import Target


@dataclass
class Options:
    lost_grace: float = DEFAULT_LOST_GRACE
    flink_version: str | None = None  # Dinky's own Flink, for tasks whose cluster records none
    verbose: bool = False
    zone: tzinfo = UTC  # Dinky's time zone (its times are wall times without one)


@dataclass
class Watcher(PlatformWatcher[Target, Source]):
    options: Options = field(default_factory=Options)  # in the base's place: the 4th argument

    platform = PLATFORM

    def __post_init__(self) -> None:
        self.source = Source(self.target)
        self.schema: Schema | None = None
        self.key = "dinky:" + self.target.key()
        self._ledger = ledger.Kept(self.store, self.key)
        self.lead_name = f"dinky-watch:{self.target.key()}"

    # -- which tasks ------------------------------------------------------------------------

    @staticmethod
    def excluded(task: Task | None) -> str | None:
        """Why a task's runs are not reported, or None when they are."""
        if task is None:
            return "its task is gone from dinky_task"
        if task.deleted:
            return "the task is deleted (is_delete)"
        if task.dialect.strip().lower() != states.FLINK_SQL:
            return f"dialect {task.dialect or '(none)'} is not FlinkSql"
        return None

    # -- one poll ---------------------------------------------------------------------------

    def _schema(self) -> Schema:
        if self.source.connect() or self.schema is None:
            schema = detect(self.source)
            if schema != self.schema:
                self.say(f"{self.target.masked()}: {schema.describe()}")
                if schema.missing():
                    self.say(
                        f"WARN the account cannot read {', '.join(schema.missing())} (watch --check lists the grants)"
                    )
            self.schema = schema
        return self.schema

    def poll(self) -> None:
        """One poll; raises :class:`SourceError` when the database cannot be read."""
        schema = self._schema()
        cursor, snaps = self._ledger.load()
        before = {key: replace(snap) for key, snap in snaps.items()}  # the poll changes snaps in place
        tasks = reads.tasks(self.source, schema)
        now = self.clock()
        if cursor is None:
            cursor = reads.max_instance_id(self.source)
            for inst in reads.newest_instances(self.source, schema):
                task = tasks.get(inst.task_id or -1)
                if self.excluded(task) is None and not inst.deleted and inst.status not in states.DONE:
                    assert task is not None
                    snap = snaps.setdefault(task.key, Snap(None, ""))
                    if self._start(task, inst, snap, "adopted"):
                        self._state(task, inst, snap, now, force=True)
            self._ledger.save(cursor, snaps, before)
            return
        new = reads.instances_after(self.source, schema, cursor)
        newest: dict[int, Instance] = {}
        for inst in new:
            if inst.task_id is not None and not inst.deleted:
                newest[inst.task_id] = inst  # several between two polls: the earlier ended unseen
        skipped = 0
        for task_id, inst in newest.items():
            task = tasks.get(task_id)
            reason = self.excluded(task)
            key = task.key if task is not None else f"dinky:{task_id}"
            if reason is not None:
                skipped += 1
                self.verbose(f"{key} {task.name if task else ''}: not reported: {reason}".replace("  ", " "))
                if task is not None and key in snaps:
                    self.close_open_run(task.key, task.name)
                continue
            assert task is not None
            snap = snaps.setdefault(key, Snap(None, ""))
            if snap.run_job_id != f"instance:{inst.id}":  # not started by this row before a crash
                self._start(task, inst, snap, "submitted")
            self._state(task, inst, snap, now, force=True)
        tracked: dict[str, int] = {}
        for key, snap in snaps.items():
            instance_id = _instance_of(snap)
            if instance_id is not None and int(key.split(":")[1]) not in newest:
                tracked[key] = instance_id
        current = reads.instances(self.source, schema, sorted(set(tracked.values())))
        for key, instance_id in tracked.items():
            found = current.get(instance_id)
            task = tasks.get(int(key.split(":")[1]))
            if found is None or found.deleted or task is None:
                continue  # a deleted or vanished row ends nothing
            self._state(task, found, snaps[key], now)
        self._ledger.save(max([i.id for i in new], default=cursor), snaps, before)
        if skipped:
            self.once(f"skipped:{skipped}", f"{skipped} Dinky submission(s) not reported (--verbose says why)")

    def _state(self, task: Task, inst: Instance, snap: Snap, now: float, force: bool = False) -> None:
        """Report the instance's status if it changed (``force``: right after a start); UNKNOWN
        and RECONNECTING only once they lasted the grace period, then as ABORT."""
        before = states.name(snap.state)
        snap.state, snap.job_id = states.code(inst.status), inst.jid
        if inst.status in states.ADRIFT:
            snap.lost_since = snap.lost_since if snap.lost_since is not None else now
            if not snap.lost_sent and now - snap.lost_since >= self.options.lost_grace:
                snap.lost_sent = True
                self._report(task, inst, states.ADRIFT_REPORT, f"{inst.status} for {now - snap.lost_since:.0f}s")
            elif not snap.lost_sent:
                grace = self.options.lost_grace
                self.verbose(f"{task.key} {task.name}: {inst.status}, reported only if it lasts {grace:g}s")
            return
        snap.lost_since, snap.lost_sent = None, False
        if force or before != inst.status:
            shown = inst.status if before in (None, inst.status) else f"{before} -> {inst.status}"
            self._report(task, inst, inst.status, shown)

    def _report(self, task: Task, inst: Instance, told: str, shown: str) -> None:
        if not self._is_current(task, inst):
            return  # its run was never started (not reported) or was replaced
        error = inst.error if told == "FAILED" else None
        started = self.started_at(inst.created) if inst.created is not None else None
        self.report(JobSeen(task.key, task.name, told, inst.jid or "", started, error), shown)

    def _is_current(self, task: Task, inst: Instance) -> bool:
        run = runs.current_run(self.store, task.key)
        return run is not None and run.run_id == self.run_id(inst)

    def started_at(self, at: datetime | None) -> datetime:
        """A Dinky time (naive, its wall time) as an aware time (now when it has none)."""
        if at is None:
            return datetime.now(UTC)
        return at.replace(tzinfo=self.options.zone) if at.tzinfo is None else at

    def run_id(self, inst: Instance) -> str:
        return history_ledger.run_id_for(inst.run_key, self.started_at(inst.created))

    def _start(self, task: Task, inst: Instance, snap: Snap, how: str) -> bool:
        """A run for ``inst`` (the task's previous run closed first); False when not started."""
        assert self.schema is not None
        snap.run_job_id = f"instance:{inst.id}"
        snap.state, snap.lost_since, snap.lost_sent = None, None, False
        run_id = self.run_id(inst)
        known = replayed(self.store, inst.run_key, task.key)
        if known is not None or self._is_current(task, inst):  # a history replay or an earlier poll sent it
            ledger.save_app(self.store, self.key, task.key, snap)
            if known:
                self.say(f"{task.key} {task.name}: {how} run continues its replayed run")
            return known is not False
        self.close_open_run(task.key, task.name)
        ledger.save_app(self.store, self.key, task.key, snap)  # never started twice from this row
        prepared = self._script(task, inst)
        if prepared is None:
            return False
        compile_with = self._flink(task, inst)
        if compile_with is None:
            return False
        version, label = compile_with
        # A job that also runs openlineage-flink's listener: the listener's job, with Dinky's run
        # id (the one its state reports are matched by; Flink's start time is not read here).
        shared = runner.coexisting_run(self.settings, prepared.sql, version, task.name, inst.jid or None)
        if shared:
            namespace, job_name = shared.job_namespace, shared.job_name
        else:  # kept apart from a StreamPark app of the same name (history.job_names)
            namespace, job_name = None, job_names.platform_job_name("dinky", task.name, self.settings)
        recorded = runs.record_pending_submission(
            self.store, task.key, job_name, None, self.settings, run_id=run_id, namespace=namespace
        )
        if recorded is None:
            return False
        # A later history replay leaves this run out.
        history_ledger.mark(self.store, inst.run_key, run_id, task.key, self.started_at(inst.created), "watch")
        try:
            compile_queue.start(
                self.store,
                compile_queue.new_compile_job(
                    app_id=task.key, run_id=run_id, job_name=job_name, sql=prepared.sql,
                    flink_version=version, jars=prepared.jars, job_namespace=namespace,
                ),
            )  # fmt: skip
        except compile_queue.QueueFailed as problem:  # dropped and said, as submit does
            runs.abandon_lineage(self.store, task.key, run_id)
            self.say(
                f"WARN {task.key} {task.name}: run dropped: its compile could not be queued ({problem}); "
                "make that folder writable (disk space, permissions): the task's next submission is reported"
            )
            return False
        ledger.add_compile(self.store, self.key, run_id, task.key, task.name, self.clock())
        self.say(f"{task.key} {task.name}: {how} run (job instance {inst.id}), {label}: compiling")
        return True

    def _script(self, task: Task, inst: Instance) -> dinky_sql.Prepared | None:
        """The SQL the instance ran, Dinky's syntax resolved; None (said) when not reportable."""
        assert self.schema is not None
        text = reads.history_statement(self.source, self.schema, inst.history_id)
        if text is None:  # no history row (deleted, or not granted): the task's env + statement now
            self.verbose(
                f"{task.key} {task.name}: no dinky_history row {inst.history_id}: the task's statement is used"
            )
            env = reads.task_statement(self.source, task.env_id) if task.env_id else None
            text = "\n".join(t for t in (env, reads.task_statement(self.source, task.id)) if t)
        fragments = reads.fragments(self.source, self.schema) if task.fragment else None
        try:
            prepared = dinky_sql.prepare(text or "", fragments)
        except dinky_sql.Unsupported as problem:
            self.once(f"unsupported:{task.key}:{problem}", f"WARN {task.key} {task.name}: not reported: {problem}")
            return None
        for warning in prepared.warnings:
            self.once(f"jar:{task.key}:{warning}", f"WARN {task.key} {task.name}: {warning}")
        if not prepared.sql.strip():
            self.say(f"{task.key} {task.name}: not reported: its script has no Flink SQL statement")
            return None
        return prepared

    def _flink(self, task: Task, inst: Instance) -> tuple[str | None, str] | None:
        """The minor Flink version to compile with and the label saying where it came from; None
        (one WARN) when planlineage provides no such version."""
        from planlineage.errors import ProvisionError
        from planlineage.planner.provision import resolve_version, without_compiled_plan
        from planlineage.watch.versions import minor_version

        assert self.schema is not None
        version, where = None, ""
        for cluster in (inst.cluster_id, task.cluster_id):
            version = reads.cluster_version(self.source, self.schema, cluster)
            if version:
                where = f"cluster {cluster}"
                break
        if not version and self.options.flink_version:
            version, where = self.options.flink_version, "--dinky-flink-version"
        if not version:
            self.once(
                f"no-version:{task.key}",
                f"{task.key} {task.name}: no Flink version recorded for its cluster: compiled with planlineage's "
                "default (--dinky-flink-version V names the Flink Dinky was built for)",
            )
            return None, "Flink default"
        if without_compiled_plan(version):
            self.once(
                f"flink-version:{task.key}:{version}",
                f"WARN {task.key} {task.name}: Flink {version} ({where}) has no CompiledPlan (it arrived in Flink "
                '1.15): its lineage is the tables its SQL names, read from the text ("method": "static")',
            )
            return minor_version(version), f"Flink {version} (read from the SQL text)"
        try:
            resolve_version(minor_version(version) or version)
        except ProvisionError as problem:
            self.once(
                f"flink-version:{task.key}:{version}",
                f"WARN {task.key} {task.name}: not reported: Flink {version} ({where}) is not a version "
                f"planlineage provides ({problem})",
            )
            return None
        return minor_version(version), f"Flink {version}"


def _instance_of(snap: Snap) -> int | None:
    how, _, value = (snap.run_job_id or "").partition(":")
    return int(value) if how == "instance" and value.isdigit() else None
