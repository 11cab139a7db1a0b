import time

import pytest

from planlineage.errors import ScriptError
from planlineage.script import Kind, runtime_mode, split


def kinds(text):
    return [(s.kind, s.line) for s in split(text)]


def test_comments_and_strings_with_semicolons_do_not_split():
    text = (
        "-- a comment; with a semicolon\n"
        "CREATE TABLE a (x STRING COMMENT 'has ; inside') WITH ('connector' = 'kafka' /* c; */);\n"
        "/* block ; comment */ INSERT INTO b SELECT 'x;y' FROM a;\n"
    )
    statements = split(text)
    assert [s.kind for s in statements] == [Kind.DDL, Kind.INSERT]
    assert statements[0].line == 2 and statements[1].line == 3
    assert statements[0].sql.endswith("/* c; */)")
    assert statements[1].sql == "INSERT INTO b SELECT 'x;y' FROM a"


def test_doubled_quotes_and_backticks_escape_themselves():
    statements = split("INSERT INTO `we``ird;name` SELECT 'it''s; fine' FROM t; SELECT 1")
    assert [s.kind for s in statements] == [Kind.INSERT, Kind.QUERY]
    assert statements[0].sql == "INSERT INTO `we``ird;name` SELECT 'it''s; fine' FROM t"


def test_optimizer_hints_are_kept():
    (statement,) = split("insert into b select * from a /*+ OPTIONS('topic'='x;y') */;")
    assert "/*+ OPTIONS('topic'='x;y') */" in statement.for_planner()


def test_mixed_case_keywords():
    assert kinds("InSeRt InTo b SeLeCt 1;\nexecute statement set begin insert into b select 1; end;") == [
        (Kind.INSERT, 1),
        (Kind.STATEMENT_SET, 2),
    ]


def test_execute_statement_set_is_one_statement():
    text = (
        "EXECUTE STATEMENT SET\nBEGIN\n  INSERT INTO a SELECT 1; -- one; \n"
        "  INSERT INTO b SELECT 2;\nEND;\nINSERT INTO c SELECT 3;"
    )
    statements = split(text)
    assert [s.kind for s in statements] == [Kind.STATEMENT_SET, Kind.INSERT]
    assert statements[0].sql.startswith("EXECUTE STATEMENT SET") and statements[0].sql.endswith("END")
    assert statements[1].line == 6


def test_statement_set_without_final_semicolon():
    (statement,) = split("EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1; INSERT INTO b SELECT 2; END")
    assert statement.kind is Kind.STATEMENT_SET


def test_sql_client_statement_set_markers():
    assert [k for k, _ in kinds("BEGIN STATEMENT SET;\nINSERT INTO a SELECT 1;\nEND;")] == [
        Kind.STATEMENT_SET_MARKER,
        Kind.INSERT,
        Kind.STATEMENT_SET_MARKER,
    ]


@pytest.mark.parametrize(
    "text,pair",
    [
        ("SET 'execution.runtime-mode' = 'batch'", ("execution.runtime-mode", "batch")),
        ("SET execution.runtime-mode = batch", ("execution.runtime-mode", "batch")),
        ("set pipeline.name=my job", ("pipeline.name", "my job")),
        ("SET 'pipeline.name' = 'it''s'", ("pipeline.name", "it's")),
    ],
)
def test_set_forms_are_normalised(text, pair):
    (statement,) = split(text)
    assert statement.kind is Kind.SET and statement.set_pair == pair
    key, value = pair
    assert statement.for_planner() == f"SET '{key}' = '{value.replace(chr(39), chr(39) * 2)}'"


def test_bare_set_is_not_executed():
    assert kinds("SET;") == [(Kind.INSPECT, 1)]


