"""docs/credentials.md, one test per row: each credential form a job, a failure or another
producer's event may carry, written into a real lifecycle run (submit, state, flush through fresh
processes, the recorded planner, the test server), and looked for everywhere planlineage writes or
shows: the events sent, their SQL facet, `extract`'s output, the state store's rows (SQLite and,
when PostgreSQL is installed, a PostgreSQL store), the files of the home, `graph`'s page and
`doctor`'s report (both also reading another producer's raw event)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from lifecycle_helpers import Cli
from recorded_planner import case_sql

SINK = "default_catalog.default_database.out_b"  # the planned JDBC sink of regular_join


@dataclass(frozen=True)
class Form:
    id: str
    secret: str
    sql: str = ""  # in the submitted script: a table the plan does not use, a SET, a comment
    sink: dict[str, str] = field(default_factory=dict)  # options of the planned sink (what the registry reads)
    other: str = ""  # another producer's SQL facet only (graph and doctor read it)
    error: str = ""  # a failure reported with `state --error`
    # the parts of a password split by a special character (`@`, `,`, `?`, `#`, `'`): none may be
    # left anywhere, on either side of that character
    fragments: tuple[str, ...] = ()


def _s(slug: str) -> str:
    return f"FAKE-{slug}-s3cr3t-only"


def _table(name: str, options: str) -> str:
    return f"CREATE TABLE {name} (id BIGINT) WITH ('connector' = 'jdbc', 'table-name' = 't', {options});\n"


JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="{}";'
FORMS = [
    Form("password-option", _s("pw"), _table("c1", f"'url' = 'jdbc:mysql://db:3306/x', 'password' = '{_s('pw')}'")),
    Form(
        "sasl-jaas-config",
        _s("jaas"),
        _table("c2", f"'url' = 'jdbc:mysql://db:3306/x', 'properties.sasl.jaas.config' = '{JAAS.format(_s('jaas'))}'"),
        sink={"properties.sasl.jaas.config": JAAS.format(_s("jaas"))},
    ),
    Form("secret-key-option", _s("s3key"), _table("c3", f"'url' = 'x', 's3.secret-key' = '{_s('s3key')}'")),
    Form(
        "token-option",
        _s("bearer"),
        _table("c4", f"'url' = 'x', 'avro-confluent.bearer-auth.token' = '{_s('bearer')}'"),
    ),
    Form(
        "user-info-option",
        _s("userinfo"),
        _table("c5", f"'url' = 'x', 'avro-confluent.basic-auth.user-info' = 'u:{_s('userinfo')}'"),
    ),
    Form(
        "azure-account-key",
        _s("azkey"),
        f"SET 'fs.azure.account.key.acct.dfs.core.windows.net' = '{_s('azkey')}';\n",
        sink={"fs.azure.account.key.acct.dfs.core.windows.net": _s("azkey")},
    ),
    Form(
        "azure-connection-string",
        _s("azconn"),
        _table(
            "c7",
            "'url' = 'x', 'azure.connection-string' = "
            f"'DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={_s('azconn')};EndpointSuffix=core.windows.net'",
        ),
    ),
    Form(
        "azure-sas-option",
        _s("sasopt"),
        f"SET fs.azure.sas.cont.acct.blob.core.windows.net = sv=2022-11-02&sr=c&sig={_s('sasopt')};\n",
    ),
    Form(
        "sas-query-parameter",
        _s("sig"),
        "CREATE TABLE c9 (id BIGINT) WITH ('connector' = 'filesystem', 'format' = 'csv', "
        f"'path' = 'abfss://c@acct.dfs.core.windows.net/data?sv=2022-11-02&sp=r&sig={_s('sig')}');\n",
    ),
    Form(
        "pulsar-authparams",
        _s("pulsar"),
        "CREATE TABLE c10 (id BIGINT) WITH ('connector' = 'pulsar', 'topics' = 't', "
        f"'pulsar.client.authParams' = 'token:{_s('pulsar')}');\n",
        sink={"pulsar.client.authParams": f'{{"token":"{_s("pulsar")}"}}'},
    ),
    Form("url-userinfo", _s("userpw"), _table("c11", f"'url' = 'jdbc:mysql://app:{_s('userpw')}@db:3306/x'")),
    Form(
        "url-password-unencoded-at",
        _s("at"),
        _table("c12", f"'url' = 'jdbc:mysql://app:FRAGat1@{_s('at')}@db:3306/x'"),
        sink={"url": f"jdbc:postgresql://app:FRAGat2@{_s('at')}@pg:5432/dw"},
        fragments=("FRAGat1", "FRAGat2"),
    ),
    Form(
        "url-password-unencoded-comma",
        _s("comma"),
        _table("c13", f"'url' = 'jdbc:mysql://app:FRAGcomma1,{_s('comma')}:FRAGcomma2@db:3306/x'"),
        fragments=("FRAGcomma1", "FRAGcomma2"),
    ),
    Form(
        "url-password-unencoded-comma-digits",
        "918273,645546",
        _table("c13d", "'url' = 'jdbc:mysql://app:918273,645546@db:3306/x'"),
        fragments=("918273", "645546"),
    ),
    Form(
        "url-password-question-or-hash",
        _s("qh"),
        _table("c13q", f"'url' = 'jdbc:mysql://app:FRAGq1?{_s('qh')}@db:3306/x'")
        + _table("c13h", f"'url' = 'jdbc:mysql://app:FRAGh1#{_s('qh')}@db:3306/x'"),
        fragments=("FRAGq1", "FRAGh1"),
    ),
    Form(
        "url-password-quote",
        _s("quote"),
        _table("c13s", f"'url' = 'jdbc:mysql://app:FRAGquote1''{_s('quote')}@db:3306/x'"),
        fragments=("FRAGquote1",),
    ),
    Form(
        "url-mysql-address-list",
        _s("addr"),
        _table("c13a", f"'url' = 'jdbc:mysql://(host=db,port=3306,user=app,password={_s('addr')})/x'"),
    ),
    Form(
        "url-query-password",
        _s("query"),
        _table("c14", f"'url' = 'jdbc:postgresql://db:5432/x?user=u&password={_s('query')}&ssl=true'"),
    ),
    Form(
        "url-semicolon-password",
        _s("mssql"),
        _table("c15", f"'url' = 'jdbc:sqlserver://db;user=u;password={_s('mssql')};databaseName=x'"),
    ),
    Form(
        "url-oracle-user-password",
        _s("oracle"),
        _table("c16", f"'url' = 'jdbc:oracle:thin:scott/{_s('oracle')}@db:1521/orcl'"),
    ),
    Form(
        "url-oracle-password-unencoded-at",
        _s("oracleat"),
        _table("c16a", f"'url' = 'jdbc:oracle:thin:scott/FRAGora1@{_s('oracleat')}@db:1521/orcl'"),
        fragments=("FRAGora1",),
    ),
    Form(
        "url-token-userinfo",
        _s("webtoken"),
        _table("c17", f"'url' = 'x', 'avro-confluent.url' = 'https://{_s('webtoken')}@registry.example.com'"),
    ),
    Form("set-quoted-value", _s("setq"), f"SET 'table.exec.token' = '{_s('setq')}';\n"),
    Form("set-unquoted-value", _s("setu"), f"SET fs.s3a.secret.key = first,{_s('setu')}(x);\n"),
    Form("comment-line", _s("comment"), f"-- the password for prod is {_s('comment')}\n"),
    Form("comment-block", _s("block"), f"/* token: {_s('block')} */\n"),
    Form(
        "spark-options",
        _s("spark"),
        other=f"CREATE TABLE t USING jdbc OPTIONS (url 'jdbc:postgresql://h/db', password '{_s('spark')}', dbtable 't')",
    ),
    Form(
        "spark-options-quoted-key",
        _s("sparkq"),
        other=f"CREATE TABLE t2 USING jdbc OPTIONS (url 'jdbc:x', \"password\"\n  '{_s('sparkq')}')",
    ),
    Form("comment-secret-before-separator", _s("commentsep"), f"-- password {_s('commentsep')} is rotated monthly\n"),
    Form("error-authorization", _s("auth"), error=f"request refused: Authorization: Bearer {_s('auth')}"),
]

SQL = "".join(f.sql for f in FORMS) + case_sql("regular_join")
SINK_OPTIONS = {k: v for f in FORMS for k, v in f.sink.items()}
ERROR = "; ".join(f.error for f in FORMS if f.error)


def _other_event() -> dict:
    """Another producer's COMPLETE event: the whole raw script and the Spark form in its SQL facet."""
    query = SQL + "\n" + "\n".join(f.other for f in FORMS if f.other)
    return {
        "eventType": "COMPLETE",
        "eventTime": "2026-01-01T00:00:00Z",
        "producer": "https://example.com/another-producer",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent",
        "run": {"runId": "01890000-0000-7000-8000-0000000000aa"},
        "job": {"namespace": "spark", "name": "copy", "facets": {"sql": {"query": query}}},
        "inputs": [{"namespace": "postgres://pg:5432", "name": "dw.public.out_b"}],
        "outputs": [{"namespace": "s3://bucket", "name": "copy"}],
    }


