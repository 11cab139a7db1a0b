"""Benchmark of the doctor on a large event log; prints time and memory.

    python bench/doctor_stream.py [--events 5000] [--datasets 500] [--keep /tmp/lineage.log]

Writes a Gravitino log sink file of `--events` events (each with a SQL facet) over `--datasets`
distinct datasets, then runs `diagnose` on it and prints the file size, the time, the events read
and the peak of Python's allocations (tracemalloc): streamed, the peak follows the distinct
datasets and jobs, not the size of the log.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import tracemalloc
from pathlib import Path

from planlineage.doctor import diagnose


def write_log(path: Path, events: int, datasets: int) -> None:
    sql = "INSERT INTO t SELECT * FROM s WHERE " + " AND ".join(f"c{i} = {i}" for i in range(60))
    with path.open("w", encoding="utf-8") as out:
        for i in range(events):
            event = {
                "eventType": "COMPLETE",
                "eventTime": "2026-11-30T10:00:00Z",
                "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.30.0/integration/spark",
                "run": {"runId": f"01890000-0000-7000-8000-{i:012d}"},
                "job": {"namespace": "spark_jobs", "name": f"job_{i % 200}", "facets": {"sql": {"query": sql}}},
                "inputs": [{"namespace": "s3://datalake", "name": f"in/{i % datasets}"}],
                "outputs": [{"namespace": "s3a://datalake", "name": f"in/{(i + 1) % datasets}"}],
            }
            out.write("2026-11-30 10:00:00.000 INFO [lineage-sink-0] [LineageLogSink] - " + json.dumps(event) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--datasets", type=int, default=500)
    parser.add_argument("--keep", default=None, help="write the log here (and keep it)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(args.keep or Path(tmp) / "gravitino_lineage.log")
        write_log(log, args.events, args.datasets)
        size = log.stat().st_size
        tracemalloc.start()
        start = time.perf_counter()
        report = diagnose([str(log)])
        took = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    print(f"log              {size / 1e6:7.1f} MB, {report.event_count} events, {len(report.datasets)} datasets")
    print(f"diagnose         {took:7.2f} s (under tracemalloc)   {len(report.splits)} split(s)")
    print(f"peak allocated   {peak / 1e6:7.2f} MB ({peak / size:.1%} of the log)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
