"""A platform simulation: ``planlineage watch`` over a StreamPark estate of N Flink SQL apps.

    nice python bench/platform_sim.py [--apps 10000] [--running 0.3] [--changes 1000] [--minutes 10]

A private throwaway PostgreSQL (tests/streampark/servers.py, as the watcher tests start it) holds
StreamPark's schema (tests/streampark/schemas.py, with upstream's indexes) and ``--apps`` Flink SQL
apps made from the scripts of bench/corpus.py and examples/ with every table renamed per app (10%
STATEMENT SETs, 5% with a UDF or a catalog compiled through stand-ins).  ``--running`` of them run
when the watcher first starts; the others were stopped, failed, finished or never started.  Then
``--changes`` state changes (starts, cancels, failures, ends) are written over ``--minutes`` by the
console stand-in (tests/streampark/console.py), statement by statement as StreamPark's console
writes them.  Events go to the Gravitino-compatible test server (tests/gravitino_server.py), which
timestamps each one.  Compiles use the real planner: Flink 1.20 provisioned in
``$PLANLINEAGE_FLINK_CACHE``.

The watcher runs as ``planlineage watch`` in its own process (this script with ``--watcher``, which
times each poll); the compile service it starts is sampled for memory with its JVM.  Printed:
adoption time (every running app's START and RUNNING delivered), poll p50/p95, delivery lag
p50/p95 (console write -> event accepted), peak RSS of the watcher and of the compile service,
events delivered, duplicates, lost.

``--platform dinky`` simulates a Dinky estate instead (``--apps`` FlinkSql tasks on a Flink 1.20
cluster; its console stand-in tests/dinky/dinky_console.py writes each submission's history and job
instance rows as Dinky does): the same scripts, changes and figures, the watcher on ``--dinky-db``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
for folder in (ROOT / "tests", ROOT / "tests" / "streampark", ROOT / "tests" / "dinky"):
    sys.path.insert(0, str(folder))

RUNNING, FAILED, CANCELED, FINISHED = 5, 7, 9, 10
TABLE = re.compile(r"CREATE\s+(?:TEMPORARY\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?`?(\w+)`?", re.IGNORECASE)
END_EVENTS = {CANCELED: "ABORT", FAILED: "FAIL", FINISHED: "COMPLETE"}


# -- the estate -------------------------------------------------------------------------------


def _corpus():
    """bench/corpus.py (this script's folder is on the import path when it runs)."""
    import corpus

    return corpus


def _renamed(script: str, suffix: str) -> str:
    """Every table the script creates renamed ``<name>_<suffix>`` (topics and paths with it)."""
    names = sorted(set(TABLE.findall(script)), key=len, reverse=True)
    for name in names:
        script = re.sub(rf"\b{re.escape(name)}\b", f"{name}_{suffix}", script)
    return script


def _udf(script: str, index: int) -> str:
    """A filter job calling a function whose class is on no jar (compiled through a stand-in)."""
    function = f"mask_{index}"
    head = f"CREATE TEMPORARY FUNCTION {function} AS 'com.acme.udf.Mask{index % 7}';\n"
    return head + script.replace("UPPER(TRIM(label))", f"{function}(label)", 1)


def _catalog(script: str, index: int) -> str:
    """A filter job whose sink is an undeclared table of a catalog without its jar (a stand-in)."""
    head = f"CREATE CATALOG lake_{index} WITH ('type' = 'paimon', 'warehouse' = 's3://lake/w{index % 5}');\n"
    sink = re.search(r"INSERT INTO (\w+)", script)
    assert sink is not None
    return head + script.replace(f"INSERT INTO {sink.group(1)}", f"INSERT INTO lake_{index}.ods.{sink.group(1)}", 1)


def scripts(count: int, seed: int = 29) -> list[tuple[str, str]]:
    """``(job name, script)`` of ``count`` apps: 10% statement sets, 5% UDF/catalog stand-ins,
    the rest the corpus's other shapes and the repository's examples, tables renamed per app."""
    corpus = _corpus()
    rng = random.Random(seed)
    examples = [(p.stem, p.read_text(encoding="utf-8")) for p in sorted((ROOT / "examples").glob("*.sql"))]
    others = [s for s in corpus.SHAPES if s is not corpus.statement_set and s is not corpus.filter_project]
    found = []
    for index in range(count):
        suffix = f"a{index}"
        if index % 10 == 0:
            shape, script = "statement_set", corpus.statement_set(rng)[0]
        elif index % 20 == 1:
            script = corpus.filter_project(rng)[0]
            shape, script = ("udf", _udf(script, index)) if index % 40 == 1 else ("catalog", _catalog(script, index))
        elif index % 10 == 5 and examples:
            shape, script = examples[(index // 10) % len(examples)]
        else:
            make = others[index % len(others)]
            shape, script = make.__name__, make(rng)[0]
        found.append((f"{shape}_{suffix}", _renamed(script, suffix)))
    return found


def fill(console, apps: list[tuple[str, str]], running: int, rng: random.Random) -> dict[str, list]:
    """The estate as the console left it before the watcher's first start, in bulk: ``running``
    apps RUNNING, the others stopped, failed, finished (their SQL effective) or never started."""
    import uuid

    from console import FLINK_SQL, START

    from planlineage.streampark.sql import encode

    env = console.env("1.20.0")
    for statement in (  # upstream's indexes (pgsql-schema.sql)
        'create index if not exists "un_effective_inx" on "t_flink_effective" (app_id, target_type)',
        'create index if not exists "inx_flink_sql_app" on "t_flink_sql" (app_id)',
    ):
        console.execute(statement)
    now = datetime.now()
    states: dict[str, list] = {"running": [], "stopped": [], "new": []}
    app_rows, sql_rows, effective_rows, log_rows = [], [], [], []
    chosen = set(rng.sample(range(len(apps)), running))
    for index, (name, script) in enumerate(apps):
        app = 200000 + index
        sql_id = 300000 + index
        if index in chosen:
            state, kind = RUNNING, "running"
        else:
            state, kind = rng.choice([(CANCELED, "stopped"), (FAILED, "stopped"), (FINISHED, "stopped"), (0, "new")])
        started = kind != "new"
        job_id = uuid.uuid4().hex if started else None
        app_rows.append((app, 100000, FLINK_SQL, 2, 1, name, env, state, 0, 1, True, int(started), job_id, now, now))
        sql_rows.append((sql_id, app, encode(script), 1, 0 if started else 1, now))
        if started:
            effective_rows.append((app, 2, sql_id, now))
            log_rows.append((app, 1, "application_1700000000000_0001", "http://jm:8081", True, now, START, 100000))
        states[kind].append((app, name))
    with console.conn.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO t_flink_app (id, team_id, job_type, {console.deploy_column}, app_type, job_name, "
            "version_id, state, option_state, release, build, tracking, job_id, create_time, modify_time) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            app_rows,
        )
        cursor.executemany(
            'INSERT INTO t_flink_sql (id, app_id, "sql", version, candidate, create_time) VALUES (%s, %s, %s, %s, %s, %s)',
            sql_rows,
        )
        cursor.executemany(
            "INSERT INTO t_flink_effective (app_id, target_type, target_id, create_time) VALUES (%s, %s, %s, %s)",
            effective_rows,
        )
        cursor.executemany(
            f"INSERT INTO {console.log_table} (app_id, job_type, cluster_id, tracking_url, success, create_time, "
            "option_name, user_id) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            log_rows,
        )
    console.execute("ANALYZE")
    return states


DINKY_STATUS = {RUNNING: "RUNNING", FAILED: "FAILED", CANCELED: "CANCELED", FINISHED: "FINISHED"}


def fill_dinky(
    console, apps: list[tuple[str, str]], running: int, rng: random.Random
) -> tuple[dict[str, list], DinkyDriver]:
    """:func:`fill` for Dinky: ``apps`` FlinkSql tasks on one registered Flink 1.20 cluster, in
    bulk; the started ones with the history row and job instance a submission writes (its
    ``jid``), ``running`` of them RUNNING, the others CANCELED, FAILED or FINISHED. With the states,
    the driver :func:`changes` then uses in the console's place."""
    import uuid

    cluster = console.cluster("1.20.0")
    now = datetime.now()
    chosen = set(rng.sample(range(len(apps)), running))
    plan = []
    for index in range(len(apps)):
        if index in chosen:
            plan.append((RUNNING, "running"))
        else:
            plan.append(rng.choice([(CANCELED, "stopped"), (FAILED, "stopped"), (FINISHED, "stopped"), (0, "new")]))
    with console.conn.cursor() as cursor:
        cursor.executemany(
            'INSERT INTO dinky_task (name, tenant_id, dialect, "type", fragment, statement_set, cluster_id, step, '
            "statement) VALUES (%s, 1, 'FlinkSql', 'standalone', false, true, %s, 1, %s)",
            [(name, cluster, script) for name, script in apps],
        )
    ids = {name: task for task, name in console.execute("SELECT id, name FROM dinky_task")}
    started = [(ids[name], name, script, plan[i][0]) for i, (name, script) in enumerate(apps) if plan[i][1] != "new"]
    with console.conn.cursor() as cursor:
        cursor.executemany(
            'INSERT INTO dinky_history (tenant_id, cluster_id, job_id, job_name, status, "type", statement, '
            "start_time, end_time, task_id) VALUES (1, %s, %s, %s, 2, 'standalone', %s, %s, %s, %s)",
            [(cluster, uuid.uuid4().hex, name, script, now, now, task) for task, name, script, _ in started],
        )
    history = {task: (row, jid) for row, task, jid in console.execute("SELECT id, task_id, job_id FROM dinky_history")}
    with console.conn.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO dinky_job_instance (name, tenant_id, task_id, step, cluster_id, jid, status, history_id, "
            "create_time, update_time) VALUES (%s, 1, %s, 1, %s, %s, %s, %s, %s, %s)",
            [(name, task, cluster, history[task][1], DINKY_STATUS[state], history[task][0], now, now)
             for task, name, _, state in started],
        )  # fmt: skip
    console.execute(
        "UPDATE dinky_task SET job_instance_id = i.id FROM dinky_job_instance i WHERE i.task_id = dinky_task.id"
    )
    driver = DinkyDriver(
        console, {task: inst for inst, task in console.execute("SELECT id, task_id FROM dinky_job_instance")}
    )
    states: dict[str, list] = {"running": [], "stopped": [], "new": []}
    for index, (name, _) in enumerate(apps):
        states[plan[index][1]].append((ids[name], name))
    console.execute("ANALYZE")
    return states, driver


class DinkyDriver:
    """What :func:`changes` asks of a console (``start``, ``set_state``, ``cancel`` with StreamPark's
    state codes), done as Dinky's console does it: a new submission per start, then the job
    refresh's statuses on that job instance."""

    def __init__(self, console, instances: dict[int, int]):
        self.console, self.instances = console, instances

    def start(self, task: int) -> None:
        self.instances[task] = self.console.submit(task)

    def set_state(self, task: int, state: int) -> None:
        self.console.set_status(self.instances[task], DINKY_STATUS[state])

    def cancel(self, task: int) -> None:
        self.set_state(task, CANCELED)


# -- what the server saw -----------------------------------------------------------------------


def timed_server():
    from gravitino_server import GravitinoTestServer

    class Timed(GravitinoTestServer):
        """Records when each accepted event arrived (monotonic clock)."""

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.accepted: list[tuple[float, str, str, str]] = []  # (when, job, eventType, runId)

        def _handle(self, h, body):
            answer = super()._handle(h, body)
            if answer[0] == 201:
                event = json.loads(body)
                if "parent" not in ((event.get("run") or {}).get("facets") or {}):
                    with self._lock:
                        self.accepted.append(
                            (time.monotonic(), event["job"]["name"], event["eventType"], event["run"]["runId"])
                        )
            return answer

    return Timed(keep_alive=True)


# -- memory -------------------------------------------------------------------------------------


def _status(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


class Sampler(threading.Thread):
    """Peak resident memory of the compile service with its JVM (its session), every 0.5 s."""

    def __init__(self, home: Path):
        super().__init__(daemon=True)
        self.home = str(home).encode()
        self.peak = 0
        self.stop = threading.Event()

    def service_sessions(self) -> set[int]:
        found = set()
        for proc in Path("/proc").iterdir():
            if proc.name.isdigit():
                try:
                    cmdline = (proc / "cmdline").read_bytes()
                except OSError:
                    continue
                if b"_compile-service" in cmdline and self.home in cmdline:
                    found.add(int(proc.name))
        return found

    def tree_rss(self, roots: set[int]) -> int:
        """Resident memory of ``roots`` and every process under them (the planner JVMs lead
        process groups of their own, under the service)."""
        parents: dict[int, int] = {}
        for proc in Path("/proc").iterdir():
            if proc.name.isdigit():
                try:
                    parents[int(proc.name)] = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
                except (OSError, ValueError, IndexError):
                    continue
        tree, grew = set(roots), True
        while grew:
            below = {pid for pid, parent in parents.items() if parent in tree and pid not in tree}
            tree |= below
            grew = bool(below)
        return sum(_status(pid, "VmRSS") for pid in tree)

    def run(self) -> None:
        while not self.stop.wait(0.5):
            sessions = self.service_sessions()
            if sessions:
                self.peak = max(self.peak, self.tree_rss(sessions))

    def kill_services(self) -> None:
        for pid in self.service_sessions():
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass


# -- the run ------------------------------------------------------------------------------------


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def changes(
    console, states, count: int, seconds: float, interval: float, rng: random.Random, say
) -> list[tuple[float, str, str]]:
    """``count`` state changes spread over ``seconds``; each expected event as ``(written, job, type)``."""
    expected: list[tuple[float, str, str]] = []
    # An app is changed again only after its last change had time to be seen by a poll (the
    # watcher sees states, not transitions: a start then a cancel between two polls is START, ABORT).
    rest = max(3 * interval, 5.0)
    running = [(app, name, 0.0) for app, name in states["running"]]
    stopped = [(app, name, 0.0) for app, name in states["stopped"] + states["new"]]
    begin = time.monotonic()
    for step in range(count):
        wait = begin + seconds * step / max(1, count) - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        now = time.monotonic()
        ready_running = [i for i, item in enumerate(running) if item[2] <= now]
        ready_stopped = [i for i, item in enumerate(stopped) if item[2] <= now]
        if ready_running and (not ready_stopped or rng.random() < 0.5):
            app, name, _ = running.pop(rng.choice(ready_running))
            end = rng.choices([CANCELED, FAILED, FINISHED], weights=[6, 3, 1])[0]
            if end == CANCELED:
                console.cancel(app)
            else:
                console.set_state(app, end)
            expected.append((time.monotonic(), name, END_EVENTS[end]))
            stopped.append((app, name, time.monotonic() + rest))
        elif ready_stopped:
            app, name, _ = stopped.pop(rng.choice(ready_stopped))
            console.start(app)
            expected.append((time.monotonic(), name, "START"))
            console.set_state(app, RUNNING)
            expected.append((time.monotonic(), name, "RUNNING"))
            running.append((app, name, time.monotonic() + rest))
        if step and step % max(1, count // 10) == 0:
            say(f"  {step}/{count} changes written")
    return expected


def match(expected: list[tuple[float, str, str]], accepted) -> tuple[list[float], list[tuple[str, str]]]:
    """Lags of the expected events (the first accepted event of that job and type after its
    write) and the ones never accepted."""
    arrivals: dict[tuple[str, str], list[float]] = defaultdict(list)
    for when, job, kind, _run in accepted:
        arrivals[(job, kind)].append(when)
    lags, lost = [], []
    for written, job, kind in sorted(expected):
        times = arrivals.get((job, kind), [])
        later = [t for t in times if t >= written]
        if not later:
            lost.append((job, kind))
            continue
        times.remove(later[0])
        lags.append(later[0] - written)
    return lags, lost


def simulate(args) -> int:
    from console import Console
    from schemas import ddl  # noqa: F401 - the schema the console loads
    from servers import WATCH_PASSWORD, PostgresServer

    say = lambda line: print(line, flush=True)  # noqa: E731
    rng = random.Random(args.seed)
    home = Path(tempfile.mkdtemp(prefix="planlineage-platform-"))
    server = PostgresServer()
    server.start()
    gravitino = timed_server().start()
    watcher = sampler = None
    try:
        database = server.create_database()
        if args.platform == "dinky":
            from dinky_console import Console as DinkyConsole

            console = DinkyConsole(server, database, "1.3")
        else:
            console = Console(server, database, "dev")
        console.load_schema()
        server.grant_select(database)
        started = time.monotonic()
        apps = scripts(args.apps, args.seed)
        if args.platform == "dinky":
            states, console = fill_dinky(console, apps, int(args.apps * args.running), rng)
        else:
            states = fill(console, apps, int(args.apps * args.running), rng)
        say(
            f"estate: {args.apps} apps ({len(states['running'])} running, {len(states['stopped'])} stopped, "
            f"{len(states['new'])} never started) written in {time.monotonic() - started:.1f} s"
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("PLANLINEAGE_")}
        env.update(
            PYTHONPATH=os.environ.get("PYTHONPATH", str(ROOT)),
            PLANLINEAGE_HOME=str(home / "home"),
            PLANLINEAGE_PLANNER_DIR=tempfile.mkdtemp(prefix="pl-platform-"),
            PLANLINEAGE_LINEAGE_ADDRESS=gravitino.address,
            PLANLINEAGE_STREAMPARK_PASSWORD=WATCH_PASSWORD,
            PLANLINEAGE_DINKY_PASSWORD=WATCH_PASSWORD,
        )
        if "PLANLINEAGE_FLINK_CACHE" in os.environ:  # else the product's own cache under the user's home
            env["PLANLINEAGE_FLINK_CACHE"] = os.environ["PLANLINEAGE_FLINK_CACHE"]
        if args.profile:
            env["PLATFORM_PROFILE"] = str(home / "polls.prof")
        polls = home / "polls.jsonl"
        log = open(home / "watch.log", "w")  # noqa: SIM115 - written until the watcher stops
        sampler = Sampler(home / "home")
        sampler.start()
        begin = time.monotonic()
        watcher = subprocess.Popen(
            [sys.executable, "-P", __file__, "--watcher", str(polls), "--",
             f"--{args.platform}-db", server.url(database), "--interval", str(args.interval)],
            env=env, stdout=log, stderr=subprocess.STDOUT, cwd=home,
        )  # fmt: skip
        wanted = {(name, kind) for _, name in states["running"] for kind in ("START", "RUNNING")}
        adoption = None
        deadline = begin + args.adoption_timeout
        while time.monotonic() < deadline and watcher.poll() is None:
            seen = {(job, kind) for _, job, kind, _ in list(gravitino.accepted)}
            if wanted <= seen and (wanted or polls.exists()):  # nothing to adopt: done at the first poll
                times = [when for when, job, kind, _ in list(gravitino.accepted) if (job, kind) in wanted]
                adoption = max(times, default=time.monotonic()) - begin
                break
            time.sleep(0.5)
        adopted = len({job for _, job, kind, _ in list(gravitino.accepted) if kind == "RUNNING"})
        say(
            f"adoption: {adopted}/{len(states['running'])} running apps START+RUNNING in "
            + (f"{adoption:.1f} s" if adoption is not None else f"more than {args.adoption_timeout:.0f} s")
        )
        marker = len(_read_polls(polls))
        expected = changes(console, states, args.changes, args.minutes * 60, args.interval, rng, say)
        settle_end = time.monotonic() + args.settle
        while time.monotonic() < settle_end:
            lags, lost = match(expected, list(gravitino.accepted))
            if not lost:
                break
            time.sleep(1)
        watcher_rss = _status(watcher.pid, "VmHWM")
        watcher.send_signal(signal.SIGTERM)
        watcher.wait(60)
        log.close()
        sampler.stop.set()
        sampler.join(5)
        times = _read_polls(polls)
        steady = times[marker:]
        lags, lost = match(expected, list(gravitino.accepted))
        keys = gravitino.keys()
        duplicates = sum(n - 1 for n in keys.values() if n > 1)
        adoption_lost = sorted(wanted - {(job, kind) for _, job, kind, _ in list(gravitino.accepted)})
        load = os.getloadavg()
        say("")
        platform = {"streampark": "StreamPark", "dinky": "Dinky"}[args.platform]
        say(
            f"planlineage watch over {platform} on PostgreSQL, {os.cpu_count()} cores, load {load[0]:.1f} {load[1]:.1f}"
        )
        say(
            f"{'tasks' if args.platform == 'dinky' else 'apps'} {args.apps}, running at start {len(states['running'])}, changes {args.changes} over "
            f"{args.minutes:g} min, poll interval {args.interval:g} s"
        )
        say(
            "adoption (START+RUNNING of every running app delivered): "
            + (f"{adoption:.1f} s" if adoption is not None else f"not done in {args.adoption_timeout:.0f} s")
        )
        say(
            f"poll p50 / p95: {percentile(times, 0.5):.3f} / {percentile(times, 0.95):.3f} s over {len(times)} polls; "
            f"during the changes {percentile(steady, 0.5):.3f} / {percentile(steady, 0.95):.3f} s"
        )
        say(f"delivery lag (console write -> event accepted) p50 / p95: {percentile(lags, 0.5):.2f} / "
            f"{percentile(lags, 0.95):.2f} s over {len(lags)} events")  # fmt: skip
        say(
            f"peak RSS: watcher {watcher_rss / 2**20:.0f} MB, compile service with its JVM {sampler.peak / 2**20:.0f} MB"
        )
        say(
            f"events delivered {sum(keys.values())} (parent jobs {len(gravitino.accepted)}), duplicates {duplicates}, "
            f"lost {len(lost) + len(adoption_lost)}"
        )
        if lost or adoption_lost:
            say(f"  not delivered, e.g.: {(lost + adoption_lost)[:5]}")
        dropped = Counter(
            line.split(": ")[-1] for line in (home / "watch.log").read_text().splitlines() if "not reported" in line
        )
        if dropped:
            say(f"  apps not reported: {dict(dropped)}")
        return 0
    finally:
        if watcher is not None and watcher.poll() is None:
            watcher.kill()
        if sampler is not None:
            sampler.stop.set()
            sampler.kill_services()
        gravitino.stop()
        server.close()
        if not args.keep:
            import shutil

            shutil.rmtree(home, ignore_errors=True)
        else:
            say(f"kept: {home}")


def _read_polls(path: Path) -> list[float]:
    if not path.exists():
        return []
    return [json.loads(line)["seconds"] for line in path.read_text().splitlines() if line.strip()]


def watcher_process(polls: str, argv: list[str]) -> int:
    """``planlineage watch`` with each poll timed into ``polls`` (one JSON line per poll)."""
    from planlineage.cli.main import main
    from planlineage.dinky.watcher import Watcher as DinkyWatcher
    from planlineage.streampark.watcher import Watcher

    platform_watcher = DinkyWatcher if "--dinky-db" in argv else Watcher
    real = platform_watcher.poll
    profile = None
    if os.environ.get("PLATFORM_PROFILE"):  # --profile: every poll under cProfile, written at exit
        import atexit
        import cProfile

        profile = cProfile.Profile()
        atexit.register(lambda: profile.dump_stats(os.environ["PLATFORM_PROFILE"]))

    def timed(self):
        started = time.monotonic()
        try:
            if profile is not None:
                return profile.runcall(real, self)
            return real(self)
        finally:
            with open(polls, "a") as out:
                out.write(json.dumps({"seconds": time.monotonic() - started}) + "\n")

    platform_watcher.poll = timed  # type: ignore[method-assign]
    return main(["watch", *argv])


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--watcher":
        rest = sys.argv[3:]
        return watcher_process(sys.argv[2], rest[1:] if rest[:1] == ["--"] else rest)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--platform", choices=("streampark", "dinky"), default="streampark")
    parser.add_argument("--apps", type=int, default=10_000, help="apps (Dinky: tasks); issue 29 asks 2,000 for Dinky")
    parser.add_argument("--running", type=float, default=0.3, help="share of the apps running at the first start")
    parser.add_argument("--changes", type=int, default=1_000)
    parser.add_argument("--minutes", type=float, default=10.0, help="the changes are spread over this time")
    parser.add_argument("--interval", type=float, default=5.0, help="the watcher's poll interval (seconds)")
    parser.add_argument("--adoption-timeout", type=float, default=900.0)
    parser.add_argument("--settle", type=float, default=120.0, help="seconds to wait for the last events")
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--keep", action="store_true", help="keep the home, the watcher's log and poll times")
    parser.add_argument("--profile", action="store_true", help="profile the polls (polls.prof in the kept home)")
    return simulate(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
