"""The one redaction module: exact outputs, so a weakened rule fails here."""

from __future__ import annotations

import pytest

from planlineage.registry import resolve
from planlineage.registry.secrets import (
    MASK,
    is_secret_key,
    redact_options,
    redact_sql,
    redact_text,
    redact_url,
    strip_credentials,
)

FAKE = "hunter2-FAKE"


@pytest.mark.parametrize(
    "key",
    [
        "password",
        "PASSWORD",
        "properties.ssl.truststore.password",
        "properties.sasl.jaas.config",
        "fs.s3a.secret.key",
        "fs.s3a.access.key",
        "s3.access-key",
        "s3.secret-key",
        "client-secret",
        "token",
        "avro-confluent.bearer-auth.token",
        "avro-confluent.basic-auth.user-info",
        "credentials",
        "gcp.credential-file",
        "private-key",
        "snowflake.private_key",
        "api-key",
        "azure.connection-string",
        "pwd",
        "fs.azure.account.key.acct.dfs.core.windows.net",
        "fs.azure.sas.container.acct.blob.core.windows.net",
        "AccountKey",
        "sig",
        "pulsar.client.authParams",
        "pulsar.client.authParamMap",
    ],
)
def test_secret_keys(key):
    assert is_secret_key(key)


@pytest.mark.parametrize(
    "key",
    [
        "connector",
        "url",
        "username",
        "topic",
        "key.format",
        "key.fields",
        "hostname",
        "table-name",
        "properties.bootstrap.servers",
        "properties.ssl.client.auth",
        "scan.startup.mode",
        "path",
    ],
)
def test_not_secret_keys(key):
    assert not is_secret_key(key)


def test_redact_options():
    options = {
        "connector": "jdbc",
        "url": f"jdbc:mysql://app:{FAKE}@db:3306/shop?password={FAKE}&useSSL=true",
        "username": "app",
        "password": FAKE,
        "properties.sasl.jaas.config": f'x required username="u" password="{FAKE}";',
        "table-name": "orders",
    }
    assert redact_options(options) == {
        "connector": "jdbc",
        "url": f"jdbc:mysql://app:{MASK}@db:3306/shop?password={MASK}&useSSL=true",
        "username": "app",
        "password": MASK,
        "properties.sasl.jaas.config": MASK,
        "table-name": "orders",
    }
    assert options["password"] == FAKE  # a copy, the input is untouched


@pytest.mark.parametrize(
    "url,masked",
    [
        (f"jdbc:postgresql://u:{FAKE}@h:5432/db", f"jdbc:postgresql://u:{MASK}@h:5432/db"),
        (f"jdbc:mysql://u:{FAKE}@h1:1,u:{FAKE}@h2:2/db", f"jdbc:mysql://u:{MASK}@h1:1,u:{MASK}@h2:2/db"),
        (
            f"jdbc:postgresql://h/db?user=fred&password={FAKE}&ssl=true",
            f"jdbc:postgresql://h/db?user={MASK}&password={MASK}&ssl=true",
        ),
        (
            f"jdbc:sqlserver://h;user=sa;password={{{FAKE};x}};databaseName=d",
            f"jdbc:sqlserver://h;user={MASK};password={MASK};databaseName=d",
        ),
        (f"jdbc:oracle:thin:scott/{FAKE}@//h:1521/svc", f"jdbc:oracle:thin:scott/{MASK}@//h:1521/svc"),
        (
            f"jdbc:mysql://address=(host=h)(user=u)(password={FAKE})",
            f"jdbc:mysql://address=(host=h)(user={MASK})(password={MASK})",
        ),
        (f"https://{FAKE}@api.example.com/x", f"https://{MASK}@api.example.com/x"),
        ("abfss://container@account.dfs.core.windows.net/x", "abfss://container@account.dfs.core.windows.net/x"),
        ("kafka://b1:9092", "kafka://b1:9092"),
    ],
)
def test_redact_url(url, masked):
    assert redact_url(url) == masked


