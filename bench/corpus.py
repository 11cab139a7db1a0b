"""A corpus of realistic Flink SQL jobs with their expected table lineage, generated (seeded).

    python bench/corpus.py OUT_DIR [--count 200]

writes OUT_DIR/NNN-shape.sql and OUT_DIR/expected.json ({file: {sink: [inputs]}}, tables by
their short name). The shapes are the ones platforms submit: Kafka to JDBC with filters,
statement sets of independent INSERTs (each sink pairs with its own inputs), lookup joins,
window TVF aggregates, CDC sources into upsert sinks, temporary views over joins, CTEs, interval
and temporal joins, unions, Top-N and deduplication, semi joins, CTAS, batch jobs over files,
CREATE TABLE ... LIKE, UNNEST, MATCH_RECOGNIZE, OVER aggregates, hints, SET and comments. Names, connectors and sizes vary per job.
An input is every table the sink's rows are read from, lookup and temporal dimension tables and
sub-query tables included; views count as the tables under them.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from pathlib import Path

Expected = dict[str, list[str]]

DOMAINS = ["orders", "payments", "clicks", "shipments", "sessions", "refunds", "invoices", "trips", "ads", "logins"]
ENTITIES = ["customers", "products", "merchants", "drivers", "stores", "campaigns", "accounts", "devices"]


def _kafka(name: str, rng: random.Random) -> str:
    return (
        f"'connector' = 'kafka', 'topic' = '{name}.v{rng.randint(1, 3)}', "
        f"'properties.bootstrap.servers' = 'kafka-{rng.randint(1, 3)}.prod:9092', "
        f"'properties.group.id' = 'etl-{name}', 'scan.startup.mode' = 'earliest-offset', 'format' = 'json'"
    )


def _jdbc(name: str, rng: random.Random) -> str:
    db = rng.choice(["postgresql://pg.prod:5432/dw", "mysql://mysql.prod:3306/crm"])
    return f"'connector' = 'jdbc', 'url' = 'jdbc:{db}', 'table-name' = '{name}', 'username' = 'etl', 'password' = 'FAKE-pw'"


def _cdc(name: str, rng: random.Random) -> str:
    return (
        "'connector' = 'mysql-cdc', 'hostname' = 'mysql.prod', 'port' = '3306', 'username' = 'cdc', "
        f"'password' = 'FAKE-pw', 'database-name' = 'shop', 'table-name' = '{name}'"
    )


def _upsert_kafka(name: str, rng: random.Random) -> str:
    return (
        f"'connector' = 'upsert-kafka', 'topic' = '{name}', 'properties.bootstrap.servers' = 'kafka-1.prod:9092', "
        "'key.format' = 'json', 'value.format' = 'json'"
    )


def _files(name: str, rng: random.Random) -> str:
    return f"'connector' = 'filesystem', 'path' = 's3://lake/{name}', 'format' = '{rng.choice(['parquet', 'orc', 'json'])}'"


def _sink_options(name: str, rng: random.Random) -> str:
    return rng.choice([_jdbc, _upsert_kafka, _files, _kafka])(name, rng)


def events(name: str, rng: random.Random, connector=None, temporary: bool = False) -> str:
    """A stream of events with an event-time attribute."""
    options = (connector or rng.choice([_kafka, _kafka, _cdc]))(name, rng)
    key = ",\n  PRIMARY KEY (id) NOT ENFORCED" if "cdc" in options else ""
    return (
        f"CREATE {'TEMPORARY ' if temporary else ''}TABLE {name} (\n  id BIGINT,\n  entity_id BIGINT,\n"
        "  amount DOUBLE,\n  label STRING,\n  ts TIMESTAMP(3),\n  proc AS PROCTIME(),\n"
        f"  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND{key}\n) WITH ({options});"
    )


def dimension(name: str, rng: random.Random, connector=None) -> str:
    options = (connector or _jdbc)(name, rng)
    return (
        f"CREATE TABLE {name} (\n  entity_id BIGINT,\n  title STRING,\n  region STRING,\n"
        f"  PRIMARY KEY (entity_id) NOT ENFORCED\n) WITH ({options}, 'lookup.cache' = 'PARTIAL');"
        if options.startswith("'connector' = 'jdbc'")
        else f"CREATE TABLE {name} (\n  entity_id BIGINT,\n  title STRING,\n  region STRING,\n"
        f"  PRIMARY KEY (entity_id) NOT ENFORCED\n) WITH ({options});"
    )


def _changelog_kafka(name: str, rng: random.Random) -> str:
    """A topic of every change (a CDC format): what a query's updates without a key are written to."""
    return (
        f"'connector' = 'kafka', 'topic' = '{name}', 'properties.bootstrap.servers' = 'kafka-1.prod:9092', "
        f"'format' = '{rng.choice(['debezium-json', 'canal-json'])}'"
    )


