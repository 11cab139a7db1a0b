"""What the recorder reads from the gateway's answers, checked on answers the real SQL Gateways gave
(Flink 2.3.0 and 1.20, REST v1 to v4, recorded in real_answers.json), and the test gateway's
answers have the same shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planlineage.gateway import answers

REAL = json.loads((Path(__file__).with_name("real_answers.json")).read_text())
CASES = [(flink, name, call) for flink, calls in REAL.items() for name, call in calls.items()]


def _body(call) -> bytes:
    return json.dumps(call["body"]).encode()


@pytest.mark.parametrize(("flink", "name", "call"), CASES, ids=[f"{f}:{n}" for f, n, _ in CASES])
def test_the_job_id_of_a_real_answer(flink, name, call):
    found = answers.job_id(_body(call))
    if name.endswith("fetch0") and ("INSERT" in name or "SELECT" in name):
        assert found == call["body"]["jobID"]  # an INSERT's and a SELECT's result both name their job
        assert len(found) == 32
    else:
        assert found is None


def test_the_v1_one_row_result_without_jobID_names_the_job():
    real = REAL["2.3.0"]["v1 INSERT INTO snk SELE fetch0"]["body"]
    older = {key: value for key, value in real.items() if key != "jobID"}  # Flink 1.16's v1 answer
    assert answers.job_id(json.dumps(older).encode()) == real["jobID"]


def test_the_version_and_handles_of_real_answers():
    assert answers.flink_version(_body(REAL["2.3.0"]["GET /v1/info"])) == "2.3.0"
    assert answers.flink_version(_body(REAL["1.20"]["GET /v1/info"])).startswith("1.20.")
    assert answers.text_field(_body(REAL["2.3.0"]["v3 open"]), "sessionHandle")
    assert answers.text_field(_body(REAL["1.20"]["v2 INSERT INTO snk SELE submit"]), "operationHandle")


@pytest.mark.parametrize("body", [b"", b"\x00\xff", b"[1, 2]", b'{"jobID": 7}', b'{"jobID": "not-a-job"}', b"{" * 5000])
def test_what_cannot_be_read_reads_as_nothing(body):
    assert answers.job_id(body) is None


def test_the_test_gateway_answers_in_the_real_shape(upstream, client_of):
    client = client_of(upstream.url, "v3")
    session = client.open()
    insert, create = client.run(session, "INSERT INTO t SELECT 1"), client.run(session, "CREATE TABLE t (x INT)")
    real = REAL["2.3.0"]
    assert set(client.fetch(session, insert)) == set(real["v3 INSERT INTO snk SELE fetch0"]["body"])
    assert set(client.fetch(session, create)) == set(real["v3 CREATE TABLE src (x  fetch0"]["body"])
    assert set(client.fetch(session, insert)["results"]) == set(
        real["v3 INSERT INTO snk SELE fetch0"]["body"]["results"]
    )
