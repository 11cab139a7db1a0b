"""The SQL facets of a run: the script redacted with the options it writes (:func:`redacted`),
capped at ``lineage.sql-max-bytes`` (:func:`limit_of`) with a marker saying so; the whole script
(kept while its lineage is still being computed) and each sink's own statement
(`SinkLineage.statement`, its job's SQL facet). The lifecycle, the history replay and
`extract --events` all take them from here."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from planlineage.config import SQL_FACET_MAX_BYTES
from planlineage.lifecycle.fail_open import fail_open
from planlineage.store.sqlite import Store

if TYPE_CHECKING:
    from planlineage.document import JobLineage

log = logging.getLogger(__name__)


def limit_of(settings) -> int:
    """The cap of the SQL facet (``lineage.sql-max-bytes``; its default when unreadable)."""
    return settings.config().limits.sql_max_bytes


def redacted(sql: str, engine: str | None = None) -> str:
    """The script with every secret option value it writes masked, as a facet may carry it:
    the options as ``engine`` (a name; None: the default engine) reads them."""
    from planlineage import engines
    from planlineage.registry.secrets import redact_sql

    return redact_sql(sql, engines.get(engine).secret_options(sql))


def cap_sql(sql: str, limit: int = SQL_FACET_MAX_BYTES) -> tuple[str, int]:
    """``sql`` cut to at most ``limit`` UTF-8 bytes with a marker saying so; the bytes left out."""
    data = sql.encode("utf-8")
    if len(data) <= limit:
        return sql, 0
    marker = f"\n-- [planlineage: SQL truncated to {limit} of {len(data)} bytes]\n"
    keep = max(0, limit - len(marker.encode("utf-8")))
    head = data[:keep].decode("utf-8", errors="ignore")  # never half a character
    return head + marker, len(data) - len(head.encode("utf-8"))


@fail_open("lineage of the submission", fallback=False)
def set_redacted_sql(store: Store, app_id: str, run_id: str, sql: str, limit: int = SQL_FACET_MAX_BYTES) -> bool:
    """Keep the (already redacted) SQL of a run whose lineage is still being computed, capped at
    ``limit`` bytes (one warning when it had to be cut)."""
    sql, cut = cap_sql(sql, limit)
    if cut:
        log.warning(
            "planlineage: the SQL of %s is larger than lineage.sql-max-bytes (%d): its SQL facet is truncated",
            app_id,
            limit,
        )
    return bool(
        store.write(
            lambda c: (
                c.execute(
                    "UPDATE runs SET sql = ? WHERE app_id = ? AND run_id = ? AND lineage IS NULL",
                    (sql, app_id, run_id),
                ).rowcount
            )
        )
    )


def cap_statements(lineage: JobLineage, limit: int = SQL_FACET_MAX_BYTES) -> JobLineage:
    """Each sink's statement (already redacted by the pipeline) cut to ``limit`` bytes like the
    script's: a job's SQL facet is never larger than the cap, whichever text it carries."""
    for sink in lineage.sinks:
        if sink.statement:
            sink.statement = cap_sql(sink.statement, limit)[0]
    return lineage