def sink(name: str, columns: str, rng: random.Random, key: str | None = None, changes: bool = False) -> str:
    """``changes``: the query writes updates or deletes (an aggregate, a rank, an outer join, a CDC
    source); then the sink is one that takes them, as the real connectors do (a JSON or Parquet
    sink takes inserts only): JDBC or upsert-kafka with the key, a CDC-format topic without one."""
    pk = f",\n  PRIMARY KEY ({key}) NOT ENFORCED" if key else ""
    options = _sink_options(name, rng)
    if "upsert-kafka" in options and not key:
        options = _kafka(name, rng)
    if changes and not key:
        options = _changelog_kafka(name, rng)
    elif changes and not options.startswith(("'connector' = 'jdbc'", "'connector' = 'upsert-kafka'")):
        options = _upsert_kafka(name, rng)
    return f"CREATE TABLE {name} (\n  {columns}{pk}\n) WITH ({options});"


def _changelog(*ddl: str) -> bool:
    """Whether a source among these tables is a changelog (a CDC connector)."""
    return any("-cdc'" in text for text in ddl)


def _names(rng: random.Random, k: int, pool=DOMAINS) -> list[str]:
    return rng.sample(pool, k)


# -- shapes: each returns (script, expected lineage) -------------------------------------------


def filter_project(rng: random.Random) -> tuple[str, Expected]:
    (src,) = _names(rng, 1)
    out = f"{src}_clean"
    sql = "\n".join(
        [
            f"-- {src}: drop test traffic, normalise labels",
            source := events(src, rng),
            sink(out, "id BIGINT, label STRING, amount DOUBLE", rng, changes=_changelog(source)),
            f"INSERT INTO {out}\nSELECT id, UPPER(TRIM(label)), amount * {rng.randint(2, 9)}\n"
            f"FROM {src}\nWHERE label <> 'test' AND amount > {rng.randint(0, 100)};",
        ]
    )
    return sql, {out: [src]}


def statement_set(rng: random.Random) -> tuple[str, Expected]:
    n = rng.randint(2, 5)
    sources = _names(rng, n)
    ddl, inserts, expected = [], [], {}
    for src in sources:
        ddl.append(events(src, rng))
        out = f"{src}_by_label"
        ddl.append(sink(out, "label STRING, total DOUBLE", rng, key="label", changes=True))
        inserts.append(f"INSERT INTO {out} SELECT label, SUM(amount) FROM {src} GROUP BY label;")
        expected[out] = [src]
    body = "\n".join(inserts)
    wrapper = rng.choice(["execute", "begin"])
    if wrapper == "execute":
        script = "\n".join(ddl) + f"\nEXECUTE STATEMENT SET\nBEGIN\n{body}\nEND;"
    else:
        script = "\n".join(ddl) + f"\nBEGIN STATEMENT SET;\n{body}\nEND;"
    return script, expected


