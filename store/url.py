"""Which state store a node uses: the store URL, where it comes from, and how it is printed.

* ``PLANLINEAGE_STORE`` (environment) wins; else ``lineage.store`` from the node's local settings
  file (:mod:`planlineage.store.local`); else none: the embedded SQLite file of the node's home.
* ``postgresql://user:password@host:port/db`` (also ``postgres://``) selects PostgreSQL.  Query
  parameters are libpq's (``sslmode``, ``connect_timeout``…) plus planlineage's own ``schema``
  (the schema the store's tables live in, default ``planlineage``), which libpq never sees.
* The password is never printed: :func:`masked` replaces it (and any ``password=`` parameter).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from planlineage.errors import StoreUrlError

ENV_NAME = "PLANLINEAGE_STORE"
DEFAULT_SCHEMA = "planlineage"
SCHEMES = ("postgresql", "postgres")
_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_SECRET_PARAMS = {"password", "sslpassword", "passfile"}


class StoreUrl(NamedTuple):
    """A parsed PostgreSQL store URL."""

    raw: str
    schema: str
    conninfo: str  # what libpq gets: the URL without planlineage's own parameters

    @property
    def masked(self) -> str:
        return masked(self.raw)


def masked(url: str) -> str:
    """``url`` with its password (and secret parameters) replaced by ``***``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "(unparsable store URL)"
    netloc = parts.netloc
    if "@" in netloc:
        credentials, _, host = netloc.rpartition("@")
        user = credentials.split(":", 1)[0]
        netloc = f"{user}:***@{host}" if ":" in credentials else f"{user}@{host}"
    query = parse_qsl(parts.query, keep_blank_values=True)
    if query:
        query = [(k, "***" if k.lower() in _SECRET_PARAMS else v) for k, v in query]
    return urlunsplit((parts.scheme, netloc, parts.path, urlencode(query, safe="*/:"), ""))


def parse(url: str) -> StoreUrl:
    """A :class:`StoreUrl`, or :class:`StoreUrlError` saying what is wrong."""
    text = (url or "").strip()
    try:
        parts = urlsplit(text)
    except ValueError:
        raise StoreUrlError(
            "the store URL cannot be parsed: write postgresql://user:password@host:5432/database"
        ) from None
    if parts.scheme.lower() not in SCHEMES:
        raise StoreUrlError(
            f"store URL scheme {parts.scheme or '(none)'!r} is not supported: write "
            "postgresql://user:password@host:5432/database (without a store URL the node keeps its SQLite file)"
        )
    for what, value in (
        ("user name", parts.username),
        ("password", parts.password),
        ("host", parts.netloc.rpartition("@")[2]),
        ("database name", parts.path),
        ("parameters", parts.query),
    ):
        if value and _BAD_ESCAPE.search(value):
            raise StoreUrlError(
                f"the {what} of the store URL holds a % that starts no %XX escape: write a literal % as %25 "
                "(e.g. a password p%ss as p%25ss)"
            )
    if not parts.hostname:
        raise StoreUrlError("the store URL names no host: write postgresql://user:password@host:5432/database")
    if not parts.path.strip("/"):
        raise StoreUrlError("the store URL names no database: write postgresql://user:password@host:5432/database")
    query = parse_qsl(parts.query, keep_blank_values=True)
    schema = DEFAULT_SCHEMA
    kept = []
    for key, value in query:
        if key == "schema":
            schema = value.strip()
        else:
            kept.append((key, value))
    if not _IDENTIFIER.match(schema):
        raise StoreUrlError(
            f"schema {schema!r} is not a plain lower-case SQL identifier (letters, digits, _): "
            "pick e.g. ?schema=planlineage"
        )
    conninfo = urlunsplit(("postgresql", parts.netloc, parts.path, urlencode(kept), ""))
    return StoreUrl(raw=text, schema=schema, conninfo=conninfo)


def normalize(url: str) -> str:
    """The URL as stored by ``settings set lineage.store`` (validated; empty unsets)."""
    text = (url or "").strip()
    if not text:
        return ""
    parse(text)
    return text


def configured(environ: Mapping[str, str], local: Mapping[str, str]) -> tuple[str | None, str]:
    """``(url, origin)``: origin ``env``, ``local`` or ``default`` (no URL: SQLite)."""
    value = (environ.get(ENV_NAME) or "").strip()
    if value:
        return value, "env"
    value = (local.get("lineage.store") or "").strip()
    if value:
        return value, "local"
    return None, "default"
