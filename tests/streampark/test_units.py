"""The watcher's pure parts: addresses, StreamPark's text encoding and variables, state codes."""

import pytest

from planlineage.errors import PlatformUrlError
from planlineage.streampark import sql, states
from planlineage.streampark.address import parse
from planlineage.streampark.reads import App
from planlineage.streampark.spark import Env, defaults, listener_reason, naming_conf, properties
from planlineage.streampark.watcher import selection

# t_flink_sql id 100000 of StreamPark's shipped demo data (SCRIPT/data/mysql-data.sql, dev).
DEMO = (
    "eNqlUUtPhDAQvu+vmFs1AYIHT5s94AaVqGxSSPZIKgxrY2mxrdGfb4GS3c0+LnJo6Mz36syapkmZQpk8vKbQMMt2KOFmAe5rK4Nf3yhrhCwvA1/"
    "TTDaqO61UxmooSprlT1PDGkgKEKpmwvIOjWVdP3W2zpG+JfQFHjfU46xxrVvYZuWztye1khJrqzSBFRCfjUwSYQiqt1xJJvyPcbWJp9WPCXvUoUEn"
    "0ZAVufcs0nIUjYn2L4s++YiY75eBLr+2Dnl3GYKTWRyfQKYRRR2XZxXmNvu9yh9GHAmUO/sxyMRkGNly4c714RZ7zaWtLHsX+N9NjvVrWxm99jmy"
    "vEhpOUhujmIYFI5zkCOYzYIj11a7QH7Tyz+nE8bw"
)


def test_demo_row_decodes_and_reencodes_byte_for_byte():
    text = sql.decode(DEMO)
    assert "CREATE TABLE" in text.upper() and "datagen" in text and "print" in text
    assert sql.encode(text) == DEMO


def test_blank_and_null_texts():
    assert sql.decode(None) is None
    assert sql.decode("  ") == ""
    assert sql.encode("  ") == ""
    with pytest.raises(sql.DecodeError, match="--streampark-charset"):
        sql.decode("bm90IGRlZmxhdGU=")


def test_charset_override():
    stored = sql.encode("SELECT '中文'", "gbk")
    assert sql.decode(stored, "gbk") == "SELECT '中文'"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("topic '${topic_in}' and ${topic_in}", "topic 'orders' and orders"),  # every occurrence
        ("${a} stays: one-character names are no placeholder", "${a} stays: one-character names are no placeholder"),
        ("${unknown.var} stays", "${unknown.var} stays"),
        ("${blank} stays", "${blank} stays"),
        ("${db.url-1_x}", "jdbc:mysql://db:3306/x"),
        ("${9lives} stays: a name starts with a letter", "${9lives} stays: a name starts with a letter"),
    ],
)
def test_variables_as_streampark_replaces_them(text, expected):
    variables = {"topic_in": "orders", "a": "A", "blank": "  ", "db.url-1_x": "jdbc:mysql://db:3306/x", "9lives": "x"}
    assert sql.replace_variables(text, variables) == expected


def test_state_codes_by_engine():
    assert states.state_name("flink", 5) == "RUNNING" and states.state_name("spark", 6) == "RUNNING"
    assert states.state_name("flink", 7) == "FAILED" and states.state_name("spark", 7) == "FINISHED"
    assert states.state_name("flink", -9) == "KILLED" and states.state_name("flink", 99) == "OTHER"
    assert states.lost("flink", 13) and states.lost("spark", 9) and not states.lost("spark", 13)


@pytest.mark.parametrize(
    ("url", "masked", "schema"),
    [
        ("postgresql://sp:FAKE-pw@db:5433/streampark", "postgresql://sp:***@db:5433/streampark", None),
        ("postgres://sp@db/streampark", "postgresql://sp@db:5432/streampark", None),
        ("mysql://sp:FAKE-pw@db/streampark", "mysql://sp:***@db:3306/streampark", None),
        (
            "jdbc:mysql://db:3306/streampark?useUnicode=true&characterEncoding=UTF-8&useSSL=false",
            "mysql://sp@db:3306/streampark",
            None,
        ),
        (
            "jdbc:postgresql://db:5432/streampark?currentSchema=sp&user=x&password=FAKE-pw",
            "postgresql://x:***@db:5432/streampark?currentSchema=sp",
            "sp",
        ),
    ],
)
def test_urls(url, masked, schema):
    target = parse(url, user=None if "user" in url or "@" in url else "sp")
    assert target.masked() == masked
    assert target.schema == schema
    assert "FAKE-pw" not in repr(target) and "FAKE-pw" not in target.key()