def lookup_join(rng: random.Random) -> tuple[str, Expected]:
    (src,) = _names(rng, 1)
    (dim,) = _names(rng, 1, ENTITIES)
    out = f"{src}_enriched"
    sql = "\n".join(
        [
            "SET 'table.exec.state.ttl' = '1 h';",
            events(src, rng, _kafka),
            dimension(dim, rng),
            sink(out, "id BIGINT, title STRING, region STRING, amount DOUBLE", rng),  # inserts: no key (2.3 asks
            # an upsert sink whose key the query does not keep for ON CONFLICT)
            f"INSERT INTO {out}\nSELECT e.id, d.title, d.region, e.amount\nFROM {src} AS e\n"
            f"JOIN {dim} FOR SYSTEM_TIME AS OF e.proc AS d\n  ON e.entity_id = d.entity_id;",
        ]
    )
    return sql, {out: sorted([src, dim])}


def window_aggregate(rng: random.Random) -> tuple[str, Expected]:
    (src,) = _names(rng, 1)
    out = f"{src}_per_window"
    window = rng.choice(
        [
            f"TUMBLE(TABLE {src}, DESCRIPTOR(ts), INTERVAL '{rng.randint(1, 10)}' MINUTES)",
            f"HOP(TABLE {src}, DESCRIPTOR(ts), INTERVAL '1' MINUTES, INTERVAL '{rng.randint(2, 10)}' MINUTES)",
            f"CUMULATE(TABLE {src}, DESCRIPTOR(ts), INTERVAL '1' MINUTES, INTERVAL '{rng.randint(2, 10)}' MINUTES)",
        ]
    )
    sql = "\n".join(
        [
            events(src, rng, _kafka),
            sink(
                out, "window_start TIMESTAMP(3), window_end TIMESTAMP(3), entity_id BIGINT, n BIGINT, total DOUBLE", rng
            ),
            f"INSERT INTO {out}\nSELECT window_start, window_end, entity_id, COUNT(*), SUM(amount)\n"
            f"FROM TABLE({window})\nGROUP BY window_start, window_end, entity_id;",
        ]
    )
    return sql, {out: [src]}


def cdc_upsert(rng: random.Random) -> tuple[str, Expected]:
    (src,) = _names(rng, 1)
    out = f"{src}_totals"
    sql = "\n".join(
        [
            "-- binlog of the shop database, aggregated per entity into a compacted topic",
            events(src, rng, _cdc),
            f"CREATE TABLE {out} (\n  entity_id BIGINT,\n  total DOUBLE,\n  n BIGINT,\n"
            f"  PRIMARY KEY (entity_id) NOT ENFORCED\n) WITH ({_upsert_kafka(out, rng)});",
            f"INSERT INTO {out} SELECT entity_id, SUM(amount), COUNT(*) FROM {src} GROUP BY entity_id;",
        ]
    )
    return sql, {out: [src]}


def view_join(rng: random.Random) -> tuple[str, Expected]:
    a, b = _names(rng, 2)
    (dim,) = _names(rng, 1, ENTITIES)
    view = f"{a}_with_{b}"
    out = f"{view}_report"
    sql = "\n".join(
        [
            events(a, rng, _kafka),
            events(b, rng, _kafka),
            dimension(dim, rng),
            f"CREATE TEMPORARY VIEW {view} AS\nSELECT x.id, x.entity_id, x.amount + y.amount AS amount\n"
            f"FROM {a} AS x JOIN {b} AS y ON x.id = y.id;",
            # No sink key: Flink 2.3 asks for ON CONFLICT when the query's upsert key differs from it.
            sink(out, "id BIGINT, title STRING, amount DOUBLE", rng, changes=True),  # a LEFT JOIN retracts
            f"INSERT INTO {out}\nSELECT v.id, d.title, v.amount FROM {view} AS v\n"
            f"LEFT JOIN {dim} AS d ON v.entity_id = d.entity_id;",
        ]
    )
    return sql, {out: sorted([a, b, dim])}


