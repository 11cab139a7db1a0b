"""Benchmark of the lifecycle under load; prints figures, asserts nothing.

    python bench/lifecycle_load.py [--apps 20] [--flink-version 1.20] [--planners N]

N applications at once, as a platform drives them, against the Gravitino-compatible test server
(tests/gravitino_server.py) and the real planner: N concurrent `submit`, then N concurrent
`state RUNNING` while the compile service is still compiling, then N concurrent `state
FINISHED`.  Printed: wall and CPU (p50/p95/max) of each command next to the bare interpreter
start-up, the most planner JVMs alive at once (process list sampled every 0.1 s), the time until
every START was delivered, the CPU the compile service and its JVMs used, and whether every
event reached the server exactly once.  The last line holds the figures of issue 10's "Done
when" (submit p95, state p95, most planner JVMs alive, exactly once) against their targets.

The package's bytecode is compiled first, as ``pip install`` does: where ``PYTHONDONTWRITEBYTECODE``
is set and the package is a source checkout, every command would otherwise compile its modules'
source on each run (~40 ms of CPU), which no installed copy does (``--source-only`` measures that).
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from compile_services import planner_jvms, process_tree, services, stat_fields  # noqa: E402
from gravitino_server import GravitinoTestServer  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def run_measured(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one child process."""
    began = time.monotonic()
    process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(process.pid, 0)
    process.returncode = 0
    return time.monotonic() - began, usage.ru_utime + usage.ru_stime


def figures(samples: list[tuple[float, float]]) -> str:
    walls = sorted(s[0] for s in samples)
    cpus = sorted(s[1] for s in samples)

    return (
        f"wall p50 {statistics.median(walls):.3f} p95 {p95(walls):.3f} max {walls[-1]:.3f} s; "
        f"cpu p50 {statistics.median(cpus):.3f} p95 {p95(cpus):.3f} s"
    )


def jvms(home: Path) -> int:
    return len(planner_jvms(home))


def tree_cpu(home: Path) -> float:
    """CPU seconds of the running service and every process under it (reaped children included)."""
    total = 0.0
    for service in services(home):
        for pid in process_tree(service):
            try:
                fields = stat_fields(pid)
            except OSError:
                continue
            total += sum(int(fields[i]) for i in (11, 12, 13, 14)) / TICK  # utime stime cutime cstime
    return total


