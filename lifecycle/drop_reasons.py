"""Why a run was dropped without lineage, kept for the watcher that submitted it to say.

:func:`planlineage.lifecycle.runs.abandon_lineage` records the reason in the same transaction as
the drop (table ``dropped_runs``); the StreamPark and Dinky watchers read and remove it when they
find the run gone (:func:`take`), so they say the real reason instead of guessing that the SQL did
not compile.  A reason nobody reads (a run submitted by ``submit``, whose reason is in the log)
goes after :data:`KEPT_SECONDS`.  Reasons are secret-free: redacted as the log line is.
"""

from __future__ import annotations

import re

from planlineage.store.sqlite import Store

KEPT_SECONDS = 7 * 24 * 3600.0
_ERROR_TYPE = re.compile(r"^[A-Z]\w*(Error|Exception|TooLarge): ")


def phrase(reason: str) -> str:
    """What a watcher says after "run dropped: " for an abandon's ``reason``."""
    from planlineage.emitter.transports.base import scrub, short

    text = _ERROR_TYPE.sub("", scrub(reason).strip())
    if "writes no table" in text:
        return "it names no table planlineage can name (nothing is reported)"
    if "over the limit of" in text and "bytes" in text:
        return f"its script is over the size cap: {short(text, 240)}"
    if "died twice" in text:
        return "its compile died twice (nothing is reported)"
    return f"its SQL did not compile: {short(text, 240)}"


def record(conn, run_id: str, app_id: str, reason: str) -> None:
    """Keep ``reason`` for ``run_id`` inside the caller's transaction (and forget the old ones)."""
    now = conn.clock()
    conn.execute("DELETE FROM dropped_runs WHERE dropped < ?", (now - KEPT_SECONDS,))
    conn.execute(
        "INSERT INTO dropped_runs (run_id, app_id, reason, dropped) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (run_id) DO UPDATE SET reason = excluded.reason, dropped = excluded.dropped",
        (run_id, app_id, phrase(reason), now),
    )


def take(store: Store, run_id: str) -> str | None:
    """The reason ``run_id`` was dropped (what to say after "run dropped: "), removed; None if
    none was kept."""

    def pop(conn) -> str | None:
        row = conn.execute("SELECT reason FROM dropped_runs WHERE run_id = ?", (run_id,)).fetchone()
        if row is None:
            return None
        conn.execute("DELETE FROM dropped_runs WHERE run_id = ?", (run_id,))
        return row["reason"]

    return store.write(pop, exclusive=False)