def multi_join(rng: random.Random) -> tuple[str, Expected]:
    n = rng.randint(3, 5)
    tables = _names(rng, n)
    out = "joined_" + "_".join(t[:3] for t in tables)
    ddl = [events(t, rng, _kafka) for t in tables]
    joins = " ".join(f"JOIN {t} ON {tables[0]}.id = {t}.id" for t in tables[1:])
    total = " + ".join(f"{t}.amount" for t in tables)
    sql = "\n".join(
        ddl
        + [
            sink(out, "id BIGINT, amount DOUBLE", rng),  # inserts: no key, as in lookup_join
            f"INSERT INTO {out}\nSELECT {tables[0]}.id, {total}\nFROM {tables[0]} {joins};",
        ]
    )
    return sql, {out: sorted(tables)}


def interval_join(rng: random.Random) -> tuple[str, Expected]:
    a, b = _names(rng, 2)
    out = f"{a}_matched_{b}"
    sql = "\n".join(
        [
            events(a, rng, _kafka),
            events(b, rng, _kafka),
            sink(out, "id BIGINT, gap_amount DOUBLE, ts TIMESTAMP(3)", rng),
            f"INSERT INTO {out}\nSELECT x.id, x.amount - y.amount, x.ts\nFROM {a} AS x, {b} AS y\n"
            f"WHERE x.id = y.id AND y.ts BETWEEN x.ts - INTERVAL '{rng.randint(1, 30)}' MINUTE AND x.ts;",
        ]
    )
    return sql, {out: sorted([a, b])}


def temporal_join(rng: random.Random) -> tuple[str, Expected]:
    (src,) = _names(rng, 1)
    rates = rng.choice(["rates", "prices", "fx_rates", "tariffs"])
    out = f"{src}_converted"
    sql = "\n".join(
        [
            events(src, rng, _kafka),
            f"CREATE TABLE {rates} (\n  entity_id BIGINT,\n  rate DOUBLE,\n  ts TIMESTAMP(3),\n"
            f"  WATERMARK FOR ts AS ts,\n  PRIMARY KEY (entity_id) NOT ENFORCED\n) WITH ({_upsert_kafka(rates, rng)});",
            sink(out, "id BIGINT, converted DOUBLE", rng),
            f"INSERT INTO {out}\nSELECT e.id, e.amount * r.rate\nFROM {src} AS e\n"
            f"JOIN {rates} FOR SYSTEM_TIME AS OF e.ts AS r ON e.entity_id = r.entity_id;",
        ]
    )
    return sql, {out: sorted([src, rates])}


def union_all(rng: random.Random) -> tuple[str, Expected]:
    n = rng.randint(2, 4)
    tables = _names(rng, n)
    out = "all_" + rng.choice(["events", "activity", "facts"])
    selects = "\nUNION ALL\n".join(f"SELECT id, '{t}' AS origin, amount FROM {t}" for t in tables)
    sources = [events(t, rng) for t in tables]
    sql = "\n".join(sources + [sink(out, "id BIGINT, origin STRING, amount DOUBLE", rng, changes=_changelog(*sources))])
    return sql + f"\nINSERT INTO {out}\n{selects};", {out: sorted(tables)}


def cte(rng: random.Random) -> tuple[str, Expected]:
    a, b = _names(rng, 2)
    out = f"{a}_vs_{b}"
    sql = "\n".join(
        [
            events(a, rng, _kafka),
            events(b, rng, _kafka),
            sink(out, "entity_id BIGINT, a_total DOUBLE, b_total DOUBLE", rng, key="entity_id", changes=True),
            f"INSERT INTO {out}\nWITH a_totals AS (SELECT entity_id, SUM(amount) AS total FROM {a} GROUP BY entity_id),\n"
            f"     b_totals AS (SELECT entity_id, SUM(amount) AS total FROM {b} GROUP BY entity_id)\n"
            "SELECT a_totals.entity_id, a_totals.total, b_totals.total\n"
            "FROM a_totals JOIN b_totals ON a_totals.entity_id = b_totals.entity_id;",
        ]
    )
    return sql, {out: sorted([a, b])}


