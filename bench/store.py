"""Benchmark of the state store: events delivered per second through the outbox, PostgreSQL with 4
concurrent flushers versus the SQLite file with one (and, for reference, SQLite with 4 and
PostgreSQL with 1); prints figures and checks every event arrived exactly once.

    python bench/store.py [--events 3000] [--runs 100] [--flushers 4]

PostgreSQL runs with fsync on (as in production); SQLite as planlineage opens it (WAL,
synchronous=NORMAL).  Needs the PostgreSQL server binaries (Debian's ``postgresql``; a private throwaway instance is
started on a loopback port, as the tests do) and the ``postgres`` extra.  Events go to the
Gravitino-compatible test server of tests/ on 127.0.0.1.  Each flusher is its own process (as
``planlineage flush`` on several nodes would be), with its own connection.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from databases import postgres_server  # noqa: E402
from gravitino_server import GravitinoTestServer  # noqa: E402

from planlineage.emitter import outbox  # noqa: E402
from planlineage.emitter.transports import create_transport  # noqa: E402
from planlineage.store.postgres import PostgresStore  # noqa: E402
from planlineage.store.sqlite import Store  # noqa: E402

KINDS = ("START", "RUNNING", "COMPLETE")


def open_store(target: str, home: Path):
    return PostgresStore(target, home) if target.startswith("postgresql://") else Store(target)


def fill(store, events: int, runs: int) -> None:
    per_run = max(1, events // runs)
    for run_index in range(runs):
        run = f"0190f1e2-0000-7000-8000-{run_index:012d}"
        payloads = []
        for i in range(per_run):
            payloads.append(
                {
                    "eventType": KINDS[min(i, 2)] if per_run <= 3 else "RUNNING",
                    "eventTime": f"2026-01-01T00:00:00.{i:06d}Z",
                    "producer": "https://example.org/bench",
                    "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent",
                    "run": {"runId": run},
                    "job": {"namespace": "bench", "name": f"job.{i}"},  # one job per event: (run, job, type) unique
                    "inputs": [{"namespace": "kafka://k:9092", "name": "in"}],
                    "outputs": [{"namespace": "postgres://pg:5432", "name": "dw.public.out"}],
                }
            )
        outbox.enqueue(store, run, payloads)


def flusher(target: str, home: str, address: str, ready, go, batch: int) -> None:
    store = open_store(target, Path(home))
    with create_transport("gravitino", {"address": address}) as transport:
        ready.wait()
        go.wait()
        while outbox.deliver_pending(store, transport, 60, batch=batch).delivered:
            pass


def measure(label: str, target: str, home: Path, flushers: int, events: int, runs: int, batch: int) -> float:
    store = open_store(target, home)
    fill(store, events, runs)
    queued = outbox.count_pending(store)
    with GravitinoTestServer(keep_alive=True) as server:
        context = multiprocessing.get_context("fork")
        ready = context.Barrier(flushers + 1)
        go = context.Event()
        procs = [
            context.Process(target=flusher, args=(target, str(home), server.address, ready, go, batch))
            for _ in range(flushers)
        ]
        for proc in procs:
            proc.start()
        ready.wait()
        started = time.monotonic()
        go.set()
        for proc in procs:
            proc.join()
        elapsed = time.monotonic() - started
        keys = server.keys()
    once = len(keys) == queued and set(keys.values()) == {1}
    rate = queued / elapsed
    print(
        f"{label:<34} {queued:>6} events  {elapsed:6.2f} s  {rate:8.0f} events/s  "
        f"exactly once: {'yes' if once else 'NO'}  left: {outbox.count_pending(store)}"
    )
    return rate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--flushers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=outbox.DEFAULT_BATCH, help="rows per claim")
    parser.add_argument("--postgres-only", action="store_true", help="only PostgreSQL with --flushers flushers")
    args = parser.parse_args()
    with postgres_server(durable=True) as pg, tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        cases = [
            ("SQLite, 1 flusher", str(home / "a.db"), 1),
            (f"PostgreSQL, {args.flushers} flushers", pg.create_database("bench_a"), args.flushers),
            (f"SQLite, {args.flushers} flushers (reference)", str(home / "b.db"), args.flushers),
            ("PostgreSQL, 1 flusher (reference)", pg.create_database("bench_b"), 1),
        ]
        if args.postgres_only:
            measure(cases[1][0], cases[1][1], home, args.flushers, args.events, args.runs, args.batch)
            return 0
        rates = [measure(label, target, home, n, args.events, args.runs, args.batch) for label, target, n in cases]
    print(f"PostgreSQL with {args.flushers} flushers / SQLite with 1: {rates[1] / rates[0]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
