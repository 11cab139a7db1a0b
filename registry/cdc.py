"""Flink CDC sources (mysql-cdc, postgres-cdc, oracle-cdc, sqlserver-cdc) -> the JDBC identity.

OpenLineage has no rule of its own for CDC sources. naming.md's choice: build the JDBC URL a
Spark or Flink JDBC job would use for the same server (`hostname`, `port`, `database-name`) and
apply the JDBC rule of that database (jdbc.py), so that a CDC source and a JDBC read of the same
table meet in one node: `mysql://host:3306` + `db.table`, `postgres://host:5432` +
`db.schema.table`, and so on. A port the table does not set is left out of the URL, so the JDBC
rule adds that database's default port (and none for SQL Server).

Flink CDC reads `database-name`, `schema-name` and `table-name` as regular expressions. A value
that is more than a plain identifier (letters, digits, `_`, `$`) may stand for many tables that
only the database knows: no dataset, a warning naming the option.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import cast

from .jdbc import JdbcUnsupported, jdbc_identity
from .rule_result import RuleResult, require

_PLAIN_IDENTIFIER = re.compile(r"[A-Za-z0-9_$]+")


def _url(connector: str, host: str, port: str | None, database: str) -> str:
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # IPv6 literal
    authority = host + (f":{port}" if port else "")
    if connector == "mysql-cdc":
        return f"jdbc:mysql://{authority}/{database}"
    if connector == "postgres-cdc":
        return f"jdbc:postgresql://{authority}/{database}"
    if connector == "oracle-cdc":
        return f"jdbc:oracle:thin:@//{authority}/{database}"
    if connector == "sqlserver-cdc":
        return f"jdbc:sqlserver://{authority};databaseName={database}"
    raise KeyError(connector)


CONNECTORS = ("mysql-cdc", "postgres-cdc", "oracle-cdc", "sqlserver-cdc")


def rule(options: Mapping[str, str], connector: str) -> RuleResult:
    oracle_url = options.get("url") if connector == "oracle-cdc" else None
    host = None if oracle_url else require(options, connector, "hostname")
    database = require(options, connector, "database-name")
    schema = require(options, connector, "schema-name") if connector in ("postgres-cdc", "oracle-cdc") else None
    table = require(options, connector, "table-name")

    # sqlserver-cdc writes its table as 'schema.table'; everywhere else a '.' is regex syntax.
    table_parts = table.split(".", 1) if connector == "sqlserver-cdc" else [table]
    checks = [("database-name", database), *([("schema-name", schema)] if schema else [])]
    checks += [("table-name", part) for part in table_parts]
    for option, value in checks:
        if not _PLAIN_IDENTIFIER.fullmatch(value):
            return RuleResult(
                warnings=[
                    f"connector '{connector}' option '{option}' = '{options[option]}' is a regular "
                    "expression, whose tables cannot be known offline; no dataset"
                ]
            )

    table_name = ".".join([schema, table] if schema else [table])
    try:
        if oracle_url:
            namespace, _ = jdbc_identity(oracle_url, table_name)
            return RuleResult(datasets=[(namespace, f"{database}.{table_name}")])
        url = _url(connector, cast(str, host), options.get("port"), database)  # a hostname unless oracle_url
        return RuleResult(datasets=[jdbc_identity(url, table_name)])
    except JdbcUnsupported as exc:
        return RuleResult(warnings=[f"connector '{connector}' cannot be named offline: {exc}; no dataset"])