def test_password_from_the_environment_wins_and_is_scrubbed():
    target = parse("jdbc:postgresql://db:5432/sp", user="watcher", password="FAKE-env-pw")
    assert (target.user, target.password) == ("watcher", "FAKE-env-pw")
    assert target.scrub("password FAKE-env-pw rejected") == "password *** rejected"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("", "--streampark-db"),
        ("jdbc:h2:~/streampark/h2-data", "H2"),
        ("mysql://u:FAKE-pw@/sp", "no host"),
        ("mysql://u:FAKE-pw@db:3306/", "no database"),
    ],
)
def test_bad_urls_say_what_to_do_without_the_password(url, message):
    with pytest.raises(PlatformUrlError, match=message) as error:
        parse(url)
    assert "FAKE-pw" not in str(error.value)


def test_apps_selection():
    assert selection("all") == "all" and selection("Flagged") == "flagged"
    assert selection("100001, flink:100002,spark:100001") == {"flink:100001", "flink:100002", "spark:100001"}
    with pytest.raises(ValueError, match="not an app id"):
        selection("hive:1")


LISTENER = "io.openlineage.spark.agent.OpenLineageSparkListener"


def test_app_properties_are_read_as_the_console_passes_them_to_spark_submit():
    # SparkConfigurationUtils.extractProperties: `--conf` / `-c` pieces, `["']?k=v["']?`.
    text = "--conf spark.executor.cores=2 -c 'spark.sql.warehouse.dir=s3a://lake/wh' --conf spark.x=a=b"
    assert properties(text) == {
        "spark.executor.cores": "2",
        "spark.sql.warehouse.dir": "s3a://lake/wh",
        "spark.x": "a=b",  # the key ends at the first '='
    }
    assert properties("spark.executor.cores=2") == {"spark.executor.cores": "2"}  # one piece, no --conf
    assert properties("spark.a=1\nspark.b=2") == {}  # a piece spanning lines is no property there
    assert properties(None) == {} and properties("") == {}


def test_spark_defaults_are_read_as_spark_reads_the_file():
    text = "# cluster\nspark.master   yarn\n! old\nspark.sql.warehouse.dir=hdfs://nn:8020/wh \nspark.a:b\n\nspark.long a,\\\n  b\n"
    assert defaults(text) == {
        "spark.master": "yarn",
        "spark.sql.warehouse.dir": "hdfs://nn:8020/wh",
        "spark.a": "b",
        "spark.long": "a,b",
    }


def test_the_listener_is_found_in_the_app_properties_or_the_env_defaults():
    assert "register the OpenLineage Spark listener" in listener_reason(
        f"--conf spark.extraListeners=a.B,{LISTENER} --conf spark.executor.cores=2", {}
    )
    assert "(spark.openlineage.transport.type)" in listener_reason("--conf spark.openlineage.transport.type=http", {})
    assert listener_reason(None, {"spark.extraListeners": LISTENER}).startswith("the Spark env's defaults")
    assert listener_reason(f'{{"spark.extraListeners": "{LISTENER}"}}', {})  # a form the console does not parse
    assert listener_reason("--conf spark.extraListeners=a.B --conf spark.executor.cores=2", {"spark.x": "1"}) is None
    assert listener_reason(None, {}) is None


def test_only_the_conf_keys_that_name_tables_reach_the_compile():
    env = {"spark.sql.warehouse.dir": "hdfs://nn/wh", "spark.hadoop.fs.s3a.secret.key": "FAKE-secret"}
    props = (
        "--conf spark.sql.catalog.lake=org.apache.iceberg.spark.SparkCatalog --conf spark.sql.catalog.lake.token=FAKE-t"
    )
    props += " --conf spark.sql.warehouse.dir=s3a://lake/wh"  # the app's own value wins over the defaults
    props += " --conf spark.sql.catalog.lake.type=hadoop --conf spark.sql.catalog.lake.warehouse=s3a://lake/ice"
    assert naming_conf(env, props) == {
        "spark.sql.warehouse.dir": "s3a://lake/wh",
        "spark.sql.catalog.lake": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.lake.type": "hadoop",
        "spark.sql.catalog.lake.warehouse": "s3a://lake/ice",
    }


