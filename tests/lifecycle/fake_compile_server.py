"""A fake Flink compile server: the protocol of planner/child/compile_server.py, without a JVM.

The lifecycle tests run the real pipeline (compile service, pool, Planner, walk, registry,
events); only the compile server and its JVM are this script, which answers each request with
the answer recorded for its statements (the CompiledPlans of tests/fixtures/plans, put there by
``recorded_planner.RecordedPlanner``). Standard library only, as the real server (it runs with
the parent's Python paths removed).

The fake provisioned venv's ``bin/python`` runs ``this --recorded DIR --answers FILE
<compile_server.py> ...``. FILE: {the statements' SQL joined by NUL: answer}, the version's.
In DIR: ``hold`` (while it exists a
compile waits: the tests' gate, no sleeps); ``hold-large`` (the same for a request over
:data:`LARGE_REQUEST_CHARS` only: a large script compiling for long); ``compiling.<ppid>`` (written when a compile begins;
the parent is the compile service); ``requests.jsonl`` (the jars of each request).
"""

from __future__ import annotations

import json
import os
import sys
import time

#: A request longer than this is held by ``hold-large`` (the compile service's large jobs are over 512 KiB).
LARGE_REQUEST_CHARS = 512 * 1024


def held(folder: str, line: str) -> bool:
    return os.path.exists(os.path.join(folder, "hold")) or (
        len(line) > LARGE_REQUEST_CHARS and os.path.exists(os.path.join(folder, "hold-large"))
    )


def key(statements: list[dict]) -> str:
    return "\0".join(s["sql"] for s in statements)


def answer(path: str, request: dict) -> dict:
    with open(path, encoding="utf-8") as handle:
        answers = json.load(handle)
    found = answers.get(key(request.get("statements") or []))
    if found is None:
        message = "the fake compile server has no recorded answer for these statements"
        found = {"ok": False, "error": {"statement": None, "message": message}}
    return found


def main() -> int:
    folder = sys.argv[sys.argv.index("--recorded") + 1]
    answers = sys.argv[sys.argv.index("--answers") + 1]
    parent = os.getppid()
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        with open(os.path.join(folder, f"compiling.{parent}"), "w", encoding="utf-8") as handle:
            handle.write("compiling")
        while held(folder, line):
            if os.getppid() != parent:  # the compile service died: nobody waits for the answer
                return 1
            time.sleep(0.02)
        with open(os.path.join(folder, "requests.jsonl"), "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"jars": request.get("jars") or []}) + "\n")
        # "id" first, as the real server writes it: the client finds the answer by that prefix
        print(json.dumps({"id": request["id"], **answer(answers, request)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
