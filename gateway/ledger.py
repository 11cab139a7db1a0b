"""The proxy's sessions in the state store (tables of store step 10), so a restarted proxy, or
another proxy behind the same balancer, continues a session and never hands a job over twice.

``gateway_sessions(gateway, session → properties JSON, opened, created, used)`` — a session the
proxy saw; ``opened`` is 0 when its first call seen was not the opening one (a session opened before
the proxy stood in front of the gateway: its properties are unknown); ``used``: when a call naming
it was last seen (by any proxy sharing the store, written at most once a minute per proxy).
``gateway_statements(gateway, session, seq → kind, statement, operation, recorded)`` — what the
session ran, in order: ``configure`` (configure-session), ``statement``, ``script`` (v4).
``gateway_jobs_seen(job_id → gateway, session, operation, seen)`` — job ids handed over; kept
while their session is kept, and for the retention after it closed or was forgotten.

Each function is one piece of work inside the caller's transaction (``store.write(fn)``), written
in the SQL both backends understand (:mod:`planlineage.store.dialect`).  The statements are kept
raw, as the lifecycle's compile jobs keep theirs (the compile needs them), in the private store;
a session's rows are deleted when it closes, or when it was not used for the retention
(:func:`forget_unused`: a client that never closed it).
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple


class Script(NamedTuple):
    """A session's statements up to and including one operation's, and how it was opened."""

    statements: tuple[str, ...]
    properties: dict[str, str]
    opened: bool  # False: the session was opened before the proxy saw it (properties unknown)


def open_session(conn: Any, gateway: str, session: str, properties: dict[str, str], at: float) -> None:
    conn.execute(
        "INSERT INTO gateway_sessions (gateway, session, properties, opened, created, used) "
        "VALUES (?, ?, ?, 1, ?, ?) "
        "ON CONFLICT (gateway, session) DO UPDATE SET properties = excluded.properties, opened = 1",
        (gateway, session, json.dumps(properties, sort_keys=True), at, at),
    )


def append(conn: Any, gateway: str, session: str, kind: str, statement: str, operation: str | None, at: float) -> int:
    """Add a statement at the end of the session's (creating a session first seen here); its seq."""
    conn.execute(
        "INSERT INTO gateway_sessions (gateway, session, properties, opened, created, used) "
        "VALUES (?, ?, '{}', 0, ?, ?) ON CONFLICT (gateway, session) DO NOTHING",
        (gateway, session, at, at),
    )
    row = conn.execute(
        "SELECT COALESCE(MAX(seq), 0) FROM gateway_statements WHERE gateway = ? AND session = ?", (gateway, session)
    ).fetchone()
    seq = int(row[0]) + 1
    conn.execute(
        "INSERT INTO gateway_statements (gateway, session, seq, kind, statement, operation, recorded) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (gateway, session, seq, kind, statement, operation, at),
    )
    return seq


def script_until(conn: Any, gateway: str, session: str, operation: str) -> Script | None:
    """The session's statements up to the one that started ``operation``; None when the proxy
    never saw that statement (sent before it stood in front of the gateway, or its session closed)."""
    found = conn.execute(
        "SELECT seq FROM gateway_statements WHERE gateway = ? AND session = ? AND operation = ?",
        (gateway, session, operation),
    ).fetchone()
    if found is None:
        return None
    statements = tuple(
        row[0]
        for row in conn.execute(
            "SELECT statement FROM gateway_statements WHERE gateway = ? AND session = ? AND seq <= ? ORDER BY seq",
            (gateway, session, found[0]),
        )
    )
    head = conn.execute(
        "SELECT properties, opened FROM gateway_sessions WHERE gateway = ? AND session = ?", (gateway, session)
    ).fetchone()
    properties: dict[str, str] = {}
    if head is not None:
        try:
            loaded = json.loads(head[0])
            properties = {str(k): str(v) for k, v in loaded.items()} if isinstance(loaded, dict) else {}
        except ValueError:
            properties = {}
    return Script(statements, properties, bool(head[1]) if head is not None else False)


def forget_statement(conn: Any, gateway: str, session: str, operation: str) -> bool:
    """Leave a statement the gateway failed to run out of the session's script; whether it was there."""
    gone = conn.execute(
        "DELETE FROM gateway_statements WHERE gateway = ? AND session = ? AND operation = ? RETURNING seq",
        (gateway, session, operation),
    ).fetchall()
    return bool(gone)


def claim_job(conn: Any, job_id: str, gateway: str, session: str, operation: str, at: float) -> bool:
    """Mark ``job_id`` handed over; False when it already was (by this proxy or another)."""
    row = conn.execute(
        "INSERT INTO gateway_jobs_seen (job_id, gateway, session, operation, seen) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (job_id) DO NOTHING RETURNING job_id",
        (job_id, gateway, session, operation, at),
    ).fetchone()
    return row is not None


def release_job(conn: Any, job_id: str) -> None:
    """Forget a claim whose hand-over failed, so the next answer naming the job hands it over."""
    conn.execute("DELETE FROM gateway_jobs_seen WHERE job_id = ?", (job_id,))


def close_session(conn: Any, gateway: str, session: str) -> None:
    conn.execute("DELETE FROM gateway_statements WHERE gateway = ? AND session = ?", (gateway, session))
    conn.execute("DELETE FROM gateway_sessions WHERE gateway = ? AND session = ?", (gateway, session))


def mark_used(conn: Any, gateway: str, used: dict[str, float]) -> None:
    """Note when each session (``session → at``) was last used; a session not kept is left so
    (the recorder adds it when it next runs a statement, as a session first seen then)."""
    for session, at in used.items():
        conn.execute(
            "UPDATE gateway_sessions SET used = ? WHERE gateway = ? AND session = ? AND used < ?",
            (at, gateway, session, at),
        )


def forget_unused(conn: Any, before: float) -> tuple[int, int]:
    """Forget every session (of any gateway) last used before ``before``, with its statements, and
    the job ids handed over before it whose session is no longer kept; ``(sessions, job ids)``.

    A job id goes only once its session is gone: a later fetch of its result then finds no
    statement that started it (:func:`script_until` is None), so it is never handed over again.
    A session still in use keeps its job ids, however old (a client may fetch an old result)."""
    conn.execute(
        "DELETE FROM gateway_statements WHERE EXISTS (SELECT 1 FROM gateway_sessions s WHERE "
        "s.gateway = gateway_statements.gateway AND s.session = gateway_statements.session AND s.used < ?)",
        (before,),
    )
    sessions = conn.execute("DELETE FROM gateway_sessions WHERE used < ? RETURNING session", (before,)).fetchall()
    jobs = conn.execute(
        "DELETE FROM gateway_jobs_seen WHERE seen < ? AND NOT EXISTS (SELECT 1 FROM gateway_sessions s "
        "WHERE s.gateway = gateway_jobs_seen.gateway AND s.session = gateway_jobs_seen.session) RETURNING job_id",
        (before,),
    ).fetchall()
    return len(sessions), len(jobs)


def jobs_seen(conn: Any) -> set[str]:
    return {row[0] for row in conn.execute("SELECT job_id FROM gateway_jobs_seen")}