@pytest.mark.parametrize(
    "version, minor",
    [("3.5.1", "3.5"), ("3.5.9", "3.5"), ("4.0.0", "4.0"), ("3.4.2", None), ("2.4.8", None), ("4.1.0", None),
     (None, None), ("", None)],
)  # fmt: skip
def test_the_env_version_maps_to_a_supported_spark_line_or_none(version, minor):
    assert Env(version, {}).minor == minor


def test_core_does_not_import_the_drivers():
    import subprocess
    import sys

    code = (
        "import sys; import planlineage.cli.main as m; m.build_parser();"
        "import planlineage.streampark.watcher, planlineage.streampark.check;"
        "print(sorted(k for k in sys.modules if k.split('.')[0] in ('psycopg', 'pymysql')))"
    )
    out = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_missing_driver_says_which_extra_to_install(monkeypatch):
    import sys

    from planlineage.errors import DriverMissing
    from planlineage.watch.connection import Source

    monkeypatch.setitem(sys.modules, "pymysql", None)  # as if PyMySQL were not installed
    with pytest.raises(DriverMissing, match=r"pip install 'planlineage\[streampark\]'"):
        Source(parse("mysql://u@db:3306/sp")).connect()


def test_a_spark_compile_is_given_the_env_line_and_only_the_naming_conf():
    from planlineage.streampark.compile_inputs import spark_job

    said = []
    app = App("spark", 100000, 1, 2, 2, "nightly", 7, 6, "", None, "--conf spark.sql.warehouse.dir=s3a://lake/wh")
    env = Env("3.5.1", {"spark.master": "yarn", "spark.hadoop.fs.s3a.secret.key": "FAKE-s3-key"})
    fields, label = spark_job(app, env, lambda key, line: said.append(line))
    assert fields == {
        "engine": "spark",
        "spark_version": "3.5",
        "spark_conf": {"spark.sql.warehouse.dir": "s3a://lake/wh"},
        "jars": [],
    }
    assert label == "Spark 3.5.1" and said == []
    assert spark_job(app, Env("3.3.2", {}), lambda key, line: said.append(line)) is None
    assert said == [
        "WARN spark:100000 nightly: not reported: Spark 3.3.2 is not a Spark version planlineage parses (3.5, 4.0)"
    ]


def _bomb(size: int) -> str:
    """A stored text that inflates to ``size`` bytes, made in 1 MiB steps (never held whole)."""
    import base64
    import zlib

    deflater, chunk, parts = zlib.compressobj(9), b"\0" * (1 << 20), []
    for _ in range(size >> 20):
        parts.append(deflater.compress(chunk))
    parts.append(deflater.flush())
    return base64.b64encode(b"".join(parts)).decode("ascii")


def _bounded(call):
    """``call()``'s outcome, its seconds and the peak of Python memory it allocated (bytes):
    timed alone, then run again under tracemalloc (which slows every allocation)."""
    import time
    import tracemalloc

    def run():
        try:
            return call()
        except Exception as error:  # the caller checks which
            return error

    begin = time.perf_counter()
    outcome = run()
    seconds = time.perf_counter() - begin
    tracemalloc.start()
    try:
        run()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return outcome, seconds, peak


def test_a_compressed_bomb_is_inflated_no_further_than_the_limit():
    stored = _bomb(196 << 20)  # about 260 KB stored, 196 MiB inflated
    assert len(stored) < 400_000
    outcome, seconds, peak = _bounded(lambda: sql.decode(stored))
    assert isinstance(outcome, sql.TooLarge), outcome
    assert "inflates past 8 MiB, the watcher's limit on a stored text" in str(outcome)
    assert peak < 3 * sql.MAX_TEXT_BYTES and seconds < 5, (peak, seconds)
    small = sql.encode("INSERT INTO o SELECT 1")
    assert sql.decode(small, limit=22) == "INSERT INTO o SELECT 1"  # exactly at the limit: read
    with pytest.raises(sql.TooLarge):
        sql.decode(small, limit=21)
    with pytest.raises(sql.DecodeError, match="not deflate"):  # a cut stream is still no text
        sql.decode(sql.encode("x" * 1000)[:-12])


@pytest.mark.parametrize("distinct", [True, False])
def test_200k_placeholders_are_substituted_in_linear_time(distinct):
    names = [f"v{i}" if distinct else "topic_in" for i in range(200_000)]
    text = "SELECT " + ", ".join(f"'${{{name}}}'" for name in names)
    variables = {name: "x" for name in names}
    outcome, seconds, peak = _bounded(lambda: sql.replace_variables(text, variables))
    assert outcome == "SELECT " + ", ".join(["'x'"] * 200_000)
    assert seconds < 3, seconds  # the console's loop, ported as it was, took 36 s
    assert peak < 64 << 20, peak


