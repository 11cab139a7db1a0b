"""Every spelling of a secret a SQL script, a comment, a JAAS string or a log line may carry is
masked by the one redaction module; what is not a secret stays readable."""

from __future__ import annotations

import logging

import pytest

from planlineage.registry.secrets import MASK, RedactingFilter, redact_sql, redact_text, redact_url, strip_credentials

S = "FAKE-s3cr3t-Value"

# (input, what must remain readable) — the secret S must be gone from the output of each.
SECRET_CASES = [
    (f"SET s3.secret-key = {S};", "SET s3.secret-key = "),
    (f"SET 's3.secret-key' = '{S}';", "SET 's3.secret-key' = '"),
    (f"set fs.s3a.access.key={S}", "set fs.s3a.access.key="),
    (f"SET table.exec.token = '{S}';", "SET table.exec.token = '"),
    (f"SET s3.secret-key = {S}\r\nSET x = y", "SET x = y"),
    (f"-- password: {S}\nINSERT INTO t SELECT 1", "INSERT INTO t SELECT 1"),
    (f"/* token = {S} */ SELECT 1", "SELECT 1"),
    (f"-- credentials for prod: api_key={S}", "credentials for prod"),
    (
        f"'properties.sasl.jaas.config' = 'org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"{S}\";'",
        "'properties.sasl.jaas.config' = '",
    ),
    (
        f'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="{S}";',
        'required username="u" password="',
    ),
    (f"'url' = 'jdbc:mysql://admin:{S}@db:3306/x'", "jdbc:mysql://admin:"),
    (f"connect to https://{S}@git.example.com/repo failed", "git.example.com/repo"),
    (f"postgres://u:{S}@h/db?sslmode=require", "sslmode=require"),
    (f"jdbc:sqlserver://h;user=u;password={S};db=x", "db=x"),
    (f"jdbc:oracle:thin:scott/{S}@h:1521/orcl", "h:1521/orcl"),
    (f"request failed: Authorization: Bearer {S}", "request failed"),
    (f'{{"password": "{S}", "user": "u"}}', '"user": "u"'),
    (f"client-secret: '{S}'", "client-secret: '"),
    # issue 30: forms that still left in clear
    (f"SET 'fs.azure.account.key.acct.dfs.core.windows.net' = '{S}';", "account.key.acct.dfs.core.windows.net' = '"),
    (f"SET fs.azure.account.key.acct.blob.core.windows.net = {S};", "SET fs.azure.account.key.acct.blob"),
    (f"SET fs.azure.sas.cont.acct.blob.core.windows.net = sv=2022-11-02&sig={S};", "SET fs.azure.sas.cont"),
    (f"'path' = 'abfss://c@acct.dfs.core.windows.net/x?sv=2022-11-02&sp=r&sig={S}'", "?sv=2022-11-02&sp=r&sig="),
    (f"'pulsar.client.authParams' = 'token:{S}'", "'pulsar.client.authParams' = '"),
    (f"'pulsar.client.authParams' = '{{\"token\":\"{S}\"}}'", "'pulsar.client.authParams' = '"),
    (f"SET s3.secret-key = abc,{S};\nSET a = b;", "SET a = b;"),
    (f"SET s3.secret-key = abc({S});", "SET s3.secret-key = "),
    (f"set table.exec.token = x {S}\nSET a = b", "SET a = b"),
    (f"'url' = 'jdbc:mysql://admin:pa@{S}@db:3306/x'", "@db:3306/x"),
    (f"'url' = 'jdbc:mysql://admin:pa,{S}@db:3306/x'", "@db:3306/x"),
    (f"'url' = 'https://{S}@x@git.example.com/r'", "@git.example.com/r"),
    (f"OPTIONS (url 'jdbc:postgresql://h/db', password '{S}', dbtable 't')", "dbtable 't'"),
    (f"OPTIONS ('token' \"{S}\", 'dbtable' 't')", "'dbtable' 't'"),
]


@pytest.mark.parametrize(("text", "kept"), SECRET_CASES)
def test_secret_is_masked_and_the_rest_kept(text, kept):
    out = redact_text(text)
    assert S not in out
    assert MASK in out
    assert kept in out


NOT_SECRET = [
    "SET 'execution.runtime-mode' = 'batch';",
    "SET parallelism.default = 4;",
    "-- this updates the record with key 'id1'",
    "CREATE TABLE t (id BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'kafka', 'key.format' = 'json')",
    "-- owner: data-platform, ticket=ABC-1",
    "INSERT INTO sink SELECT a, b FROM src WHERE a = 1",
    "'scan.startup.mode' = 'earliest-offset'",
]


@pytest.mark.parametrize("text", NOT_SECRET)
def test_text_without_secrets_is_unchanged(text):
    assert redact_text(text) == text


