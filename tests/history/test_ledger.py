"""The run id of a past run: a UUIDv7 whose time is the run's start and whose other bits come
from its run key, the same in every process (no database needed)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta, timezone

from planlineage.history.ledger import run_id_for

START = datetime(2026, 3, 1, 8, 0, 0, 123000, tzinfo=UTC)


def test_a_past_runs_id_is_a_uuid7_of_its_start_and_key():
    run_id = run_id_for("streampark:app=100001:log=7", START)
    value = uuid.UUID(run_id)
    assert value.version == 7 and value.variant == uuid.RFC_4122
    assert value.int >> 80 == int(START.timestamp() * 1000)
    assert run_id_for("streampark:app=100001:log=7", START) == run_id  # deterministic
    assert run_id_for("streampark:app=100001:log=8", START) != run_id
    # the same moment in another zone is the same run; a naive time is read as UTC
    assert run_id_for("streampark:app=100001:log=7", START.astimezone(timezone(timedelta(hours=8)))) == run_id
    assert run_id_for("streampark:app=100001:log=7", START.replace(tzinfo=None)) == run_id


def test_past_run_ids_sort_by_start():
    ids = [run_id_for(f"dinky:instance={n}", START + timedelta(minutes=n)) for n in (9, 1, 5)]
    assert sorted(ids) == [ids[1], ids[2], ids[0]]
