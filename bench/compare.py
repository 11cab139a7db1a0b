"""planlineage side by side with the static parsers people use instead, in one run.

    pip install '.[bench]'    # sqllineage and sqlglot: the benchmark's, never the project's
    python bench/compare.py [--flink-version 1.20] [--count 200] [--jobs 2] [--cli-runs 5] [--cold-runs 3]

On the generated corpus of bench/corpus.py (realistic Flink SQL jobs with their expected table
lineage) it measures, per tool: how many scripts it got right (every sink paired with exactly its
input tables, by short table name), the time for the whole corpus from cold (a fresh process:
interpreter, imports and, for planlineage, the JVM starts; `extract DIR --jobs N`), `--cold-runs`
times with the tools interleaved (median and range), and warm (already imported; for planlineage
the running warm planner), and the per-job p50/p95. For planlineage also the ratio of a warm job to
the bare compile of the same job in the same JVM, as the JVM timed it (paired runs per job), once
through a planner of this process (as a backfill's own JVM answers) and once through the running
warm planner (one more hop: its socket), and
one script through the command line, warm, against sqllineage's CLI. It ends with the three
figures issue 16's "done when" names.

How the static tools are asked (the most favourable reading we found, the same for both):
statement-set wrappers (`EXECUTE STATEMENT SET BEGIN`, `BEGIN STATEMENT SET;`, `END;`) are
removed, since neither parses them; sqllineage `ansi` (its default) and sqlglot parse statement by
statement and skip what they cannot parse (Flink DDL); sqllineage `non-validating` (deprecated)
reads the whole script. Their table graph gives each sink (a table written and not read again) the
tables upstream of it that nothing writes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpus as corpus_module  # noqa: E402

WRAPPERS = re.compile(
    r"^\s*(EXECUTE\s+STATEMENT\s+SET\s*|BEGIN\s+STATEMENT\s+SET\s*;|BEGIN\s*|END\s*;)\s*$", re.I | re.M
)
STATIC_TOOLS = ["sqllineage-ansi", "sqllineage-non-validating", "sqlglot"]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, -(-len(ordered) * p // 100) - 1))] if ordered else 0.0


def short(name: str) -> str:
    return str(name).replace("`", "").split(".")[-1].lower()


def per_sink(edges: list[tuple[str, str]]) -> dict[str, list[str]]:
    """Sinks (written, never read) and the tables upstream of each that nothing writes."""
    inputs: dict[str, set[str]] = {}
    read = set()
    for source, target in edges:
        inputs.setdefault(target, set()).add(source)
        read.add(source)
    result = {}
    for target in inputs:
        if target in read:
            continue
        roots, seen, pending = set(), set(), list(inputs[target])
        while pending:
            node = pending.pop()
            if node in seen:
                continue
            seen.add(node)
            if node in inputs:
                pending.extend(inputs[node])
            else:
                roots.add(node)
        result[target] = sorted(roots)
    return result


# -- the static tools ---------------------------------------------------------------------------


def _statements(sql: str) -> list[str]:
    import sqlparse  # installed with sqllineage; the same split for both statement-wise tools

    return [s for s in sqlparse.split(WRAPPERS.sub("", sql)) if s.strip()]


def sqllineage_ansi(sql: str) -> dict[str, list[str]]:
    from sqllineage.runner import LineageRunner

    edges = []
    for statement in _statements(sql):
        try:
            runner = LineageRunner(statement, dialect="ansi", silent_mode=True)
            sources, targets = list(runner.source_tables), list(runner.target_tables)
        except Exception:
            continue  # Flink DDL: not parsable by sqlfluff's ANSI grammar
        edges += [(short(s), short(t)) for t in targets for s in sources]
    return per_sink(edges)


def sqllineage_non_validating(sql: str) -> dict[str, list[str]]:
    from sqllineage.runner import LineageRunner

    runner = LineageRunner(WRAPPERS.sub("", sql), dialect="non-validating", silent_mode=True)
    graph = runner.to_cytoscape()
    return per_sink([(short(e["data"]["source"]), short(e["data"]["target"])) for e in graph if "source" in e["data"]])


def sqlglot_lineage(sql: str) -> dict[str, list[str]]:
    import sqlglot
    from sqlglot import exp

    edges = []
    for statement in _statements(sql):
        try:
            tree = sqlglot.parse_one(statement)
        except Exception:
            continue
        if isinstance(tree, exp.Insert) or isinstance(tree, exp.Create) and tree.expression is not None:
            target, query = tree.this, tree.expression
        else:
            continue
        target_table = target.find(exp.Table) if not isinstance(target, exp.Table) else target
        if target_table is None or query is None:
            continue
        ctes = {cte.alias_or_name.lower() for cte in query.find_all(exp.CTE)}
        sources = {short(t.name) for t in query.find_all(exp.Table) if t.name and t.name.lower() not in ctes}
        edges += [(s, short(target_table.name)) for s in sources]
    return per_sink(edges)


ADAPTERS = {
    "sqllineage-ansi": sqllineage_ansi,
    "sqllineage-non-validating": sqllineage_non_validating,
    "sqlglot": sqlglot_lineage,
}


def run_static(tool: str, folder: Path) -> None:
    """In a fresh process: every script of the folder; one JSON line of results and times."""
    warnings.filterwarnings("ignore")
    adapter = ADAPTERS[tool]
    began = time.perf_counter()
    adapter("INSERT INTO b SELECT a FROM c;")  # imports and first-use set-up, counted in cold only
    results, times = {}, []
    for path in sorted(folder.glob("*.sql")):
        sql = path.read_text(encoding="utf-8")
        started = time.perf_counter()
        try:
            results[path.name] = adapter(sql)
        except Exception as error:
            results[path.name] = {"error": type(error).__name__}
        times.append(time.perf_counter() - started)
    print(json.dumps({"results": results, "times": times, "in_process": time.perf_counter() - began}))


def version_of(distribution: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return ""


# -- planlineage ----------------------------------------------------------------------------------


def planlineage_lines(stdout: str) -> dict[str, dict]:
    found = {}
    for line in stdout.splitlines():
        entry = json.loads(line)
        name = Path(entry["script"]).name
        if entry["ok"]:
            found[name] = {
                short(s["table"]): sorted({short(i["table"]) for i in s["inputs"]}) for s in entry["lineage"]["sinks"]
            }
        else:
            found[name] = {"error": entry["error"][:200]}
    return found


def right(results: dict[str, dict], expected: dict[str, dict]) -> int:
    return sum(1 for name, lineage in expected.items() if results.get(name) == lineage)


def java_runtime(provisioned) -> str:
    """The planner's Java runtime (JAVA_HOME, else PATH) and the class archive its JVMs map."""
    from planlineage.line_child import find_java_tool
    from planlineage.planner import class_archive

    java = find_java_tool("java")
    if java is None:
        return "no Java"
    archive = provisioned.class_archive(java)
    version = class_archive.runtime_version(java) or "(version unknown)"
    if not archive.exists():
        return f"Java {version} without a class archive"
    return f"Java {version} with its {'AOT cache' if archive.suffix == '.aot' else 'class-data archive'}"


