"""Benchmark of the planner paths; prints figures, asserts nothing.

    python bench/run.py [--flink-version 1.20] [--backfill 200] [--repeat 15]

Measured in one run on this machine: cold `extract` (a fresh JVM per job, the CLI as a platform
calls it), warm extract per job (in-process `extract()` answered by a running warm planner), the bare
compile of the same jobs inside the same warm JVM (the floor: their INSERTs parsed and compiled, as
`compilePlanSql` does, timed by the JVM), their ratio, backfill
throughput with 1 and 2 backfill threads, and the warm planner's peak resident memory; on the examples and on
generated jobs of growing size.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from planlineage import backfill
from planlineage.pipeline import extract
from planlineage.planner import warm
from planlineage.planner.provision import ensure

ROOT = Path(__file__).resolve().parent.parent


def statement_set(n: int) -> str:
    ddl = [
        "CREATE TABLE src (id BIGINT, v STRING, ts TIMESTAMP(3)) WITH ('connector' = 'kafka', 'topic' = 'src', "
        "'properties.bootstrap.servers' = 'k:9092', 'format' = 'json');"
    ]
    inserts = []
    for i in range(n):
        ddl.append(
            f"CREATE TABLE out{i} (id BIGINT, v STRING) WITH ('connector' = 'jdbc', "
            f"'url' = 'jdbc:postgresql://pg:5432/dw', 'table-name' = 'public.out{i}');"
        )
        inserts.append(f"INSERT INTO out{i} SELECT id, UPPER(v) FROM src WHERE id % {n} = {i};")
    return "\n".join(ddl) + "\nEXECUTE STATEMENT SET BEGIN\n" + "\n".join(inserts) + "\nEND;"


def join_chain(n: int) -> str:
    ddl = [
        f"CREATE TABLE t{i} (id BIGINT, v{i} STRING) WITH ('connector' = 'kafka', 'topic' = 't{i}', "
        f"'properties.bootstrap.servers' = 'k:9092', 'format' = 'json');"
        for i in range(n)
    ]
    ddl.append(
        "CREATE TABLE joined (id BIGINT, v STRING) WITH ('connector' = 'jdbc', "
        "'url' = 'jdbc:mysql://db/dw', 'table-name' = 'joined');"
    )
    joins = " ".join(f"JOIN t{i} ON t0.id = t{i}.id" for i in range(1, n))
    values = " || ".join(f"t{i}.v{i}" for i in range(n))
    return "\n".join(ddl) + f"\nINSERT INTO joined SELECT t0.id, {values} FROM t0 {joins};"


def corpus() -> dict[str, str]:
    jobs = {p.stem: p.read_text() for p in sorted((ROOT / "examples").glob("*.sql"))}
    for n in (1, 10, 50):
        jobs[f"statement-set-{n}"] = statement_set(n)
    for n in (2, 5, 10, 20):
        jobs[f"join-{n}-way"] = join_chain(n)
    return jobs


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def cli_runs(minor: str, repeat: int, script: Path) -> list[float]:
    """Wall seconds of `extract` through the command line, process start included."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-P", "-m", "planlineage", "extract", str(script), "--flink-version", minor]
            + ["--format", "json"],
            check=True,
            capture_output=True,
        )
        times.append(time.perf_counter() - started)
    return times