@pytest.mark.parametrize(
    "value,stripped",
    [
        (f"jdbc:postgresql://h/db?user=fred&password={FAKE}&ssl=true", "jdbc:postgresql://h/db?ssl=true"),
        (f"jdbc:postgresql://h/db?password={FAKE}", "jdbc:postgresql://h/db"),
        (f"s3://AKIA:{FAKE}@bucket", "s3://bucket"),
        (f"jdbc:oracle:thin:scott/{FAKE}@//h:1521/s", "jdbc:oracle:thin:@//h:1521/s"),
        (f"jdbc:sqlserver://h;user=sa;password={FAKE};databaseName=d", "jdbc:sqlserver://h;databaseName=d"),
        ("abfss://container@account.dfs.core.windows.net", "abfss://container@account.dfs.core.windows.net"),
        (f"s3://AKIA:pa@{FAKE}@bucket", "s3://bucket"),
        (f"mysql://app:pa,{FAKE}@db:3306", "mysql://db:3306"),
        ("mysql://u:pw@h1:1,u:pw@h2:2/db", "mysql://h1:1,h2:2/db"),
        (f"abfss://c@acct.dfs.core.windows.net/x?sv=2022&sig={FAKE}", "abfss://c@acct.dfs.core.windows.net/x?sv=2022"),
    ],
)
def test_strip_credentials(value, stripped):
    assert strip_credentials(value) == stripped


def test_redact_sql_text():
    options = {
        "connector": "kafka",
        "properties.sasl.jaas.config": f'PlainLoginModule required username="svc" password="{FAKE}";',
        "password": "it's-FAKE",
    }
    sql = (
        "CREATE TABLE t (a INT) WITH ('connector' = 'kafka', "
        f"'properties.sasl.jaas.config' = 'PlainLoginModule required username=\"svc\" password=\"{FAKE}\";', "
        "'password' = 'it''s-FAKE', 'other.password' = 'not-in-options', "
        f"'url' = 'jdbc:oracle:thin:scott/tiger@h:1521:s');"
    )
    assert redact_text(sql, options) == (
        "CREATE TABLE t (a INT) WITH ('connector' = 'kafka', "
        f"'properties.sasl.jaas.config' = '{MASK}', "
        f"'password' = '{MASK}', 'other.password' = '{MASK}', "
        f"'url' = 'jdbc:oracle:thin:scott/{MASK}@h:1521:s');"
    )


def test_redact_log_and_error_text():
    options = {"password": FAKE}
    line = f'connect failed for {{"password": "{FAKE}"}} url=jdbc:postgresql://u:x@h/db?password={FAKE}'
    assert (
        redact_text(line, options)
        == f'connect failed for {{"password": "{MASK}"}} url=jdbc:postgresql://u:{MASK}@h/db?password={MASK}'
    )
    # escaped spellings of the secret are masked too
    assert redact_text('json "a\\"b" url a%22b', {"token": 'a"b'}) == f'json "{MASK}" url {MASK}'
    assert redact_text("login: password=abc123 ok") == f"login: password={MASK} ok"


def test_short_secret_masked_only_as_a_word():
    assert redact_text("ab cab ab", {"password": "ab"}) == f"{MASK} cab {MASK}"


def test_warning_echoing_an_option_is_redacted():
    # a topic-pattern that happens to contain the password must not be echoed in the warning
    res = resolve(
        {
            "connector": "kafka",
            "properties.bootstrap.servers": "b:9092",
            "topic-pattern": f"{FAKE}.*",
            "password": FAKE,
        },
        table="c.d.t",
    )
    assert res.warnings == [
        f"table c.d.t: connector 'kafka' reads 'topic-pattern' = '{MASK}.*', whose topics cannot be known offline; no dataset"
    ]


def test_a_host_spelled_like_the_password_is_the_host_not_a_leak():
    # compose setups: hostname, database and password all `postgres`; the dataset must stay
    res = resolve(
        {
            "connector": "postgres-cdc",
            "hostname": "postgres",
            "port": "5432",
            "username": "postgres",
            "password": "postgres",
            "database-name": "postgres",
            "schema-name": "public",
            "table-name": "orders",
        },
        table="c.d.t",
    )
    assert [(d.namespace, d.name) for d in res.datasets] == [("postgres://postgres:5432", "postgres.public.orders")]
    assert res.warnings == []
    res = resolve(
        {"connector": "kafka", "properties.bootstrap.servers": f"{FAKE}:9092", "topic": "t", "password": FAKE},
        table="c.d.t",
    )
    assert [(d.namespace, d.name) for d in res.datasets] == [(f"kafka://{FAKE}:9092", "t")]