def _sqlite_rows(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return "\n".join(repr(row) for t in tables for row in conn.execute(f'SELECT * FROM "{t}"'))
    finally:
        conn.close()


def _lifecycle(tmp: Path, store_url: str | None) -> dict[str, str]:
    """One platform's day: submit, RUNNING, FAILED with the error forms; flush; extract; graph
    and doctor over the events received and another producer's."""
    from gravitino_server import GravitinoTestServer

    tmp.mkdir(parents=True)
    cli = Cli(tmp / "home", tmp)
    if store_url:
        cli.env["PLANLINEAGE_STORE"] = store_url
    sql_file = tmp / "job.sql"
    sql_file.write_text(cli.planner.record(SQL, "regular_join", {SINK: SINK_OPTIONS}), encoding="utf-8")
    seen: dict[str, str] = {}
    try:
        with GravitinoTestServer() as server:

            def run(*args: str) -> None:
                result = cli(*args)
                assert result.returncode == 0, result.stderr
                seen["output"] = seen.get("output", "") + (result.stdout + result.stderr).decode()
                cli.wait_workers(60)

            run("settings", "set", "lineage.address", server.address)
            run(*_submit_args("app-1", sql_file))
            run("state", "--app-id", "app-1", "--state", "RUNNING")
            run("state", "--app-id", "app-1", "--state", "FAILED", "--error", ERROR)
            run("flush")
            events = [json.loads(r.body) for r in server.requests if r.body]
            seen["events"] = "\n".join(r.body.decode() for r in server.requests)
        seen["sql facet"] = "\n".join(
            e["job"]["facets"]["sql"]["query"] for e in server.events if "sql" in e["job"].get("facets", {})
        )
        extract = cli("extract", str(sql_file), "--format", "json")
        assert extract.returncode == 0, extract.stderr
        seen["extract"] = (extract.stdout + extract.stderr).decode()
        seen["extract datasets"] = extract.stdout.decode()
        log = tmp / "events.jsonl"
        log.write_text("".join(json.dumps(e) + "\n" for e in [*server.events, _other_event()]), encoding="utf-8")
        page = tmp / "lineage.html"
        graph = cli("graph", "--events", str(log), "--state", "--out", str(page))
        assert graph.returncode == 0, graph.stderr
        seen["page"] = page.read_text(encoding="utf-8") + (graph.stdout + graph.stderr).decode()
        doctor = cli("doctor", "--events", str(log), "--state", "--format", "json")
        seen["doctor"] = (doctor.stdout + doctor.stderr).decode()
        if store_url:
            from databases import all_rows

            seen["store rows"] = all_rows(store_url)
        else:
            seen["store rows"] = _sqlite_rows(cli.home / "state.db")
        seen["home files"] = "\n".join(
            p.read_bytes().decode("utf-8", "replace") for p in sorted(cli.home.rglob("*")) if p.is_file()
        )
        seen["received"] = json.dumps(events)
    finally:
        for pid in cli.workers():
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        shutil.rmtree(cli.env["PLANLINEAGE_PLANNER_DIR"], ignore_errors=True)
    return seen


def _submit_args(app: str, sql_file: Path) -> list[str]:
    return [
        "submit",
        "--app-id",
        app,
        "--job-name",
        f"etl-{app}",
        "--flink-version",
        "1.20",
        "--sql-file",
        str(sql_file),
        "--lineage-enable",
    ]


@pytest.fixture(scope="module")
def places(tmp_path_factory) -> dict[str, str]:
    """Every output of a SQLite-store day and, with PostgreSQL installed, of a PostgreSQL-store day."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from databases import pg_bin, postgres_server

    saved = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("PLANLINEAGE_")}
    try:
        base = tmp_path_factory.mktemp("credentials")
        found = {f"sqlite {k}": v for k, v in _lifecycle(base / "sqlite", None).items()}
        if pg_bin() is not None:
            with postgres_server() as server:
                url = server.create_database("credentials")
                found.update({f"postgres {k}": v for k, v in _lifecycle(base / "postgres", url).items()})
        yield found
    finally:
        os.environ.update(saved)


def test_the_table_lists_every_form():
    """docs/credentials.md has one row per form tested here, and no row without its test."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "credentials.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip().strip("`") for line in doc.splitlines() if line.startswith("| `")}
    assert rows == {f.id for f in FORMS}


