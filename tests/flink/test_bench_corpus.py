"""The benchmark corpus' expected lineage is what the real planner of this version finds.

One job of every shape (bench/corpus.py), so the table the benchmark prints ("right") is checked
against Flink itself on every version, not only on the one the benchmark ran.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from fixture_cases import before

from planlineage.pipeline import extract

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "bench"))

import corpus

ONE_OF_EACH = list(corpus.generate(len(corpus.SHAPES), seed=7).items())


@pytest.mark.parametrize("name,job", ONE_OF_EACH, ids=[name for name, _ in ONE_OF_EACH])
def test_corpus_shape_compiles_to_its_expected_lineage(planner, provisioned, name, job):
    if "ctas" in name and before(provisioned.flink.minor, "1.16"):
        pytest.skip("CREATE TABLE AS SELECT exists from Flink 1.16")
    script, expected = job
    lineage = extract(script, planner=planner)
    found = {s.table.rsplit(".", 1)[1]: sorted({i.table.rsplit(".", 1)[1] for i in s.inputs}) for s in lineage.sinks}
    assert found == expected