def compile_bytecode() -> None:
    """The package's modules as ``pip install`` leaves them: with their bytecode."""
    import ast

    folders = {}
    for node in ast.walk(ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "FOLDERS" for t in node.targets):
            folders = ast.literal_eval(node.value)
    for folder in folders.values():
        compileall.compile_dir(str(ROOT / folder), quiet=1)


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--apps", type=int, default=20)
    parser.add_argument("--flink-version", default="1.20")
    parser.add_argument("--planners", type=int, default=0, help="lineage.compile-planners (0: the default)")
    parser.add_argument("--sql", default=str(ROOT / "examples" / "kafka_to_jdbc_enrichment.sql"))
    parser.add_argument("--source-only", action="store_true", help="do not compile the package's bytecode first")
    options = parser.parse_args()
    if not options.source_only:
        compile_bytecode()

    home = Path(tempfile.mkdtemp(prefix="planlineage-bench-")) / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANLINEAGE_")}
    env["PLANLINEAGE_HOME"] = str(home)
    env["PLANLINEAGE_COMPILE_IDLE_SECONDS"] = "5"
    if os.environ.get("PLANLINEAGE_FLINK_CACHE"):
        env["PLANLINEAGE_FLINK_CACHE"] = os.environ["PLANLINEAGE_FLINK_CACHE"]
    # What a platform runs: the installed command beside this interpreter (`python -m` adds runpy).
    installed = Path(sys.executable).with_name("planlineage")
    cli = [str(installed)] if installed.is_file() else [sys.executable, "-m", "planlineage"]
    print(f"command: {' '.join(cli)}")
    apps = [f"application_{i}" for i in range(options.apps)]

    with GravitinoTestServer() as server:
        subprocess.run([*cli, "settings", "set", "lineage.address", server.address], env=env, check=True)
        if options.planners:
            subprocess.run([*cli, "settings", "set", "lineage.compile-planners", str(options.planners)], env=env)
        baseline = [run_measured([sys.executable, "-c", "pass"], env) for _ in range(10)]
        with ThreadPoolExecutor(options.apps) as pool:  # the same concurrency, doing nothing
            baseline_concurrent = list(pool.map(lambda _: run_measured([sys.executable, "-c", "pass"], env), apps))
        seen: list[int] = []
        stop = threading.Event()

        def sample() -> None:
            while not stop.is_set():
                seen.append(jvms(home))
                time.sleep(0.1)

        threading.Thread(target=sample, daemon=True).start()
        began = time.monotonic()
        cpu_seen = [0.0]

        def watch_cpu() -> None:
            while not stop.is_set():
                cpu_seen[0] = max(cpu_seen[0], tree_cpu(home))
                time.sleep(0.5)

        threading.Thread(target=watch_cpu, daemon=True).start()
        with ThreadPoolExecutor(options.apps) as pool:
            submits = list(
                pool.map(
                    lambda a: run_measured(
                        [
                            *cli,
                            "submit",
                            "--app-id",
                            a,
                            "--job-name",
                            f"job-{a}",
                            "--flink-version",
                            options.flink_version,
                            "--sql-file",
                            options.sql,
                            "--lineage-enable",
                        ],
                        env,
                    ),
                    apps,
                )
            )
            running = list(
                pool.map(lambda a: run_measured([*cli, "state", "--app-id", a, "--state", "RUNNING"], env), apps)
            )
            while sum(1 for e in server.events if e["eventType"] == "START") < options.apps:
                if time.monotonic() - began > 1800:
                    break
                time.sleep(0.2)
            compiled = time.monotonic() - began
            finished = list(
                pool.map(lambda a: run_measured([*cli, "state", "--app-id", a, "--state", "FINISHED"], env), apps)
            )
        end = time.monotonic() + 120
        while len(server.events) < 3 * options.apps and time.monotonic() < end:
            time.sleep(0.2)
        stop.set()
        counts = Counter((e["run"]["runId"], e["job"]["name"], e["eventType"]) for e in server.events)

    print(
        f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; "
        f"{options.apps} apps, Flink {options.flink_version}"
    )
    print(f"interpreter start (python -c pass): {figures(baseline)}")
    print(f"interpreter start x{options.apps} concurrent: {figures(baseline_concurrent)}")
    print(f"submit x{options.apps} concurrent:      {figures(submits)}")
    print(f"state RUNNING x{options.apps} (compiling): {figures(running)}")
    print(f"state FINISHED x{options.apps}:        {figures(finished)}")
    print(f"all STARTs delivered after {compiled:.1f} s; most planner JVMs alive at once: {max(seen or [0])}")
    print(f"compile service + JVMs CPU: {cpu_seen[0]:.1f} s ({cpu_seen[0] / options.apps:.2f} s per app)")
    expected = {(run, job, kind) for (run, job, kind) in counts}
    starts = sum(1 for (_, _, kind) in counts if kind == "START")
    repeats = sum(1 for c in counts.values() if c > 1)
    exactly_once = starts == options.apps and len(counts) == 3 * options.apps and repeats == 0
    print(
        f"events at the server: {sum(counts.values())} of {3 * options.apps} expected, "
        f"{len(expected)} distinct (runId, job, eventType), repeats: {repeats}"
    )
    submit_p95 = p95([w for w, _ in submits])
    state_p95 = max(p95([w for w, _ in running]), p95([w for w, _ in finished]))
    jvms_max = max(seen or [0])
    limit = options.planners or max(1, (os.cpu_count() or 1) - 1)

    def verdict(ok: bool) -> str:
        return "ok" if ok else "MISSED"

    print(
        f"DONE-WHEN ({options.apps} apps, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}): "
        f"submit p95 {submit_p95:.2f} s (<= 0.5 {verdict(submit_p95 <= 0.5)}); "
        f"state p95 {state_p95:.2f} s (<= 3.5 {verdict(state_p95 <= 3.5)}); "
        f"planner JVMs max {jvms_max} (<= {limit} {verdict(jvms_max <= limit)}); "
        f"exactly once {'yes' if exactly_once else 'NO'} ({verdict(exactly_once)}); "
        f"submit over concurrent start-up p95 {submit_p95 - p95([w for w, _ in baseline_concurrent]):+.2f} s; "
        f"submit CPU p50 {statistics.median(c for _, c in submits) * 1000:.0f} ms "
        f"(interpreter {statistics.median(c for _, c in baseline) * 1000:.0f} ms)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