@pytest.mark.parametrize(
    ("sql", "kept"),
    [
        (f"-- password is {S}\nSELECT 1", "-- password is "),
        (f"-- the password for prod is {S} (rotated)\nSELECT 1", "-- the password "),
        (f"-- credentials for prod: {S}\nSELECT 1", "-- credentials "),
        (f"-- credentials: {S}\nSELECT 1", "-- credentials: "),
        # the secret right after its name, a separator only further on: masked from the name
        (f"-- password {S} is rotated monthly\nSELECT 1", "-- password "),
        (f"-- token {S} was revoked\nSELECT 1", "-- token "),
        (f"/* apikey {S}: prod */ SELECT 1", " */ SELECT 1"),
        (f"SELECT 1 /* token {S} */ FROM t", " */ FROM t"),
        (f"/* api key: see vault\n   secret = {S}\n*/ SELECT 1", "*/ SELECT 1"),
    ],
)
def test_sql_comments_lose_what_follows_a_secret_name(sql, kept):
    out = redact_sql(sql)
    assert S not in out and MASK in out and kept in out


@pytest.mark.parametrize(
    "sql", ["-- primary key is id; pass through to the sink\nSELECT 1", "/* owner: data-platform */ SELECT 1"]
)
def test_sql_comments_without_a_secret_name_stay(sql):
    assert redact_sql(sql) == sql


def test_spark_property_lists_lose_numeric_secrets_not_column_types():
    assert redact_text("TBLPROPERTIES (a 1, secret 987654321)") == f"TBLPROPERTIES (a 1, secret {MASK})"
    assert redact_text("OPTIONS (password 12345, ssl true)") == f"OPTIONS (password {MASK}, ssl true)"
    ddl = "CREATE TABLE t (token STRING, password VARCHAR(20), secret_key BIGINT) WITH ('connector' = 'x')"
    assert redact_text(ddl) == ddl


def test_crlf_lines_keep_their_endings():
    text = f"SET s3.secret-key = {S}\r\nSET a = b\r\n"
    assert redact_text(text) == f"SET s3.secret-key = {MASK}\r\nSET a = b\r\n"


def test_logging_filter_redacts_arguments_and_message(caplog):
    logger = logging.getLogger("planlineage.test-redaction")
    handler_filter = RedactingFilter()
    caplog.handler.addFilter(handler_filter)
    try:
        with caplog.at_level(logging.WARNING, logger=logger.name):
            logger.warning("compile failed: %s", f"SET s3.secret-key = {S}")
            logger.warning(f"-- password: {S}")
    finally:
        caplog.handler.removeFilter(handler_filter)
    assert S not in caplog.text and caplog.text.count(MASK) == 2


@pytest.mark.parametrize(
    "text",
    [
        "SET a" * 50000,
        "(token 1," * 30000,
        "-- password " * 30000,
        "/*" * 50000,
        "//a:" + "@" * 100000,
        "//a" + ",b" * 100000,
    ],
)
def test_the_new_forms_read_adversarial_text_in_linear_time(text):
    import time

    start = time.monotonic()
    redact_sql(text, {"password": "zzzzzz"})
    assert time.monotonic() - start < 5


@pytest.mark.parametrize(
    "sql",
    [
        f"CREATE TABLE t USING jdbc OPTIONS (url 'jdbc:x', \"password\" '{S}')",
        f'CREATE TABLE t USING jdbc OPTIONS ("password" "{S}")',
        f"CREATE TABLE t USING jdbc OPTIONS (url 'jdbc:x',\n  password\n    '{S}')",
        f"CREATE TABLE t USING jdbc OPTIONS (\"password\"\r\n\t'{S}', dbtable 't')",
    ],
)
def test_spark_options_with_a_double_quoted_key_or_a_line_break_are_masked(sql):
    out = redact_sql(sql)
    assert S not in out and MASK in out and "OPTIONS (" in out


def test_a_secret_on_the_line_after_its_name_is_not_taken_for_the_next_lines_text():
    """`password:` ending a line: the next line is not its value (nothing to mask, nothing shifted)."""
    assert redact_text("-- password:\n-- not-the-secret") == "-- password:\n-- not-the-secret"
    assert redact_text("password:\nSELECT 1") == "password:\nSELECT 1"


@pytest.mark.parametrize(
    "url",
    [
        "jdbc:oracle:thin:scott/FAKE@s3cr3t@h:1521/orcl",
        "jdbc:oracle:thin:scott/FAKE@s3@cr3t@h:1521/orcl",
    ],
)
def test_an_oracle_password_with_an_unencoded_at_is_read_to_the_last_at(url):
    for out in (redact_text(url), redact_sql(url), redact_url(url), strip_credentials(url)):
        assert "FAKE" not in out and "s3" not in out and "cr3t" not in out, out
        assert "h:1521/orcl" in out
    assert strip_credentials(url) == "jdbc:oracle:thin:@h:1521/orcl"


