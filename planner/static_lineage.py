"""The degraded, table-level lineage of a script the planner could not compile.

Used only when a script with stood-in catalogs still cannot be compiled (no schema the planner
could be given makes its tables fit): rather than nothing, each INSERT (and CTAS) gives its target
and the tables its query names after FROM / JOIN, read from the text. Every edge is a table the
SQL names: names of the script's own views are followed to the tables they read, names of its
WITH queries are not tables, and nothing is guessed beyond that. Each INSERT stays its own sink.
The result is marked `"method": "static"` by the caller, with a WARN naming the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from planlineage import script as sql_script
from planlineage.planner.insert_parts import inserts, masked

_NAME = r"(?:`(?:[^`]|``)+`|[A-Za-z_][\w$]*)"
_QUALIFIED = rf"{_NAME}(?:\s*\.\s*{_NAME}){{0,2}}"
_FROM = re.compile(rf"\b(?:FROM|JOIN)\s+(?!LATERAL\b|TABLE\s*\(|UNNEST\s*\()({_QUALIFIED})", re.IGNORECASE)
_LIST_ITEM = re.compile(rf"\s*(?:(?:AS\s+)?{_NAME}\s*)?,\s*(?!LATERAL\b|TABLE\s*\(|UNNEST\s*\()({_QUALIFIED})", re.I)
_CTE = re.compile(rf"(?:\bWITH|,)\s*({_NAME})\s*(?:\([^()]*\)\s*)?AS\s*\(", re.IGNORECASE)
_KEYWORDS = {"SELECT", "WHERE", "GROUP", "ORDER", "LIMIT", "UNION", "ON", "LEFT", "RIGHT", "INNER", "JOIN"}
_CREATE = re.compile(
    rf"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMPORARY\s+)?(?P<what>TABLE|VIEW|CATALOG)\s+(?:IF\s+NOT\s+EXISTS\s+)?"
    rf"(?P<name>{_QUALIFIED})",
    re.IGNORECASE,
)
_PAIR = re.compile(r"'((?:[^']|'')*)'\s*=\s*'((?:[^']|'')*)'")


@dataclass
class StaticSink:
    table: str
    options: dict[str, str]
    inputs: list[tuple[str, dict[str, str]]] = field(default_factory=list)  # (table, options)


def static_lineage(statements: list[sql_script.Statement]) -> list[StaticSink]:
    state = _Script()
    sinks: list[StaticSink] = []
    for statement in statements:
        sql = statement.for_planner()
        if statement.kind in (sql_script.Kind.INSERT, sql_script.Kind.STATEMENT_SET):
            for insert in inserts(_without_partition(sql)):
                sinks.append(state.sink(insert["target"], insert["query"]))
        elif statement.kind is sql_script.Kind.CTAS:
            created = _CREATE.match(sql)
            query = re.search(r"\bAS\s+((?:SELECT|WITH|VALUES)\b.*)$", masked(sql), re.IGNORECASE | re.DOTALL)
            if created and query:
                state.declare(created, sql)
                sinks.append(state.sink(created["name"], sql[query.start(1) :]))
        elif statement.kind is sql_script.Kind.DDL:
            state.ddl(statement, sql)
    return sinks


def _without_partition(sql: str) -> str:
    """`INSERT INTO t PARTITION (k = 'v') SELECT` -> `INSERT INTO t SELECT` (only tables matter here)."""
    return re.sub(r"(\bINTO\s+" + _QUALIFIED + r")\s+PARTITION\s*\([^()]*\)", r"\1", sql, flags=re.IGNORECASE)


def _parts(name: str) -> list[str]:
    return [p.strip().strip("`").replace("``", "`") for p in re.findall(_NAME, name)]


class _Script:
    """What the script declared so far: current catalog and database, tables, views, catalogs."""

    def __init__(self) -> None:
        self.catalog, self.database = "default_catalog", "default_database"
        self.catalogs: dict[str, dict[str, str]] = {}
        self.tables: dict[str, dict[str, str]] = {}
        self.views: dict[str, str] = {}

    def qualify(self, name: str) -> str:
        parts = _parts(name)
        if len(parts) == 1:
            parts = [self.catalog, self.database, *parts]
        elif len(parts) == 2:
            parts = [self.catalog, *parts]
        return ".".join(parts)

    def options(self, table: str) -> dict[str, str]:
        if table in self.tables:
            return self.tables[table]
        props = self.catalogs.get(table.split(".")[0])
        if props is None:
            return {}
        kind = props.get("type", "")
        return {
            "connector": kind,
            "planlineage.catalog-type": kind,
            **{f"planlineage.catalog.{k}": v for k, v in props.items() if k != "type"},
        }

    def declare(self, created: re.Match, sql: str) -> None:
        pairs = {k.replace("''", "'"): v.replace("''", "'") for k, v in _PAIR.findall(_with_clause(sql))}
        what, name = created["what"].upper(), created["name"]
        if what == "CATALOG":
            self.catalogs[_parts(name)[-1]] = pairs
        elif what == "TABLE":
            table = self.qualify(name)
            options = dict(pairs) or self.options(table)
            self.tables[table] = options

    def ddl(self, statement: sql_script.Statement, sql: str) -> None:
        words = statement.words
        created = _CREATE.match(sql)
        if created and created["what"].upper() == "VIEW":
            body = re.search(r"\bAS\s+((?:SELECT|WITH|VALUES)\b.*)$", masked(sql), re.IGNORECASE | re.DOTALL)
            if body:
                self.views[self.qualify(created["name"])] = sql[body.start(1) :]
        elif created:
            self.declare(created, sql)
        elif words[:2] == ["USE", "CATALOG"]:
            self.catalog = _parts(sql.split(None, 2)[2])[0]
            self.database = self.catalogs.get(self.catalog, {}).get("default-database") or (
                "default_database" if self.catalog == "default_catalog" else "default"
            )
        elif words[:1] == ["USE"] and words[1:2] != ["MODULES"]:
            parts = _parts(sql.split(None, 1)[1])
            if len(parts) == 2:
                self.catalog = parts[0]
            self.database = parts[-1]

    def sink(self, target: str, query: str) -> StaticSink:
        table = self.qualify(target)
        inputs: list[tuple[str, dict[str, str]]] = []
        for name in self.reads(query, depth=0):
            if name not in [i for i, _ in inputs]:
                inputs.append((name, self.options(name)))
        return StaticSink(table, self.options(table), inputs)

    def reads(self, query: str, depth: int) -> list[str]:
        """Qualified tables a query names after FROM/JOIN; views followed, WITH names skipped."""
        text = masked(query)
        local = {_parts(m[1])[0].lower() for m in _CTE.finditer(text)}
        found: list[str] = []
        for match in _FROM.finditer(text):
            names = [match[1]]
            rest = text[match.end() :]
            while item := _LIST_ITEM.match(rest):
                names.append(item[1])
                rest = rest[item.end() :]
            for name in names:
                parts = _parts(name)
                if parts[0].upper() in _KEYWORDS or (len(parts) == 1 and parts[0].lower() in local):
                    continue
                table = self.qualify(name)
                if table in self.views and depth < 10:
                    found.extend(self.reads(self.views[table], depth + 1))
                else:
                    found.append(table)
        return found


def _with_clause(sql: str) -> str:
    match = re.search(r"\bWITH\s*\(", masked(sql), re.IGNORECASE)
    return sql[match.end() :] if match else ""


#: The script reader and its CREATE pattern, shared with planner.sink_statements so that a sink
#: table is qualified the same way by both.
ScriptState = _Script
CREATE_STATEMENT = _CREATE
