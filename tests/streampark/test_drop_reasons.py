"""The watcher says why a run was dropped (issue #38): the reason abandon_lineage kept in the
store, not a guess that the SQL did not compile.  Real StreamPark databases, recorded planner."""

from __future__ import annotations

from console import FINISHED, RUNNING
from lineages import BROKEN, ONE_SINK

from planlineage.lifecycle import drop_reasons

#: Dinky's quick-start shape: tables and no INSERT, so it compiles and names no table.
NO_TABLE = ONE_SINK.rsplit("INSERT", 1)[0]


def test_a_job_that_compiles_but_names_no_table_is_not_said_to_have_failed_compiling(streampark, watch, gravitino):
    sp = streampark("dev")
    c = sp.console
    watch.recorded()
    app = c.create_app("quickstart", NO_TABLE)
    watch.once(sp.url)
    c.start(app)
    c.set_state(app, RUNNING)
    result = watch.once(sp.url)
    said = f"flink:{app} quickstart: run dropped: it names no table planlineage can name"
    assert said in result.stderr, result.stderr
    assert "did not compile" not in result.stderr
    c.set_state(app, FINISHED)
    again = watch.once(sp.url)
    assert "run dropped" not in again.stderr  # said once: the reason was taken from the store
    assert gravitino.events == []


def test_a_job_that_does_not_compile_says_the_planners_reason(streampark, watch, gravitino):
    sp = streampark("dev")
    c = sp.console
    watch.recorded()
    app = c.create_app("broken", BROKEN)
    watch.once(sp.url)
    c.start(app)
    c.set_state(app, RUNNING)
    result = watch.once(sp.url)
    assert f"flink:{app} broken: run dropped: its SQL did not compile: " in result.stderr
    assert "SQL parse failed" in result.stderr  # the planner's own words, not "see the log"


def test_the_phrases_a_watcher_says():
    assert drop_reasons.phrase("the job writes no table planlineage can name (no INSERT?): x") == (
        "it names no table planlineage can name (nothing is reported)"
    )
    big = "ScriptTooLarge: the script is 4,000,000 bytes, over the limit of 1,000,000 bytes (lineage.max-script-bytes)"
    assert drop_reasons.phrase(big).startswith("its script is over the size cap: the script is 4,000,000 bytes")
    assert drop_reasons.phrase("ExtractError: SQL parse failed") == "its SQL did not compile: SQL parse failed"
    assert drop_reasons.phrase("the compile died twice; not reported") == "its compile died twice (nothing is reported)"
