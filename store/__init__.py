"""The state store a node uses, selected by URL: the embedded SQLite file, or a shared PostgreSQL.

:func:`open_store` is the one place that decides.  Without a store URL (``PLANLINEAGE_STORE`` or
``lineage.store`` in the node's local settings file) it is today's SQLite file in the node's home,
unchanged.  With ``postgresql://…`` every node naming the same database shares runs, outbox,
compile jobs, leadership and settings (all but the store URL itself, which is per node).

Both backends offer the same operations (``read``, ``write``, ``rows``, ``exists``, ``home``,
``dialect``, ``shared``); the SQL above them is one code path (:mod:`planlineage.store.dialect`).
Nothing here imports psycopg unless a PostgreSQL URL is configured.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def store_url(environ: Mapping[str, str] | None = None, home: Path | None = None) -> tuple[str | None, str]:
    """``(url, origin)`` of the configured store URL (``env``, ``local`` or ``default``: none)."""
    from planlineage.store import local, url
    from planlineage.store.sqlite import home_dir

    env = os.environ if environ is None else environ
    return url.configured(env, local.load(home or home_dir(env)))


def open_store(environ: Mapping[str, str] | None = None, home: Path | None = None, *, wait: float | None = None):
    """The node's store: :class:`~planlineage.store.postgres.PostgresStore` for a PostgreSQL URL,
    else the SQLite :class:`~planlineage.store.sqlite.Store` of the home.

    ``wait`` bounds the waiting of a command with a deadline: SQLite's busy timeout, PostgreSQL's
    connect timeout.  A URL that cannot be used raises :class:`~planlineage.errors.StoreError` (the lifecycle
    commands fail open on it, like on any store problem).
    """
    from planlineage.errors import StoreError, StoreUrlError
    from planlineage.store.sqlite import DB_NAME, Store, home_dir
    from planlineage.store.url import parse

    env = os.environ if environ is None else environ
    where = home or home_dir(env)
    value, origin = store_url(env, where)
    if not value:
        return Store(where / DB_NAME) if wait is None else Store(where / DB_NAME, busy_timeout=wait)
    try:
        parsed = parse(value)
    except StoreUrlError as error:
        source = "PLANLINEAGE_STORE" if origin == "env" else "lineage.store"
        raise StoreError(f"{source}: {error}") from None
    from planlineage.store.postgres import PostgresStore

    return PostgresStore(parsed, where, connect_timeout=wait)