def top_n(rng: random.Random) -> tuple[str, Expected]:
    (src,) = _names(rng, 1)
    out = f"top_{src}"
    k = rng.randint(1, 10)
    order = rng.choice(["amount DESC", "ts DESC", "ts ASC"])
    sql = "\n".join(
        [
            events(src, rng, _kafka),  # ranking a changelog is not supported
            sink(out, "entity_id BIGINT, id BIGINT, amount DOUBLE", rng, changes=True),  # no key: as in view_join
            f"INSERT INTO {out}\nSELECT entity_id, id, amount FROM (\n"
            f"  SELECT *, ROW_NUMBER() OVER (PARTITION BY entity_id ORDER BY {order}) AS rn FROM {src}\n"
            f") WHERE rn <= {k};",
        ]
    )
    return sql, {out: [src]}


def semi_join(rng: random.Random) -> tuple[str, Expected]:
    a, b = _names(rng, 2)
    out = f"{a}_known"
    op = rng.choice(["IN", "EXISTS"])
    where = (
        f"entity_id IN (SELECT entity_id FROM {b} WHERE amount > 0)"
        if op == "IN"
        else f"EXISTS (SELECT 1 FROM {b} WHERE {b}.entity_id = {a}.entity_id)"
    )
    sql = "\n".join(
        [
            events(a, rng, _kafka),
            events(b, rng, _kafka),
            sink(out, "id BIGINT, amount DOUBLE", rng),  # inserts: no key, as in lookup_join
            f"INSERT INTO {out}\nSELECT id, amount FROM {a}\nWHERE {where};",
        ]
    )
    return sql, {out: sorted([a, b])}


def ctas(rng: random.Random) -> tuple[str, Expected]:
    (src,) = _names(rng, 1)
    out = f"{src}_snapshot"
    sql = "\n".join(
        [
            events(src, rng, _kafka),
            f"CREATE TABLE {out} WITH ({_jdbc(out, rng)})\nAS SELECT id, label, amount FROM {src} WHERE amount > 0;",
        ]
    )
    return sql, {out: [src]}


def batch_files(rng: random.Random) -> tuple[str, Expected]:
    a, b = _names(rng, 2)
    out = f"daily_{a}"
    sql = "\n".join(
        [
            "SET 'execution.runtime-mode' = 'batch';",
            f"CREATE TABLE {a} (id BIGINT, entity_id BIGINT, amount DOUBLE, dt STRING) PARTITIONED BY (dt)\n"
            f"WITH ({_files(a, rng)});",
            f"CREATE TABLE {b} (entity_id BIGINT, region STRING) WITH ({_files(b, rng)});",
            f"CREATE TABLE {out} (dt STRING, region STRING, total DOUBLE) WITH ({_files(out, rng)});",
            f"INSERT OVERWRITE {out}\nSELECT x.dt, y.region, SUM(x.amount)\nFROM {a} AS x JOIN {b} AS y "
            f"ON x.entity_id = y.entity_id\nWHERE x.dt >= '2026-01-0{rng.randint(1, 9)}'\nGROUP BY x.dt, y.region;",
        ]
    )
    return sql, {out: sorted([a, b])}


def like_and_hints(rng: random.Random) -> tuple[str, Expected]:
    (src,) = _names(rng, 1)
    copy = f"{src}_replay"
    out = f"{src}_mirror"
    sql = "\n".join(
        [
            events(src, rng, _kafka),
            f"CREATE TEMPORARY TABLE {copy} WITH ('scan.startup.mode' = 'latest-offset') LIKE {src};",
            sink(out, "id BIGINT, label STRING", rng),
            f"INSERT INTO {out}\nSELECT id, label FROM {copy} /*+ OPTIONS('properties.group.id' = 'mirror') */;",
        ]
    )
    return sql, {out: [copy]}


def unnest_tags(rng: random.Random) -> tuple[str, Expected]:
    (src,) = _names(rng, 1)
    out = f"{src}_tags"
    sql = "\n".join(
        [
            f"CREATE TABLE {src} (id BIGINT, tags ARRAY<STRING>) WITH ({_kafka(src, rng)});",
            sink(out, "id BIGINT, tag STRING", rng),
            f"INSERT INTO {out}\nSELECT id, tag FROM {src} CROSS JOIN UNNEST(tags) AS t (tag);",
        ]
    )
    return sql, {out: [src]}