def test_a_substitution_past_the_limit_is_refused_before_it_is_built():
    text = "SELECT " + ", ".join(["'${big_value}'"] * 200_000)
    outcome, seconds, peak = _bounded(lambda: sql.replace_variables(text, {"big_value": "y" * 1000}))
    assert isinstance(outcome, sql.TooLarge) and "longer than 8 MiB characters" in str(outcome), outcome
    assert seconds < 3 and peak < 64 << 20, (seconds, peak)


def test_a_value_that_makes_a_new_placeholder_is_replaced_as_the_console_does_within_a_work_limit():
    # The console: ${xx} -> "$" gives "${bc} ${bc}", then every ${bc} is replaced.
    assert sql.replace_variables("${xx}{bc} ${bc}", {"xx": "$", "bc": "V"}) == "V V"
    text = "${xx}{ab} " + "${ab} " * 200_000
    outcome, seconds, _ = _bounded(lambda: sql.replace_variables(text, {"xx": "$", "ab": "z"}))
    assert isinstance(outcome, sql.TooLarge) and "would scan more than 64 MiB" in str(outcome), outcome
    assert seconds < 3, seconds


def test_the_placeholder_pattern_does_not_backtrack_on_long_names():
    text = ("${" + "a" * 50_000 + " ") * 4  # never closed: no placeholder
    outcome, seconds, _ = _bounded(lambda: sql.replace_variables(text, {"ab": "x"}))
    assert outcome == text and seconds < 1, seconds


def test_a_poll_writes_only_the_snapshot_rows_that_changed(tmp_path, monkeypatch):
    from planlineage.store.sqlite import Store
    from planlineage.watch import ledger

    store = Store(tmp_path / "state.db")
    snapshot = {f"flink:{i}": ledger.Snap(5, f"job{i}", "adopted:") for i in range(2000)}
    ledger.save(store, "pg://sp", 10, snapshot)
    cursor, before = ledger.load(store, "pg://sp")
    assert (cursor, before) == (10, snapshot)

    written = []
    real = store.write

    def counted(fn, **kwargs):
        def measured(conn):
            start = conn.total_changes
            result = fn(conn)
            written.append(conn.total_changes - start)
            return result

        return real(measured, **kwargs)

    monkeypatch.setattr(store, "write", counted)
    after = {key: ledger.Snap(s.state, s.job_id, s.run_job_id) for key, s in before.items()}
    after["flink:7"] = ledger.Snap(9, "job7", "adopted:")  # one app canceled
    del after["flink:8"]  # one app deleted
    ledger.save(store, "pg://sp", 11, after, before=before)
    assert written == [3]  # the cursor, one app's row, one deletion: not 2,000 rows rewritten
    assert ledger.load(store, "pg://sp") == (11, after)


def test_a_watcher_reads_its_snapshot_only_when_another_node_saved_it(tmp_path, monkeypatch):
    """The snapshot it saved itself is kept in memory (one row read per poll, not one per app);
    another node's save, or a poll of its own that stopped before saving, makes it read the store."""
    from planlineage.store.sqlite import Store
    from planlineage.watch import ledger

    store = Store(tmp_path / "state.db")
    reads = []
    real_load = ledger.load
    monkeypatch.setattr(ledger, "load", lambda *a: reads.append(a) or real_load(*a))
    mine, other = ledger.Kept(store, "pg://sp"), ledger.Kept(store, "pg://sp")
    assert mine.load() == (None, {}) and len(reads) == 1
    first = {"flink:1": ledger.Snap(5, "a")}
    mine.save(10, first, before={})
    assert mine.load() == (10, first) and len(reads) == 1  # its own save: from memory
    mine.save(11, first, before=first)

    assert other.load() == (11, first) and len(reads) == 2  # the other node leads now
    second = {"flink:1": ledger.Snap(7, "a"), "flink:2": ledger.Snap(5, "b")}
    other.save(12, second, before=first)
    assert mine.load() == (12, second) and len(reads) == 3  # read again: another node saved since

    mine.load()  # a poll that stops before it saves (its rows may be written already) ...
    assert mine.load() == (12, second) and len(reads) == 5  # ... is followed by a read