def cold_runs(minor: str, repeat: int) -> list[float]:
    return cli_runs(minor, repeat, ROOT / "examples" / "kafka_to_jdbc_enrichment.sql")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--flink-version", default="1.20")
    parser.add_argument("--repeat", type=int, default=15, help="warm runs per job")
    parser.add_argument("--cold", type=int, default=5, help="cold runs")
    parser.add_argument("--backfill", type=int, default=200, help="jobs in the backfill runs")
    args = parser.parse_args()

    provisioned = ensure(args.flink_version)
    minor = provisioned.flink.minor
    print(
        f"planlineage benchmark: Flink {provisioned.flink.version}, {os.cpu_count()} cores, "
        f"python {sys.version.split()[0]}"
    )

    with tempfile.TemporaryDirectory() as private:
        os.environ[warm.PLANNER_DIR_ENV] = str(Path(private) / "w")
        cold = cold_runs(minor, args.cold)
        print(
            f"\ncold extract (CLI, fresh JVM): median {statistics.median(cold):.2f} s over {len(cold)} runs "
            f"(min {min(cold):.2f}, max {max(cold):.2f})"
        )

        info = warm.start(minor, warm.Limits(), idle_seconds=600)
        socket_path = warm.socket_path(minor)
        print(
            f"\nwarm planner: pid {info['pid']}; per job, {args.repeat} runs each, in-process extract() via the warm planner"
        )
        print(f"{'job':<28}{'warm p50':>10}{'warm p95':>10}{'floor p50':>11}{'ratio':>8}{'server p50':>12}")
        peak_rss = 0.0
        ratios = []
        for name, script in corpus().items():
            warm_times, floors, servers = [], [], []
            for _ in range(args.repeat):
                started = time.perf_counter()
                lineage = extract(script, flink_version=minor)
                warm_times.append((time.perf_counter() - started) * 1000)
                assert lineage.sinks, name
                # The same job again, timing only what the JVM spends, as it timed it: the bare
                # compile (the INSERTs parsed and compiled: compilePlanSql) and the whole job.
                answer = warm.call(socket_path, {"op": "compile", "request": _request(script, provisioned)}, 120)
                floors.append(answer["timings"]["compile_ms"] + answer["timings"]["sink_sql_ms"])
                servers.append(answer["timings"]["server_ms"])
            peak_rss = max(peak_rss, warm.status()[0]["rss_mb"])
            ratio = statistics.median(warm_times) / statistics.median(floors)
            ratios.append(ratio)
            print(
                f"{name:<28}{statistics.median(warm_times):>8.0f}ms{percentile(warm_times, 95):>8.0f}ms"
                f"{statistics.median(floors):>9.0f}ms{ratio:>8.2f}{statistics.median(servers):>10.0f}ms"
            )
        print(f"median ratio warm/floor over the corpus: {statistics.median(ratios):.2f}")
        print(f"peak RSS of the warm planner (python child + JVM): {peak_rss:.0f} MB")
        cli = cli_runs(minor, 5, ROOT / "examples" / "cdc_pipeline.sql")
        print(f"warm extract through the CLI (process start included): median {statistics.median(cli):.2f} s")
        warm.stop(minor)

        everyday = [
            script for name, script in corpus().items() if name not in ("statement-set-50", "join-20-way")
        ]  # the sizes platforms mostly run
        folder = Path(private) / "backfill"
        folder.mkdir()
        for i in range(args.backfill):
            (folder / f"job{i:04d}.sql").write_text(everyday[i % len(everyday)])
        scripts = backfill.collect_scripts([str(folder)])
        print(
            f"\nbackfill of {len(scripts)} jobs (the examples, statement sets of 1 and 10 sinks, 2- to 10-way"
            " joins, cycled; JVM starts included):"
        )
        for threads in (1, 2):
            sink = io.StringIO()
            started = time.perf_counter()
            ok, failed = backfill.run(
                scripts, flink_version=minor, jars=[], identity=None, jobs=threads, out=sink, err=io.StringIO()
            )
            elapsed = time.perf_counter() - started
            print(
                f"  {threads} backfill thread(s): {elapsed:.1f} s, {len(scripts) / elapsed:.1f} jobs/s "
                f"({ok} ok, {failed} failed; 1,000 jobs would take {1000 / (len(scripts) / elapsed) / 60:.1f} min)"
            )
    return 0


def _request(script: str, provisioned) -> dict:
    from planlineage import script as sql_script
    from planlineage.planner.request import build_request

    return build_request(sql_script.split(script), provisioned, [])[0]


if __name__ == "__main__":
    sys.exit(main())