@pytest.mark.parametrize(
    "text,kind",
    [
        ("RESET 'table.exec.state.ttl'", Kind.RESET),
        ("ADD JAR '/tmp/x.jar'", Kind.ADD_JAR),
        ("INSERT OVERWRITE t SELECT 1", Kind.INSERT),
        ("INSERT INTO t (a, b) SELECT 1, 2", Kind.INSERT),
        ("EXECUTE INSERT INTO t SELECT 1", Kind.INSERT),
        ("CREATE TABLE t WITH ('connector'='print') AS SELECT 1 AS x", Kind.CTAS),
        ("CREATE OR REPLACE TABLE t AS SELECT * FROM s", Kind.CTAS),
        ("CREATE TEMPORARY TABLE t (a INT) WITH ('connector'='datagen')", Kind.DDL),
        ("CREATE TABLE t (a AS b) WITH ('k' = 'AS SELECT')", Kind.DDL),
        ("CREATE TABLE t2 LIKE t1 (EXCLUDING OPTIONS)", Kind.DDL),
        ("CREATE VIEW v AS SELECT 1", Kind.DDL),
        ("CREATE FUNCTION f AS 'com.acme.F'", Kind.DDL),
        ("USE CATALOG c", Kind.DDL),
        ("USE db", Kind.DDL),
        ("ALTER TABLE t SET ('topic' = 'x')", Kind.DDL),
        ("DROP TABLE IF EXISTS t", Kind.DDL),
        ("CREATE CATALOG c WITH ('type' = 'generic_in_memory')", Kind.DDL),
        ("SELECT * FROM t", Kind.QUERY),
        ("WITH x AS (SELECT 1) SELECT * FROM x", Kind.QUERY),
        ("EXPLAIN PLAN FOR SELECT 1", Kind.INSPECT),
        ("SHOW TABLES", Kind.INSPECT),
        ("DESCRIBE t", Kind.INSPECT),
        ("DESC t", Kind.INSPECT),
    ],
)
def test_classification(text, kind):
    (statement,) = split(text + ";")
    assert statement.kind is kind


def test_comment_only_pieces_are_dropped_and_lines_count_from_code():
    statements = split("\n\n-- only a comment;\n/* and\n another */\n\n  SELECT 1;\n;\n")
    assert [(s.kind, s.line) for s in statements] == [(Kind.QUERY, 7)]


def test_unterminated_string_names_its_line():
    with pytest.raises(ScriptError) as raised:
        split("SELECT 1;\nINSERT INTO t SELECT 'oops;\n")
    assert raised.value.line == 2


def test_runtime_mode_is_the_last_set():
    assert runtime_mode(split("SET 'execution.runtime-mode' = 'batch'; INSERT INTO t SELECT 1;")) == "batch"
    assert (
        runtime_mode(split("SET execution.runtime-mode = BATCH; SET execution.runtime-mode=streaming;")) == "streaming"
    )
    assert runtime_mode(split("SET 'execution.runtime-mode' = 'batch'; RESET 'execution.runtime-mode';")) == "streaming"
    assert runtime_mode(split("INSERT INTO t SELECT 1;")) == "streaming"


def _statements(count: int) -> str:
    parts = ["CREATE TABLE src (a INT, b STRING) WITH ('connector' = 'datagen');\n"]
    for i in range(count):
        parts.append(f"-- statement {i}\nINSERT INTO snk_{i} /* sink */ SELECT a, 'v;{i}' FROM src WHERE b <> 'x';\n")
    return "".join(parts)


def _best_time(run, times: int = 3) -> float:
    best = float("inf")
    for _ in range(times):
        began = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - began)
    return best


@pytest.mark.parametrize(
    ("make", "small", "large", "last"),
    [
        # statements (each one's line was counted from the script's start): 20,001 of them, the
        # last on line 40,001
        (_statements, 2_000, 20_000, (20_001, 40_001)),
        # one statement set of 5,000 INSERTs (the whole set was joined again at each of its ';')
        (
            lambda n: "EXECUTE STATEMENT SET BEGIN\n" + "INSERT INTO s SELECT a FROM t;\n" * n + "END;\n",
            500,
            5_000,
            (1, 1),
        ),
    ],
    ids=["statements", "statement-set"],
)
def test_splitting_is_linear_in_the_script(make, small, large, last):
    """Ten times the script takes about ten times as long (it took 45-100 times: 20,000 statements
    16 s), measured against the same machine's small script so that a busy machine is no failure."""
    small_script, large_script = make(small), make(large)
    statements = split(large_script)
    assert (len(statements), statements[-1].line) == last
    took_small = _best_time(lambda: split(small_script))
    took_large = _best_time(lambda: split(large_script), 2)
    assert took_large < 30 * took_small + 0.2, (took_small, took_large)
