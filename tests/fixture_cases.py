"""Which plan fixture cases a Flink version can state: `since` in tests/fixtures/expected.json names
the first version whose parser reads a case's SQL (CREATE TABLE ... AS SELECT: 1.16)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SINCE: dict[str, str] = json.loads((Path(__file__).parent / "fixtures" / "expected.json").read_text())["since"]


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def before(minor: str, first: str) -> bool:
    """Whether Flink ``minor`` is older than ``first`` (the version a feature arrived in)."""
    return version_key(minor) < version_key(first)


def lacks(minor: str, case: str) -> str | None:
    """Why the version has no fixture of the case (None: it has one)."""
    first = SINCE.get(case)
    if first is not None and before(minor, first):
        return f"Flink {minor} cannot state case {case}: its SQL needs Flink {first}+"
    return None


def param(minor: str, case: str):
    """A (minor, case) test parameter, skipped with the reason where the version lacks the case."""
    reason = lacks(minor, case)
    marks = [pytest.mark.skip(reason=reason)] if reason else []
    return pytest.param(minor, case, id=f"{minor}-{case}", marks=marks)
