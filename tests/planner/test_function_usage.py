"""What a stand-in function must look like, read from the SQL text alone (no JVM)."""

from planlineage import script
from planlineage.planner.function_usage import function_hints


def hints(text):
    return function_hints([s.for_planner() for s in script.split(text)])


def test_kinds_from_usage():
    found = hints(
        "CREATE FUNCTION f AS 'a.F'; CREATE TEMPORARY SYSTEM FUNCTION `g` AS 'a.G';"
        "CREATE FUNCTION cat.db.t AS 'x.T' LANGUAGE PYTHON; CREATE FUNCTION h AS 'a.H';"
        "CREATE FUNCTION o AS 'a.O';"
        "INSERT INTO x SELECT k, g(v), f(k), SUM(h(v)), o(v) OVER (PARTITION BY k ORDER BY p) FROM s, "
        "LATERAL TABLE(t(k, 'a,b')) AS T(a, b, c) GROUP BY k, f(k);"
    )
    assert {name: h["kind"] for name, h in found.items()} == {
        "f": "scalar",  # only grouped columns
        "g": "aggregate",  # an ungrouped column in a grouped select list
        "t": "table",
        "h": "scalar",  # the argument of a built-in aggregate is per row
        "o": "aggregate",  # OVER
    }
    assert found["t"]["fields"] == ["STRING", "STRING", "STRING"]


def test_the_insert_of_a_statement_set_are_read_one_by_one():
    found = hints(
        "CREATE FUNCTION f AS 'a.F';"
        "EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT f(x) FROM s WHERE y > 1;"
        " INSERT INTO b SELECT k, COUNT(*) FROM s GROUP BY k; END;"
    )
    assert found["f"]["kind"] == "scalar"


def test_types_from_cast_and_conditions():
    found = hints(
        "CREATE FUNCTION f AS 'a.F'; CREATE FUNCTION ok AS 'a.Ok'; CREATE FUNCTION n AS 'a.N';"
        "INSERT INTO a SELECT CAST(f(x, 'it''s') AS DECIMAL(10, 2)), n(x) FROM s WHERE NOT ok(x) AND n(x) = 'a';"
    )
    assert (found["f"]["type"], found["ok"]["type"], found["n"]["type"]) == ("DECIMAL(10, 2)", "BOOLEAN", None)


def test_compile_plan_carries_its_insert_or_statement_set():
    statements = script.split(
        "COMPILE PLAN '/tmp/p;x.json' IF NOT EXISTS FOR INSERT INTO a SELECT * FROM b;\n"
        "compile /* why */ and execute plan 'f.json' FOR STATEMENT SET BEGIN INSERT INTO a SELECT 1;"
        " INSERT INTO c SELECT 2; END;\n"
        "EXECUTE PLAN 'x';\n"
    )
    assert [(s.kind, s.line, s.for_planner()) for s in statements] == [
        (script.Kind.INSERT, 1, "INSERT INTO a SELECT * FROM b"),
        (
            script.Kind.STATEMENT_SET,
            2,
            "EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1; INSERT INTO c SELECT 2; END",
        ),
        (script.Kind.PLAN_FILE, 3, "EXECUTE PLAN 'x'"),
    ]
