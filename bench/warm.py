"""The two warm figures, and the same figures of another checkout in the same run.

    python bench/warm.py [--flink-version 1.20] [--runs 10] [--this DIR] [--against DIR]

*Warm CLI extract*: `planlineage extract examples/cdc_pipeline.sql --format json` through the command
line, process start included, a warm planner of the version running. *Warm job*: `extract()` in a
process that has imported everything, answered by the running warm planner (every example, each
job's median). Both as medians of `--runs`.

The code measured is this checkout, or `--this DIR` (e.g. an install of it: `pip install --no-deps
--target DIR .`, whose imports are those of an installed wheel). With `--against DIR` (another
commit, e.g. `git archive HEAD~3 | tar -x -C DIR`, or its install) the same figures are measured for
that code too, each with its own warm planner, the two taking
turns run by run, so that a change of the machine's load falls on both. The load average is
printed at the start and the end: on a shared machine the figures are only comparable within a run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI_SCRIPT = ROOT / "examples" / "cdc_pipeline.sql"

#: Runs in a process of the code measured: every example once to load everything, then, for each
#: line read, every example once more, timed, answered as one JSON line.
JOB_TIMES = """
import json, sys, time
from pathlib import Path
from planlineage.pipeline import extract
minor, scripts = sys.argv[1], {Path(p).stem: Path(p).read_text() for p in sys.argv[2:]}
for text in scripts.values():
    extract(text, flink_version=minor)
print("ready", flush=True)
for _ in sys.stdin:
    times = {}
    for name, text in scripts.items():
        started = time.perf_counter()
        extract(text, flink_version=minor)
        times[name] = time.perf_counter() - started
    print(json.dumps(times), flush=True)
"""


class Checkout:
    """One checkout's code, run through PYTHONPATH, with a warm planner of its own."""

    def __init__(self, label: str, path: Path, private: Path):
        self.label = label
        self.env = dict(os.environ, PYTHONPATH=str(path), PLANLINEAGE_PLANNER_DIR=str(private / label))
        self.cli: list[float] = []
        self.jobs: dict[str, list[float]] = {}
        self.worker: subprocess.Popen

    def run(self, *argv: str, **options) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-P", *argv], env=self.env, capture_output=True, text=True, **options)

    def start(self, minor: str) -> None:
        self.run("-m", "planlineage", "planner", "start", minor, "--idle-timeout", "900", check=True, timeout=300)

    def stop(self) -> None:
        self.run("-m", "planlineage", "planner", "stop", timeout=60)

    def one_cli_run(self, minor: str) -> str:
        started = time.perf_counter()
        done = self.run(
            "-m", "planlineage", "extract", str(CLI_SCRIPT), "--flink-version", minor, "--format", "json", check=True
        )
        self.cli.append(time.perf_counter() - started)
        return done.stdout

    def start_jobs(self, minor: str) -> None:
        scripts = [str(p) for p in sorted((ROOT / "examples").glob("*.sql"))]
        self.worker = subprocess.Popen(
            [sys.executable, "-P", "-c", JOB_TIMES, minor, *scripts],
            env=self.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.worker.stdout.readline().strip() == "ready"

    def job_round(self) -> None:
        """Every example once, in the process started by start_jobs."""
        self.worker.stdin.write("\n")
        self.worker.stdin.flush()
        for name, seconds in json.loads(self.worker.stdout.readline()).items():
            self.jobs.setdefault(name, []).append(seconds)

    def stop_jobs(self) -> None:
        self.worker.stdin.close()
        self.worker.wait(timeout=60)


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--flink-version", default="1.20")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--this", type=Path, default=ROOT, help="the code measured (default: this checkout)")
    parser.add_argument("--against", type=Path, help="other code, measured in turns with this one")
    args = parser.parse_args()
    minor = args.flink_version
    print(f"warm figures: Flink {minor}, {os.cpu_count()} cores, load average {load()} at the start")
    with tempfile.TemporaryDirectory() as private:
        checkouts = [Checkout("this", args.this.resolve(), Path(private))]
        if args.against:
            checkouts.append(Checkout("against", args.against.resolve(), Path(private)))
        try:
            for checkout in checkouts:
                checkout.start(minor)
            outputs = {}
            # In turns, the order reversed every other run: a change of load falls on both alike.
            for run in range(args.runs):
                for checkout in checkouts[:: 1 if run % 2 else -1]:
                    outputs[checkout.label] = checkout.one_cli_run(minor)
            for checkout in checkouts:
                checkout.start_jobs(minor)
            for run in range(args.runs):
                for checkout in checkouts[:: 1 if run % 2 else -1]:
                    checkout.job_round()
            for checkout in checkouts:
                checkout.stop_jobs()
        finally:
            for checkout in checkouts:
                checkout.stop()
    for checkout in checkouts:
        path = args.this if checkout.label == "this" else args.against
        print(f"\n{checkout.label} ({path}):")
        cli = checkout.cli
        print(
            f"  warm CLI extract ({CLI_SCRIPT.name}, --format json): median {statistics.median(cli):.3f} s "
            f"of {len(cli)} (min {min(cli):.3f}, max {max(cli):.3f})"
        )
        for name, measured in checkout.jobs.items():
            print(f"  warm job {name:<28} median {statistics.median(measured) * 1000:.1f} ms of {len(measured)}")
        medians = [statistics.median(m) for m in checkout.jobs.values()]
        print(f"  warm job, median of the examples' medians: {statistics.median(medians) * 1000:.1f} ms")
        rounds = [sum(times) for times in zip(*checkout.jobs.values())]
        print(
            f"  warm jobs, all examples once: median {statistics.median(rounds) * 1000:.1f} ms of {len(rounds)} rounds"
        )
    if len(outputs) == 2:
        print(f"\nsame CLI output from both: {outputs['this'] == outputs['against']}")
    print(f"load average {load()} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