def test_the_run_went_through(places):
    """What the rows check is real: events were sent, with a SQL facet, and the sink kept its
    host/port namespace although its URL's password holds an unencoded `@`."""
    assert '"eventType": "RUNNING"' in places["sqlite events"] and '"eventType": "FAIL"' in places["sqlite events"]
    assert "******" in places["sqlite store rows"] and "CREATE TABLE c1" in places["sqlite store rows"]
    assert places["sqlite sql facet"].startswith("INSERT INTO")  # each job's own statement (issue #37)
    assert '"postgres://pg:5432"' in places["sqlite extract datasets"]
    outputs = {
        (d["namespace"], d["name"]) for e in json.loads(places["sqlite received"]) for d in e.get("outputs") or []
    }
    assert ("postgres://pg:5432", "dw.public.out_b") in outputs
    assert "<html" in places["sqlite page"].lower()
    from databases import pg_bin

    stores = ["sqlite", "postgres"] if pg_bin() is not None else ["sqlite"]
    for store in stores:  # the rows were read: the run, its events in the outbox, its SQL
        assert "app-1" in places[f"{store} store rows"] and "dw.public.out_b" in places[f"{store} store rows"]


@pytest.mark.parametrize("form", FORMS, ids=[f.id for f in FORMS])
def test_a_credential_form_leaves_nowhere(form, places):
    given = form.sql + json.dumps(form.sink) + form.other + form.error
    assert form.secret in given  # the form really carries its secret into the run
    assert all(len(f) >= 3 and f in given for f in form.fragments)
    leaks = [(where, part) for where, text in places.items() for part in (form.secret, *form.fragments) if part in text]
    assert leaks == []
