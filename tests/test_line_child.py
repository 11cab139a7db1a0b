"""LineChild: answers reach the thread that asked, in whatever order the child writes them."""

from __future__ import annotations

import json
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

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


# Answers each request at once (as a one-thread JVM does), with chatter and a stray message before
# it; "size" pads the answer, "hang" is never answered, "exit" ends the child mid-answer.
IN_TURN_CHILD = r"""
import json, sys
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    if request.get("hang"):
        continue
    print("a JVM's chatter", flush=True)
    print(json.dumps({"id": -1, "stray": True}), flush=True)
    if request.get("exit"):
        sys.stdout.write('{"id": ' + str(request["id"]) + ', "cut')
        sys.stdout.flush()
        sys.exit(3)
    print(json.dumps({"id": request["id"], "echo": request["n"], "pad": "x" * request.get("size", 0)}), flush=True)
"""


@pytest.fixture
def in_turn(tmp_path):
    running = LineChild([sys.executable, "-c", IN_TURN_CHILD], {}, tmp_path / "c.log", "a child", 10, 5, in_turn=True)
    try:
        yield running
    finally:
        running.close()


def test_in_turn_each_asker_reads_its_own_answer(in_turn):
    def echoes(n: int) -> list[int]:
        return [json.loads(in_turn.ask_raw({"n": n}, timeout=10))["echo"] for _ in range(20)]

    with ThreadPoolExecutor(4) as pool:  # four threads asking at once take turns
        assert list(pool.map(echoes, range(4))) == [[n] * 20 for n in range(4)]


def test_in_turn_a_long_answer_arrives_whole(in_turn):
    assert in_turn.hello == {"ready": True}  # read by the constructor, in turn too
    answer = json.loads(in_turn.ask_raw({"n": 1, "size": 300_000}, timeout=10))  # several pipe reads
    assert answer["echo"] == 1 and len(answer["pad"]) == 300_000
    assert json.loads(in_turn.ask_raw({"n": 2}, timeout=10))["echo"] == 2  # nothing left over


def test_in_turn_a_timeout_ends_the_child_and_the_next_in_line_hears_it(in_turn):
    errors: list[Exception] = []

    def next_in_line() -> None:
        time.sleep(0.1)  # the hanging request has the turn
        try:
            in_turn.ask_raw({"n": 1}, timeout=30)
        except PlannerError as error:
            errors.append(error)

    waiting = threading.Thread(target=next_in_line)
    waiting.start()
    with pytest.raises(PlannerTimeout):
        in_turn.ask_raw({"hang": True, "n": 2}, timeout=0.5)
    waiting.join(10)
    assert not waiting.is_alive() and len(errors) == 1 and "not running" in str(errors[0])
    assert not in_turn.alive


def test_in_turn_a_child_that_dies_mid_answer_is_reported(in_turn):
    with pytest.raises(PlannerError, match=r"exited \(code 3\)"):
        in_turn.ask_raw({"n": 1, "exit": True}, timeout=10)