@pytest.mark.parametrize(
    "text",
    [
        "oracle:thin:a/" * 7142,
        "jdbc:oracle:thin:a/x@" * 5000,
        "oracle:thin:" + "a" * 100000,
        "oracle:thin:a/" + "b@" * 50000,
        '"password" ' * 9000,
        "password\n" * 10000,
        "-- password " * 8000,
        "jdbc:mysql://" + "a?" * 50000,
        "jdbc:mysql://u:a?" + "b" * 100000,
        "x://" * 25000,
        "jdbc:x://" + "''" * 50000,
        "jdbc:mysql://" + "a," * 50000 + "@h",
        "(a=b," * 20000 + ")",
    ],
)
def test_adversarial_text_of_100k_characters_is_redacted_in_linear_time(text):
    import time

    def took(sample: str) -> float:
        start = time.monotonic()
        redact_text(sample)
        redact_sql(sample)
        redact_url(sample)
        strip_credentials(sample)
        return time.monotonic() - start

    small = took(text[: len(text) // 10])
    big = took(text)
    assert big < 2 and big < 10 * small + 0.5, (small, big)


# a password with an unencoded `@`, `,`, `?`, `#` or `'`: fragments on both sides of it
SPECIAL_PASSWORD_URLS = [
    "jdbc:mysql://app:FRAGONE,FRAGTWO@db:3306/x",
    "jdbc:mysql://app:12345,67890@db:3306/x",
    "jdbc:mysql://app:FRAGONE,FRAGTWO:FRAGTRE@db:3306/x",
    "jdbc:mysql://app:FRAGONE@FRAGTWO@db:3306/x",
    "jdbc:mysql://app:FRAGONE?FRAGTWO@db:3306/x",
    "jdbc:mysql://app:FRAGONE#FRAGTWO@db:3306/x",
    "jdbc:mysql://app:FRAGONE'FRAGTWO@db:3306/x",
    "jdbc:oracle:thin:app/FRAGONE@FRAGTWO@db:1521/orcl",
]
FRAGMENTS = ("FRAGONE", "FRAGTWO", "FRAGTRE", "12345", "67890")


@pytest.mark.parametrize("url", SPECIAL_PASSWORD_URLS)
def test_a_password_with_a_special_character_leaves_no_fragment(url):
    from planlineage.registry.jdbc import jdbc_identity

    quoted = "'url' = '" + url.replace("'", "''") + "'"
    outputs = {
        "redact_url": redact_url(url),
        "redact_text": redact_text(url),
        "redact_sql quoted": redact_sql(f"WITH ({quoted})"),
        "strip_credentials": strip_credentials(url),
        "identity": " ".join(jdbc_identity(url, "t")),
    }
    leaks = {where: out for where, out in outputs.items() if any(f in out for f in FRAGMENTS)}
    assert leaks == {}
    assert "db:" in outputs["identity"] and "app" not in outputs["identity"]


def test_a_quoted_password_with_a_doubled_quote_is_masked_as_its_option():
    url = "jdbc:mysql://u:FRAGONE'FRAGTWO@h:3306/db"
    sql = "WITH ('url' = '" + url.replace("'", "''") + "')"
    out = redact_sql(sql, {"url": url})
    assert "FRAGONE" not in out and "FRAGTWO" not in out and "h:3306/db" in out


def test_masking_and_naming_read_a_comma_the_same_way():
    """registry/jdbc names with the hosts secrets masks: `u:12,34@h` is one userinfo, never a
    host `u:12` in a namespace; `u:p@h1,h2` and `u:p@h1,u:p@h2` stay two hosts."""
    from planlineage.registry import jdbc, secrets

    assert secrets.split_hosts("u:12,34@h:3306") == ["u:12,34@h:3306"]
    assert secrets.split_hosts("u:p,ss:x@h:3306") == ["u:p,ss:x@h:3306"]
    assert secrets.split_hosts("u:p@h1,h2:3306") == ["u:p@h1", "h2:3306"]
    assert secrets.split_hosts("u:p@h1,u:p@h2") == ["u:p@h1", "u:p@h2"]
    assert jdbc.jdbc_identity("jdbc:mysql://u:12,34@h:3306/db", "t") == ("mysql://h:3306", "db.t")
    assert jdbc.jdbc_identity("jdbc:mysql://u:p@h1,h2:3306/db", "t") == ("mysql://h1,h2:3306/db", "t")
    assert strip_credentials("jdbc:mysql://u:p,ss:x@h:3306/db") == "jdbc:mysql://h:3306/db"


def test_a_mysql_address_list_loses_its_user_and_password():
    url = "jdbc:mysql://(host=h,port=3306,user=u,password=FRAGONE)/db"
    assert strip_credentials(url) == "jdbc:mysql://(host=h,port=3306)/db"
    assert strip_credentials("jdbc:mysql://(password=FRAGONE)/db") == "jdbc:mysql:///db"
    assert strip_credentials("jdbc:mysql://(host=h,port=3306)/db") == "jdbc:mysql://(host=h,port=3306)/db"
