"""A state store as an earlier planlineage left it: the migration steps up to ``version`` applied,
and the version recorded as that release recorded it, so that the next open runs the later steps
on rows an older release wrote (the migration tests fill it before opening it)."""

from __future__ import annotations

import sqlite3

from planlineage.store import migrations


def sqlite_at(path, version: int) -> sqlite3.Connection:
    """A SQLite store file at ``version`` and an autocommit connection to fill it (close it after)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    for number, _text, statements in migrations.steps_after(0, "sqlite"):
        if number > version:
            break
        for statement in statements:
            conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {version}")
    return conn


def postgres_at(conn, version: int) -> None:
    """The schema ``planlineage`` at ``version`` in the database of ``conn`` (psycopg, autocommit),
    its search path set to it."""
    conn.execute("CREATE SCHEMA planlineage")
    conn.execute("SET search_path TO planlineage")
    conn.execute(
        "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, description TEXT NOT NULL, "
        "applied TEXT NOT NULL, node TEXT NOT NULL)"
    )
    for number, text, statements in migrations.steps_after(0, "postgresql"):
        if number > version:
            break
        for statement in statements:
            conn.execute(statement)
        conn.execute("INSERT INTO schema_version VALUES (%s, %s, 'then', 'old-node')", (number, text))
