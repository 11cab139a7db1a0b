"""Starts the compile server of one Flink version: a JVM that compiles Flink SQL jobs into
CompiledPlan JSON (io.planlineage.standin.Server, built at provisioning).

Run with the version venv's own python (its pyflink/lib holds the version's jars), it puts the
JVM in its own place: the caller then writes requests to the JVM's stdin and reads answers from
its stdout, one JSON object per line each, with nothing in between. A cold `extract` sends one
request, a test module or a warm planner many to the same JVM, a backfill many at once to a JVM
with `--threads N` (answers then come in the order jobs finish). Every job gets a fresh
TableEnvironment, so nothing it declares outlives it; the JVM exits when its stdin closes.

Request:  {"id": .., "statements": [{"sql": .., "line": .., "inserts": [{"target", "columns", "query"}]}],
           "jars": [..], "config": {..},
           "batch": bool, "forced_stand_ins": [..],
           "function_hints": {"name": {"kind": .., "type": .. | null, "fields": [..]}},
           "table_schemas": {"cat.db.t": {"column": "TYPE"}}}
Answer:   {"id": .., "ok": true, "tables": {"cat.db.t": {..}}, "kinds": [..],
           "stand_ins": [{"kind": "function" | "table", "name": .., ..}], "plan": {..} | null,
           "timings": {"compile_ms": .., "sink_sql_ms": .., "server_ms": ..}}
       or {"id": .., "ok": false, "error": {"statement": i | null, "message": .., "guessed_tables": bool},
           "stand_ins": [..], "timings": {..}}
A long-lived JVM that compiles one job at a time also says how many of the job's leading tables
its helper thread converted ("converted_alongside", see ParallelDeclarations.java) and whether
the job ran on an environment a previous job left ("reused_environment").
The first line is {"ready": true}. "compile_ms" is the bare compilePlan call of the job,
"sink_sql_ms" the statements that declare its sinks (parsed and validated: with compile_ms, what
compilePlanSql costs, the floor a warm planner can approach); "server_ms" the whole job in the JVM.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import os
import select
import shutil
import signal
import sys
import tempfile
import zipfile

#: The JVM's main class, and what its command line says it is (`ps`, and the lifecycle's check
#: that a recorded process group is still one of its planners).
MAIN_CLASS = "io.planlineage.standin.Server"
ROLE = "-Dplanlineage.role=compile_server"
#: The JVM's stdout carries answers only: its own logging and warnings (stdout by default) go to
#: stderr, the log.
QUIET_STDOUT = ["-Xlog:disable", "-Xlog:all=warning:stderr", "-XX:+DisplayVMOutputToStderr"]


#: Flink's planner ships inside this jar, extracted at every JVM start and loaded by a class
#: loader of its own, which a class-data archive cannot hold.
PLANNER_LOADER = "flink-table-planner-loader-"
PLANNER_JAR = "flink-table-planner.jar"


def classpath(lib: str, stand_in: str) -> list[str]:
    """The version's jars, the planner itself in place of its loader (when it can be had), and the
    stand-in connector.

    Flink supports either (its distribution's opt/ holds the planner for lib/); on the class path
    the planner's classes go into the class-data archive recorded at provisioning, which cut the
    CPU of a JVM's start and first compile by about a third (1.20, measured), and no JVM has to
    unpack 40 MB first. The planner is taken out of the loader once, next to the stand-in jar.
    """
    jars = sorted(glob.glob(os.path.join(lib, "*.jar")))
    loaders = [jar for jar in jars if os.path.basename(jar).startswith(PLANNER_LOADER)]
    planner = _planner_jar(loaders[0], os.path.join(os.path.dirname(stand_in), PLANNER_JAR)) if loaders else None
    if planner:
        jars = [planner if jar == loaders[0] else jar for jar in jars]
    return jars + [stand_in]


def _planner_jar(loader: str, target: str) -> str | None:
    """The planner jar taken out of the loader (once; atomically, as JVMs may start side by side);
    None when it cannot be (the loader then serves as Flink ships it)."""
    if os.path.isfile(target):
        return target
    partial = None
    try:
        with zipfile.ZipFile(loader) as archive, archive.open(PLANNER_JAR) as source:
            handle, partial = tempfile.mkstemp(dir=os.path.dirname(target), suffix=".partial")
            with os.fdopen(handle, "wb") as out:
                shutil.copyfileobj(source, out, 1 << 20)
        os.replace(partial, target)
    except (OSError, KeyError, zipfile.BadZipFile):
        if partial:
            with contextlib.suppress(OSError):
                os.unlink(partial)
        return None
    return target


def command(
    java: str, lib: str, stand_in: str, java_options: list[str], prepare_next: bool, threads: int = 1
) -> list[str]:
    return [
        java,
        *QUIET_STDOUT,
        *java_options,
        ROLE,
        "-cp",
        os.pathsep.join(classpath(lib, stand_in)),
        MAIN_CLASS,
        *(["--prepare-next"] if prepare_next else []),
        *(["--threads", str(threads)] if threads > 1 else []),
    ]


def guard_against_parent_death() -> bool:
    """Leaves a watchdog that kills the JVM this process is about to become when the process that
    started it dies, however it dies (``kill -9`` included). The JVM ends by itself when its stdin
    closes, but reads stdin only between jobs: a JVM compiling a huge job outlived a killed
    ``extract`` by minutes (1.3 GB). False when the parent is already gone (nothing to start).

    The watchdog waits on process file descriptors (no polling) for the parent's or the JVM's
    end; it is detached from both (a grandchild), holds none of the JVM's pipes, and stays in its
    process group, so killing the group ends it too. Without pidfds (Linux < 5.3) there is no
    watchdog: the JVM then ends at its next read of stdin, as before.
    """
    parent, jvm = os.getppid(), os.getpid()
    try:
        parent_fd, jvm_fd = os.pidfd_open(parent), os.pidfd_open(jvm)
    except (AttributeError, OSError):
        return True
    if os.getppid() != parent:  # it died before it could be watched
        return False
    middle = os.fork()
    if middle == 0:  # pragma: no cover - a child process
        try:
            if os.fork() == 0:
                _watch(parent_fd, jvm_fd)
        finally:
            os._exit(0)
    os.waitpid(middle, 0)
    os.close(parent_fd)
    os.close(jvm_fd)
    return True


def _watch(parent_fd: int, jvm_fd: int) -> None:  # pragma: no cover - a child process
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # the JVM's pipes and log: its caller must see them close with the JVM
        os.dup2(null, fd)
    os.close(null)
    try:
        ready, _, _ = select.select([parent_fd, jvm_fd], [], [])
        if parent_fd in ready and jvm_fd not in ready:
            signal.pidfd_send_signal(jvm_fd, signal.SIGKILL)
    except OSError:
        pass
    os._exit(0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lib", required=True, help="the version's pyflink/lib folder")
    parser.add_argument("--stand-in", required=True, help="the stand-in connector jar (it holds the server)")
    parser.add_argument("--log", default=None, help="where the JVM writes what it prints (else stderr)")
    parser.add_argument("--java-option", action="append", default=[])
    parser.add_argument("--threads", type=int, default=1, help="jobs compiled at once (answers in any order)")
    parser.add_argument(
        "--prepare-next", action="store_true", help="long-lived: make the next job's environment between jobs"
    )
    args = parser.parse_args()
    java = shutil.which("java")
    if java is None:
        print("no `java` on PATH: install a Java 11+ runtime", file=sys.stderr)
        return 2
    if args.log:
        # The JVM's own output (its stdout is kept for answers) goes to the log, appended.
        log = os.open(args.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.dup2(log, 2)
        os.close(log)
    argv = command(java, args.lib, args.stand_in, args.java_option, args.prepare_next, args.threads)
    if not guard_against_parent_death():
        return 1
    os.execv(java, argv)  # the JVM takes this process over: same pid, same stdin and stdout


if __name__ == "__main__":
    sys.exit(main())