def timed(command: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=3600)
    return time.perf_counter() - started, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--flink-version", default="1.20")
    parser.add_argument("--count", type=int, default=200, help="scripts in the corpus")
    parser.add_argument("--jobs", type=int, default=2, help="planners of the from-cold backfill")
    parser.add_argument("--cli-runs", type=int, default=5)
    parser.add_argument("--cold-runs", type=int, default=3, help="paired from-cold runs of every tool")
    parser.add_argument("--ratio-runs", type=int, default=3, help="paired warm/bare runs per job")
    parser.add_argument("--static", choices=STATIC_TOOLS, help=argparse.SUPPRESS)  # the child mode
    parser.add_argument("folder", nargs="?", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.static:
        run_static(args.static, args.folder)
        return 0

    from planlineage import script as sql_script
    from planlineage.pipeline import extract
    from planlineage.planner import warm
    from planlineage.planner.provision import ensure
    from planlineage.planner.request import build_request
    from planlineage.planner.warm import SelfHealingPlanner
    from planlineage.planner.warm_up import WARM_UP

    provisioned = ensure(args.flink_version)
    minor = provisioned.flink.minor
    load_before = os.getloadavg()
    print(
        f"planlineage vs static parsers: Flink {provisioned.flink.version}, {os.cpu_count()} cores, "
        f"python {sys.version.split()[0]}, {java_runtime(provisioned)}, load average {load_before[0]:.1f} at the start"
    )
    rows = []
    with tempfile.TemporaryDirectory() as private:
        folder = Path(private) / "corpus"
        expected = corpus_module.write(folder, args.count)
        (folder / "expected.json").unlink()  # the tools read .sql files only
        env = dict(os.environ)
        env[warm.PLANNER_DIR_ENV] = str(Path(private) / "planners")  # no warm planner: from cold
        os.environ[warm.PLANNER_DIR_ENV] = env[warm.PLANNER_DIR_ENV]
        command = [sys.executable, "-m", "planlineage", "extract", str(folder), "--flink-version", minor]

        # From cold, paired and interleaved: planlineage, then each static tool, `--cold-runs` times,
        # so that a change in the machine's load falls on all of them.
        colds: dict[str, list[float]] = {"planlineage": []}
        static_runs: dict[str, dict] = {}
        for _ in range(args.cold_runs):
            took, result = timed(command + ["--jobs", str(args.jobs)], env)
            colds["planlineage"].append(took)
            cold_results = planlineage_lines(result.stdout)
            for tool in STATIC_TOOLS:
                if version_of(tool.split("-")[0]):
                    took, result = timed([sys.executable, __file__, "--static", tool, str(folder)], env)
                    colds.setdefault(tool, []).append(took)
                    static_runs[tool] = json.loads(result.stdout.strip().splitlines()[-1])
        cold = statistics.median(colds["planlineage"])
        warm.start(minor, warm.Limits(), idle_seconds=900)
        try:
            warm_corpus, result = timed(command + ["--jobs", "1"], env)  # the warm planner answers all
            warm_results = planlineage_lines(result.stdout)
            per_job: list[float] = []
            socket_path = warm.socket_path(minor)
            jobs = []
            for path in sorted(folder.glob("*.sql")):
                sql = path.read_text(encoding="utf-8")
                jobs.append((sql, build_request(sql_script.split(sql), provisioned, [])[0]))
            # Each path is timed over the whole corpus while the other's JVM idles, as each runs in
            # use (a backfill asks one or the other): two JVMs taking turns job by job on 2 cores
            # evict each other's code and data from the caches, which no real caller pays.
            # Per job, `--ratio-runs` paired runs: the job's warm extract (the whole in-process
            # call) and then the same job's bare compile in the same JVM, as the JVM itself timed
            # it: `compile_ms` is compilePlan of the parsed INSERTs; `sink_sql_ms` + `compile_ms`
            # is compilePlanSql (the INSERTs parsed, validated and compiled), with the tables
            # already declared.
            via_warm_planner = Ratios()  # through the running warm planner: its socket, then its JVM's pipe
            for sql, request in jobs:
                started = time.perf_counter()
                extract(sql, flink_version=minor)
                per_job.append(time.perf_counter() - started)  # a job the JVM has not seen, as in a backfill
                via_warm_planner.job(
                    lambda: extract(sql, flink_version=minor),  # noqa: B023 - called in this iteration
                    lambda: warm.call(socket_path, {"op": "compile", "request": request}, 120)["timings"],  # noqa: B023
                    args.ratio_runs,
                )
            via_own = Ratios()  # through a planner of this process (a JVM's pipe), as a backfill's own JVM answers
            own = SelfHealingPlanner(provisioned)
            own.compile(WARM_UP)
            for sql, request in jobs:
                own.compile(request)  # the own planner sees each job once before it is timed, as the warm planner did
                via_own.job(
                    lambda: extract(sql, planner=own),  # noqa: B023
                    lambda: own.compile(request)["timings"],  # noqa: B023
                    args.ratio_runs,
                )
            own.close()
            one = folder / sorted(p.name for p in folder.glob("*lookup_join.sql"))[0]
            cli_ours, cli_theirs = [], []
            for _ in range(args.cli_runs):
                took, _ = timed([sys.executable, "-m", "planlineage", "extract", str(one), "--format", "json"], env)
                cli_ours.append(took)
                if version_of("sqllineage"):
                    took, _ = timed(
                        [str(Path(sys.executable).parent / "sqllineage"), "-f", str(one), "--dialect=non-validating"],
                        env,
                    )
                    cli_theirs.append(took)
        finally:
            warm.stop(minor)
        assert warm_results == cold_results, "the warm and the cold planners disagree"
        rows.append(
            (
                f"planlineage (Flink {provisioned.flink.version})",
                right(cold_results, expected),
                f"{cold:.1f} s{spread(colds['planlineage'])} (--jobs {args.jobs})",
                f"{warm_corpus:.1f} s (1 warm planner)",
                per_job,
            )
        )
        for tool in STATIC_TOOLS:
            distribution = tool.split("-")[0]
            if tool not in static_runs:
                rows.append((f"{tool} (not installed: pip install '.[bench]')", 0, "-", "-", []))
                continue
            data = static_runs[tool]
            rows.append(
                (
                    f"{tool} {version_of(distribution)}",
                    right(data["results"], expected),
                    f"{statistics.median(colds[tool]):.1f} s{spread(colds[tool])} (1 process)",
                    f"{sum(data['times']):.1f} s (imported)",
                    data["times"],
                )
            )

    print(f"\ncorpus: {len(expected)} generated scripts (bench/corpus.py, {len(corpus_module.SHAPES)} shapes)\n")
    print(f"{'tool':<36}{'right':>9}  {'corpus from cold':<25}{'corpus warm':<24}{'per job p50':>12}{'p95':>9}")
    for name, correct, cold_text, warm_text, times in rows:
        p50 = f"{statistics.median(times) * 1000:.0f} ms" if times else "-"
        p95 = f"{percentile(times, 95) * 1000:.0f} ms" if times else "-"
        print(f"{name:<36}{correct:>5}/{len(expected):<3}  {cold_text:<25}{warm_text:<24}{p50:>12}{p95:>9}")
    print(
        f"\nplanlineage warm job (in-process extract()) / bare compile of the same job in the same JVM, median over "
        f"{len(via_own.ratios)} jobs of each job's median over {args.ratio_runs} paired runs:"
    )
    for label, ratios in (
        ("through a planner of this process (pipe)", via_own),
        ("through the warm planner (socket)", via_warm_planner),
    ):
        print(f"  {label}:")
        print(
            f"    vs compilePlanSql (INSERTs parsed + compilePlan): {statistics.median(ratios.ratios):.2f} "
            f"(p25 {percentile(ratios.ratios, 25):.2f}, p75 {percentile(ratios.ratios, 75):.2f}, "
            f"p95 {percentile(ratios.ratios, 95):.2f}); the JVM's own share of the job: "
            f"{statistics.median(ratios.server_ratios):.2f}; warm job p50 {statistics.median(ratios.took) * 1000:.1f} ms, "
            f"bare p50 {statistics.median(ratios.bare) * 1000:.1f} ms"
        )
        print(
            f"    vs compilePlan alone (INSERTs already parsed): {statistics.median(ratios.plan_ratios):.2f} "
            f"(p25 {percentile(ratios.plan_ratios, 25):.2f}, p75 {percentile(ratios.plan_ratios, 75):.2f})"
        )
    if cli_theirs:
        print(
            f"one script through the CLI (whole process, median of {args.cli_runs}): planlineage extract (warm planner) "
            f"{statistics.median(cli_ours):.2f} s, sqllineage -f (non-validating) {statistics.median(cli_theirs):.2f} s, "
            f"ratio {statistics.median(cli_ours) / statistics.median(cli_theirs):.2f}"
        )
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (2 cores shared with other work: figures are relative)")
    print("\nDone-when figures (issue 16):")
    for tool in ("sqllineage-ansi", "sqllineage-non-validating"):
        if colds.get(tool):
            ours = [a / b for a, b in zip(colds["planlineage"], colds[tool])]
            print(
                f"  from-cold corpus, planlineage / {tool}: {statistics.median(ours):.2f}"
                f"{spread(ours, '.2f', '')} over {len(ours)} paired runs (target <= 0.5 against sqllineage)"
            )
    if cli_theirs:
        print(
            f"  warm CLI extract / sqllineage CLI: {statistics.median(cli_ours) / statistics.median(cli_theirs):.2f} "
            "(target <= 0.25)"
        )
    for label, ratios in (("a planner of this process", via_own), ("the warm planner", via_warm_planner)):
        print(
            f"  warm per-job cost / bare compile (compilePlanSql), through {label}: "
            f"{statistics.median(ratios.ratios):.2f} (target <= 1.3)"
        )
    return 0


class Ratios:
    """Paired warm-job and bare-compile times, per job (medians of its runs)."""

    def __init__(self) -> None:
        self.ratios: list[float] = []
        self.plan_ratios: list[float] = []
        self.server_ratios: list[float] = []
        self.took: list[float] = []
        self.bare: list[float] = []

    def job(self, run_job, timings_of_bare, runs: int) -> None:
        took, bare, plan_only, server = [], [], [], []
        for _ in range(runs):
            started = time.perf_counter()
            run_job()
            took.append(time.perf_counter() - started)
            timings = timings_of_bare()
            bare.append((timings["compile_ms"] + timings["sink_sql_ms"]) / 1000)
            plan_only.append(timings["compile_ms"] / 1000)
            server.append(timings["server_ms"] / 1000)
        if statistics.median(plan_only) > 0:
            self.took.append(statistics.median(took))
            self.bare.append(statistics.median(bare))
            self.ratios.append(statistics.median(took) / statistics.median(bare))
            self.plan_ratios.append(statistics.median(took) / statistics.median(plan_only))
            self.server_ratios.append(statistics.median(server) / statistics.median(bare))


def spread(values: list[float], fmt: str = ".1f", unit: str = " s") -> str:
    """' (min–max)' of repeated runs; nothing for one run."""
    if len(values) < 2:
        return ""
    return f" ({min(values):{fmt}}–{max(values):{fmt}}{unit.strip() and unit})"


if __name__ == "__main__":
    sys.exit(main())
