"""What a real compile server answers fits the protocol's records (planner.protocol), on success
and on failure."""

from __future__ import annotations

from planlineage import script
from planlineage.planner import protocol
from planlineage.planner.request import build_request


def keys_fit(record: dict, kind: type) -> None:
    assert set(record) <= set(kind.__annotations__), (kind.__name__, set(record) - set(kind.__annotations__))
    assert kind.__required_keys__ <= set(record), (kind.__name__, kind.__required_keys__ - set(record))


def answer_to(planner, sql: str) -> dict:
    return planner.compile(build_request(script.split(sql), planner.provisioned, [])[0])


def test_an_answer_is_a_compile_answer(planner):
    answer = answer_to(
        planner,
        "CREATE TABLE s (a INT) WITH ('connector' = 'datagen');\n"
        "CREATE TABLE o (a INT) WITH ('connector' = 'blackhole');\n"
        "INSERT INTO o SELECT a FROM s;",
    )
    assert answer["ok"] and answer["plan"]["nodes"]
    keys_fit(answer, protocol.CompileAnswer)
    keys_fit(answer["timings"], protocol.Timings)


def test_a_refusal_is_a_compile_answer_with_its_error(planner):
    answer = answer_to(
        planner,
        "CREATE TABLE s (a INT) WITH ('connector' = 'datagen');\n"
        "CREATE TABLE o (a INT) WITH ('connector' = 'blackhole');\n"
        "INSERT INTO o SELECT missing FROM s;",
    )
    assert not answer["ok"] and answer["error"]["statement"] == 2
    keys_fit(answer, protocol.CompileAnswer)
    keys_fit(answer["error"], protocol.CompileError)