def dedup_then_two_sinks(rng: random.Random) -> tuple[str, Expected]:
    a, b = _names(rng, 2)
    first, second = f"{a}_latest", f"{b}_count"
    sql = "\n".join(
        [
            events(a, rng, _kafka),
            events(b, rng, _kafka),
            sink(first, "id BIGINT, label STRING", rng, key="id", changes=True),
            sink(second, "label STRING, n BIGINT", rng, key="label", changes=True),
            f"INSERT INTO {first}\nSELECT id, label FROM (\n  SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY proc DESC) AS rn\n"
            f"  FROM {a}) WHERE rn = 1;",
            f"INSERT INTO {second} SELECT label, COUNT(*) FROM {b} GROUP BY label;",
        ]
    )
    return sql, {first: [a], second: [b]}


def match_recognize(rng: random.Random) -> tuple[str, Expected]:
    (src,) = _names(rng, 1)
    out = f"{src}_alerts"
    sql = "\n".join(
        [
            "-- three rising amounts within the pattern window: an alert per entity",
            events(src, rng, _kafka),
            sink(out, "entity_id BIGINT, first_ts TIMESTAMP(3), last_amount DOUBLE", rng),
            f"INSERT INTO {out}\nSELECT entity_id, first_ts, last_amount FROM {src}\nMATCH_RECOGNIZE (\n"
            "  PARTITION BY entity_id ORDER BY ts\n  MEASURES A.ts AS first_ts, C.amount AS last_amount\n"
            "  ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW\n"
            f"  PATTERN (A B C) WITHIN INTERVAL '{rng.randint(1, 30)}' MINUTE\n"
            "  DEFINE B AS B.amount > A.amount, C AS C.amount > B.amount\n) AS m;",
        ]
    )
    return sql, {out: [src]}


def over_aggregate(rng: random.Random) -> tuple[str, Expected]:
    (src,) = _names(rng, 1)
    out = f"{src}_running"
    sql = "\n".join(
        [
            events(src, rng, _kafka),
            sink(out, "id BIGINT, entity_id BIGINT, last_hour DOUBLE", rng),
            f"INSERT INTO {out}\nSELECT id, entity_id,\n  SUM(amount) OVER (PARTITION BY entity_id ORDER BY ts\n"
            f"    RANGE BETWEEN INTERVAL '{rng.randint(1, 24)}' HOUR PRECEDING AND CURRENT ROW)\nFROM {src};",
        ]
    )
    return sql, {out: [src]}


SHAPES: list[Callable[[random.Random], tuple[str, Expected]]] = [
    filter_project,
    statement_set,
    lookup_join,
    window_aggregate,
    cdc_upsert,
    view_join,
    multi_join,
    interval_join,
    temporal_join,
    union_all,
    cte,
    top_n,
    semi_join,
    ctas,
    batch_files,
    like_and_hints,
    unnest_tags,
    dedup_then_two_sinks,
    match_recognize,
    over_aggregate,
]


def generate(count: int = 200, seed: int = 16) -> dict[str, tuple[str, Expected]]:
    """{file name: (script, expected)}, the shapes in turn."""
    rng = random.Random(seed)
    jobs = {}
    for index in range(count):
        shape = SHAPES[index % len(SHAPES)]
        script, expected = shape(rng)
        jobs[f"{index:03d}-{shape.__name__}.sql"] = (script + "\n", {k: sorted(v) for k, v in expected.items()})
    return jobs


def write(folder: Path, count: int = 200, seed: int = 16) -> dict[str, Expected]:
    folder.mkdir(parents=True, exist_ok=True)
    expected = {}
    for name, (script, lineage) in generate(count, seed).items():
        (folder / name).write_text(script, encoding="utf-8")
        expected[name] = lineage
    (folder / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True), encoding="utf-8")
    return expected


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=16)
    args = parser.parse_args()
    expected = write(args.out, args.count, args.seed)
    print(f"{len(expected)} scripts in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
