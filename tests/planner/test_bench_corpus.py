"""The benchmark corpus: enough scripts, every shape, reproducible, expected lineage well formed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "bench"))

import corpus

from planlineage import script as sql_script


def test_corpus_is_large_reproducible_and_covers_every_shape(tmp_path):
    jobs = corpus.generate()
    assert len(jobs) >= 150
    assert jobs == corpus.generate()  # seeded: the same corpus in every run
    assert {name.split("-", 1)[1][: -len(".sql")] for name in jobs} == {shape.__name__ for shape in corpus.SHAPES}
    expected = corpus.write(tmp_path / "c")
    assert json.loads((tmp_path / "c" / "expected.json").read_text()) == expected
    assert len(list((tmp_path / "c").glob("*.sql"))) == len(jobs)


def test_every_script_splits_and_every_expected_sink_is_written_by_it():
    for name, (script, expected) in corpus.generate().items():
        statements = sql_script.split(script)
        written = " ".join(s.sql for s in statements if s.kind in sql_script.SINKS)
        for sink, inputs in expected.items():
            assert sink in written, name
            assert inputs and all(i in script for i in inputs), name