def test_credentials_really_embedded_are_stripped_not_the_dataset_dropped():
    res = resolve(
        {
            "connector": "jdbc",
            "url": f"jdbc:postgresql://app:{FAKE}@db.prod:5432/shop?password={FAKE}&ssl=true",
            "password": FAKE,
            "table-name": "orders",
        },
        table="c.d.t",
    )
    assert [(d.namespace, d.name) for d in res.datasets] == [("postgres://db.prod:5432", "shop.orders")]
    assert FAKE not in repr(res)


@pytest.mark.parametrize(
    "url,namespace,name",
    [
        # a password with an unencoded `@` or `,`: the host/port namespace of the encoded URL
        (f"jdbc:mysql://app:pa@{FAKE}@db:3306/shop", "mysql://db:3306", "shop.orders"),
        (f"jdbc:mysql://app:pa%40{FAKE}@db:3306/shop", "mysql://db:3306", "shop.orders"),
        (f"jdbc:postgresql://app:pa@{FAKE}@db/shop", "postgres://db:5432", "shop.orders"),
        (f"jdbc:mysql://app:pa,{FAKE}@db:3306/shop", "mysql://db:3306", "shop.orders"),
        (f"jdbc:clickhouse://app:p{{{FAKE}@ch/shop", "clickhouse://ch:8123", "shop.orders"),
        # multi-host URLs keep openlineage-java's sanitized form, no credential part
        (f"jdbc:mysql://a:p@{FAKE}@h1:1,a:p@h2:2/shop", "mysql://h1:1,h2:2/shop", "orders"),
        ("jdbc:mysql://a:p@h1:1,a:p@h2:2/shop", "mysql://h1:1,h2:2/shop", "orders"),
        ("jdbc:mysql://app:pw@db:3306/shop", "mysql://db:3306", "shop.orders"),
    ],
)
def test_a_password_written_unencoded_leaves_nothing_in_the_namespace(url, namespace, name):
    res = resolve({"connector": "jdbc", "url": url, "table-name": "orders"}, table="c.d.t")
    assert [(d.namespace, d.name) for d in res.datasets] == [(namespace, name)]
    assert FAKE not in repr(res)


def test_a_secret_no_public_option_explains_drops_the_dataset():
    from planlineage.registry.identity import _clean

    warnings: list[str] = []
    assert _clean(f"kafka://{FAKE}:9092", "t", [FAKE], ["broker:9092", "t"], warnings) is None
    assert warnings == ["the dataset identity would contain a secret option value; no dataset"]


@pytest.mark.parametrize(
    "text",
    [
        "'password' = '" + "\\a" * 5000,
        '"k": "' + "\\" * 20000,
        "a:" * 50000,
        "x={" + "a" * 100000,
        "'a" * 50000,
        "k=" * 50000,
    ],
)
def test_no_catastrophic_backtracking(text):
    import time

    start = time.monotonic()
    redact_text(text, {"password": "zzzzzz"})
    redact_url(text)
    strip_credentials(text)
    assert time.monotonic() - start < 5


@pytest.mark.parametrize(
    "sql, secret",
    [
        # Flink's map-typed options: `k:v,k:v` in one literal; the first pair starts at the quote
        ("SET 'pipeline.global-job-parameters' = 'db.password:hunter2,user:x';", "hunter2"),
        ("SET 'pipeline.global-job-parameters' = 'user:x,db.password:hunter2';", "hunter2"),
        ("SET pipeline.global-job-parameters = 'api.token:abc123';", "abc123"),
        ("SET 'pipeline.global-job-parameters' = \"db.secret:s3cr3t\";", "s3cr3t"),
    ],
)
def test_a_secret_in_a_map_typed_option_value_is_masked(sql, secret):
    assert secret not in redact_sql(sql)
    assert secret not in redact_text(sql)
    assert "user:x" in redact_sql(sql) or "user" not in sql  # the pairs that are not secret stay


def test_prose_in_quotes_keeps_its_words():
    assert redact_sql("-- two lines ('key: value'), not SQL") == "-- two lines ('key: value'), not SQL"


def test_quoted_map_pairs_do_not_backtrack():
    import time

    start = time.monotonic()
    redact_text("'a:" * 40000 + "'password:" * 20000)
    assert time.monotonic() - start < 5
