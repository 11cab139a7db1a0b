"""LineChild: answers reach the thread that asked, in whatever order the child writes them."""

from __future__ import annotations

import sys
import threading
import time

import pytest

from planlineage.errors import PlannerError, PlannerTimeout
from planlineage.line_child import LineChild

# Answers requests two at a time, the second first, with chatter between; "hang" is never answered.
CHILD = r"""
import json, sys
print("a JVM's chatter", flush=True)
print(json.dumps({"ready": True}), flush=True)
held = []
for line in sys.stdin:
    request = json.loads(line)
    if request.get("hang"):
        continue
    held.append(request)
    if len(held) == 2:
        for r in reversed(held):
            print("{not json either", flush=True)
            print(json.dumps({"id": r["id"], "echo": r["n"]}), flush=True)
        held.clear()
"""


@pytest.fixture
def child(tmp_path):
    running = LineChild([sys.executable, "-c", CHILD], {}, tmp_path / "child.log", "the test child", 10, 5)
    yield running
    running.close()


def test_answers_in_any_order_reach_the_thread_that_asked(child):
    assert child.hello == {"ready": True}
    results: dict[int, str] = {}

    def ask(n: int) -> None:
        results[n] = child.ask_raw({"n": n}, timeout=10)

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
        time.sleep(0.02)  # sent in order, so the child pairs them up as it reads them
    for thread in threads:
        thread.join(20)
    assert {n: f'"echo": {n}}}' in answer for n, answer in results.items()} == {n: True for n in range(8)}


def test_a_timeout_ends_the_child_and_every_waiting_thread_hears_it(child):
    errors: list[Exception] = []

    def wait_forever() -> None:
        try:
            child.ask_raw({"n": 1}, timeout=30)  # never paired: its answer never comes
        except PlannerError as error:
            errors.append(error)

    waiting = threading.Thread(target=wait_forever)
    waiting.start()
    time.sleep(0.2)
    with pytest.raises(PlannerTimeout):
        child.ask_raw({"hang": True, "n": 2}, timeout=0.3)
    waiting.join(10)
    assert not waiting.is_alive() and len(errors) == 1 and "exited" in str(errors[0])
    assert not child.alive
    with pytest.raises(PlannerError, match="not running"):
        child.ask_raw({"n": 3}, timeout=1)
