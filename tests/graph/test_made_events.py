"""The live page's events made from scripts and extract documents (doctor.inputs) stay on the page
whatever happens to the event files read beside them: appended to (read on), replaced (read again
from the start)."""

from __future__ import annotations

import json

from planlineage.graph.live import LiveGraph


def _event(job: str, source: str, target: str) -> dict:
    return {
        "eventType": "START",
        "eventTime": "2026-12-01T10:00:00Z",
        "producer": "https://github.com/planlineage/planlineage",
        "run": {"runId": "01890000-0000-7000-8000-000000000001", "facets": {}},
        "job": {"namespace": "default", "name": job},
        "inputs": [{"namespace": "kafka://k:9092", "name": source}],
        "outputs": [{"namespace": "kafka://k:9092", "name": target}],
    }


def _jobs(live: LiveGraph) -> set[str]:
    assert live.graph is not None
    return {name for _, name in live.graph.jobs}


def test_made_events_stay_when_a_file_grows_and_when_it_is_replaced(tmp_path):
    log = tmp_path / "events.jsonl"
    log.write_text(json.dumps(_event("from_log", "a", "b")) + "\n", encoding="utf-8")
    live = LiveGraph(files=[str(log)], events=[_event("from_script", "b", "c")])

    assert live.refresh()
    assert _jobs(live) == {"from_log", "from_script"}

    with log.open("a", encoding="utf-8") as handle:  # appended: read on from the offset
        handle.write(json.dumps(_event("appended", "c", "d")) + "\n")
    assert live.refresh()
    assert _jobs(live) == {"from_log", "from_script", "appended"}

    replaced = tmp_path / "rolled.jsonl"  # another inode: every input read again from its start
    replaced.write_text(json.dumps(_event("after_roll", "a", "b")) + "\n", encoding="utf-8")
    replaced.replace(log)
    assert live.refresh()
    assert _jobs(live) == {"from_script", "after_roll"}


def test_made_events_alone_are_a_page(tmp_path):
    live = LiveGraph(events=[_event("from_script", "b", "c")])
    assert live.refresh()
    assert _jobs(live) == {"from_script"}
    assert not live.refresh()  # nothing to look at changes: the page stays as it is
