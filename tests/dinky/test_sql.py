"""Dinky's own syntax resolved before compiling (planlineage.dinky.sql), without a database."""

from __future__ import annotations

import pytest

from planlineage.dinky.sql import Unsupported, prepare, strip_hash_comments


def test_definitions_use_earlier_ones_and_win_over_global_variables():
    script = "db := shop;\ntopic := ${db}.orders;\nINSERT INTO t SELECT * FROM `${topic}` WHERE r = '${region}';\n"
    prepared = prepare(script, {"region": "eu", "topic": "global_topic"})
    assert prepared.sql == "INSERT INTO t SELECT * FROM `shop.orders` WHERE r = 'eu';\n"


def test_with_the_fragment_switch_off_nothing_is_substituted():
    script = "INSERT INTO t SELECT '${region}';"
    assert prepare(script, None).sql == "INSERT INTO t SELECT '${region}';\n"


def test_a_placeholder_without_a_value_or_an_expression_is_never_guessed():
    with pytest.raises(Unsupported, match=r"\$\{region\} has no value"):
        prepare("INSERT INTO t SELECT '${region}';", {})
    with pytest.raises(Unsupported, match=r"\$\{date.now\(\)\} has no value"):
        prepare("INSERT INTO t SELECT '${date.now()}';", {"date": "x"})


def test_hash_lines_are_comments_outside_quoted_strings_only():
    text = "# a comment\nCREATE TABLE t (a INT) WITH ('k' = 'v\n# kept: inside a string\n');\n  # indented\n"
    stripped = strip_hash_comments(text)
    assert "# a comment" not in stripped and "# indented" not in stripped
    assert "# kept: inside a string" in stripped
    assert stripped.count("\n") == text.count("\n")  # line numbers stay


def test_a_quote_in_a_comment_opens_no_string_for_hash_lines():
    """Quotes are read as the splitter reads them: an apostrophe in a `--` comment (a team's
    note) left every later `#` line in the script unstripped, and the script unreadable."""
    text = "-- the team's job\n# Dinky's comment\nINSERT INTO o SELECT 1;\n/* a\n# kept: in a block */\n"
    stripped = strip_hash_comments(text)
    assert "# Dinky's comment" not in stripped and "# kept: in a block" in stripped
    assert stripped.count("\n") == text.count("\n")


@pytest.mark.parametrize(
    "statement, what",
    [
        ("EXECUTE CDCSOURCE sync WITH ('connector' = 'mysql-cdc')", "whole-database sync"),
        ("execute jar with ('uri' = 'rs:/app.jar', 'main-class' = 'a.B')", "a jar's own main class"),
    ],
)
def test_statements_that_decide_their_tables_at_run_time_stop_the_report(statement, what):
    with pytest.raises(Unsupported, match=what) as raised:
        prepare(f"CREATE TABLE t (a INT);\n{statement};\nINSERT INTO t SELECT 1;", {})
    assert "line 2:" in str(raised.value)


def test_jars_print_and_add_file(tmp_path):
    jar = tmp_path / "udf.jar"
    jar.write_bytes(b"PK")
    script = (
        f"ADD CUSTOMJAR '{jar}';\nadd jar '/nowhere/x.jar';\nADD FILE '/tmp/conf.yaml';\n"
        "PRINT t;\nINSERT INTO t SELECT 1;"
    )
    prepared = prepare(script, None)
    assert prepared.sql == "INSERT INTO t SELECT 1;\n"
    assert prepared.jars == [str(jar)]
    assert prepared.warnings == [
        "`add jar '/nowhere/x.jar'`: the jar is not readable here (compiled without it; a connector or UDF it "
        "holds may fail the compile)"
    ]
