"""What a new planner compiles before real jobs: one small job, and the training scripts.

`WARM_UP`, a small streaming aggregate, is compiled at provisioning while the JVM records its
class-data archive. A warm planner compiles it and then the training scripts when it starts: the
shapes platforms submit most (Kafka into JDBC, lookup, interval and temporal joins, window TVFs,
CDC into upsert sinks, deduplication and Top-N, statement sets, views, OVER aggregates, a batch
job over files), so that its first jobs of each shape are not its slowest (the first 30 corpus
jobs: 1.4-1.5 s after them, 2.6 s after the warm-up job alone).
"""

from __future__ import annotations

from planlineage.planner.protocol import CompileRequest
from planlineage.planner.provisioned import Provisioned

WARM_UP: CompileRequest = {
    "statements": [
        {"sql": "CREATE TABLE s (a INT, b STRING) WITH ('connector' = 'datagen')", "line": 1},
        {"sql": "CREATE TABLE o (a INT, n BIGINT) WITH ('connector' = 'blackhole')", "line": 1},
        {"sql": "INSERT INTO o SELECT a, COUNT(b) FROM s GROUP BY a", "line": 1},
    ],
    "config": {"execution.runtime-mode": "streaming"},
    "batch": False,
    "forced_stand_ins": [],
}

_EVENTS = """CREATE TABLE events (
  id BIGINT, account_id BIGINT, kind STRING, amount DECIMAL(10, 2), tags ARRAY<STRING>,
  ts TIMESTAMP(3), proc_time AS PROCTIME(), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'events', 'properties.bootstrap.servers' = 'kafka:9092',
  'format' = 'json');
"""
_ACCOUNTS = """CREATE TABLE accounts (id BIGINT, region STRING, tier STRING, PRIMARY KEY (id) NOT ENFORCED)
WITH ('connector' = 'jdbc', 'url' = 'jdbc:postgresql://db:5432/crm', 'table-name' = 'accounts');
"""


def _sink(name: str, columns: str, key: str | None = None) -> str:
    primary = f", PRIMARY KEY ({key}) NOT ENFORCED" if key else ""
    return (
        f"CREATE TABLE {name} ({columns}{primary}) WITH ('connector' = 'jdbc', "
        f"'url' = 'jdbc:mysql://db:3306/dw', 'table-name' = '{name}');\n"
    )


TRAINING_SCRIPTS = [
    # filter and project, Kafka into JDBC
    _EVENTS
    + _sink("big_events", "id BIGINT, kind STRING, amount DECIMAL(10, 2)")
    + "INSERT INTO big_events SELECT id, UPPER(kind), amount FROM events WHERE amount > 100 AND kind <> 'test';",
    # lookup join
    _EVENTS
    + _ACCOUNTS
    + _sink("enriched", "id BIGINT, region STRING, amount DECIMAL(10, 2)")
    + "INSERT INTO enriched SELECT e.id, a.region, e.amount FROM events AS e "
    "JOIN accounts FOR SYSTEM_TIME AS OF e.proc_time AS a ON e.account_id = a.id;",
    # window TVF aggregate
    _EVENTS
    + _sink("per_minute", "kind STRING, window_start TIMESTAMP(3), total DECIMAL(38, 2), n BIGINT")
    + "INSERT INTO per_minute SELECT kind, window_start, SUM(amount), COUNT(*) "
    "FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) "
    "GROUP BY kind, window_start, window_end;",
    # CDC source into an upsert sink, through a view
    """CREATE TABLE orders (id BIGINT, account_id BIGINT, total DECIMAL(10, 2), status STRING,
  PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'mysql-cdc', 'hostname' = 'db', 'port' = '3306',
  'database-name' = 'shop', 'table-name' = 'orders');
"""
    + _ACCOUNTS
    + "CREATE TEMPORARY VIEW open_orders AS SELECT o.id, a.region, o.total FROM orders AS o "
    "JOIN accounts AS a ON o.account_id = a.id WHERE o.status <> 'closed';\n"
    + _sink("open_by_region", "region STRING, total DECIMAL(38, 2)", key="region")
    + "INSERT INTO open_by_region SELECT region, SUM(total) FROM open_orders GROUP BY region;",
    # deduplication and Top-N into two sinks of a statement set
    _EVENTS
    + _sink("latest", "id BIGINT, kind STRING, ts TIMESTAMP(3)", key="id")
    + _sink("top_kinds", "kind STRING, amount DECIMAL(10, 2), rn BIGINT", key="kind, rn")
    + """EXECUTE STATEMENT SET BEGIN
INSERT INTO latest SELECT id, kind, ts FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY ts DESC) AS rn FROM events) WHERE rn = 1;
INSERT INTO top_kinds SELECT kind, amount, rn FROM (
  SELECT kind, amount, ROW_NUMBER() OVER (PARTITION BY kind ORDER BY amount DESC) AS rn FROM events)
WHERE rn <= 3;
END;""",
    # interval join, UNION ALL and a CTE
    _EVENTS
    + """CREATE TABLE refunds (id BIGINT, event_id BIGINT, amount DECIMAL(10, 2), ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'kafka', 'topic' = 'refunds',
  'properties.bootstrap.servers' = 'kafka:9092', 'format' = 'json');
"""
    + _sink("movements", "id BIGINT, amount DECIMAL(10, 2), source STRING")
    + "INSERT INTO movements WITH refunded AS (SELECT r.id, -r.amount AS amount FROM refunds AS r, events AS e "
    "WHERE r.event_id = e.id AND r.ts BETWEEN e.ts AND e.ts + INTERVAL '1' HOUR) "
    "SELECT id, amount, 'event' FROM events UNION ALL SELECT id, amount, 'refund' FROM refunded;",
    # OVER aggregate, UNNEST and a semi join
    _EVENTS
    + _ACCOUNTS
    # into a changelog topic: on 2.3 the semi join's result retracts, which a JDBC table without a
    # key (like the real connector) refuses
    + "CREATE TABLE running_totals (id BIGINT, tag STRING, running_total DECIMAL(38, 2)) WITH ("
    "'connector' = 'kafka', 'topic' = 'running_totals', 'properties.bootstrap.servers' = 'kafka:9092', "
    "'format' = 'debezium-json');\n"
    + "INSERT INTO running_totals SELECT id, tag, SUM(amount) OVER (PARTITION BY account_id ORDER BY proc_time "
    "ROWS BETWEEN 10 PRECEDING AND CURRENT ROW) FROM events CROSS JOIN UNNEST(tags) AS t (tag) "
    "WHERE account_id IN (SELECT id FROM accounts WHERE tier = 'gold');",
    # a batch job over files
    """SET 'execution.runtime-mode' = 'batch';
CREATE TABLE daily_files (account_id BIGINT, amount DECIMAL(10, 2), dt STRING) PARTITIONED BY (dt)
WITH ('connector' = 'filesystem', 'path' = 's3://lake/daily', 'format' = 'parquet');
CREATE TABLE totals (account_id BIGINT, total DECIMAL(38, 2), dt STRING) PARTITIONED BY (dt)
WITH ('connector' = 'filesystem', 'path' = 's3://lake/totals', 'format' = 'parquet');
INSERT OVERWRITE totals SELECT account_id, SUM(amount), dt FROM daily_files GROUP BY account_id, dt;""",
]


def training_requests(provisioned: Provisioned) -> list[CompileRequest]:
    """The training scripts as compile requests for this version."""
    from planlineage import script
    from planlineage.planner.request import build_request

    return [build_request(script.split(sql), provisioned, [])[0] for sql in TRAINING_SCRIPTS]
