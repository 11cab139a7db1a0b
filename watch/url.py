"""A platform's database address (StreamPark's, Dinky's): URL forms, credentials, and the one way to print it.

Accepted forms (the platform's own ``datasource.url`` can be pasted as is)::

    postgresql://user:pass@host:5432/streampark[?currentSchema=s]   (also postgres://)
    mysql://user:pass@host:3306/streampark                           (also mariadb://)
    jdbc:postgresql://host:5432/streampark?currentSchema=s&user=u&password=p
    jdbc:mysql://host:3306/streampark?useUnicode=true&...

The user may also come from ``--db-user`` and the password from the platform's environment
variable (``PLANLINEAGE_STREAMPARK_PASSWORD``, ``PLANLINEAGE_DINKY_PASSWORD``: it keeps the
password out of the process list); these win over the URL.  The password is held only in
:class:`Target` and never appears in :meth:`Target.masked`, in ``repr``, or in any message built
here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote, urlsplit

from planlineage.errors import PlatformUrlError

MASK = "***"

_DIALECTS = {
    "postgresql": "postgresql",
    "postgres": "postgresql",
    "pgsql": "postgresql",
    "mysql": "mysql",
    "mariadb": "mysql",
}
_DEFAULT_PORTS = {"postgresql": 5432, "mysql": 3306}


@dataclass(frozen=True)
class Target:
    dialect: str  # postgresql | mysql
    host: str
    port: int
    database: str
    user: str | None
    platform: str  # whose database ("StreamPark", "Dinky"): named in every message about it
    password: str | None = field(default=None, repr=False)
    schema: str | None = None  # PostgreSQL currentSchema / search_path

    def masked(self) -> str:
        """The address as it may be printed: the password is never part of it."""
        who = ""
        if self.user:
            who = self.user + (f":{MASK}" if self.password else "") + "@"
        text = f"{self.dialect}://{who}{self.host}:{self.port}/{self.database}"
        if self.schema:
            text += f"?currentSchema={self.schema}"
        return text

    def key(self) -> str:
        """Names this install of the platform in the watcher's own state (no credentials)."""
        return f"{self.dialect}://{self.host}:{self.port}/{self.database}" + (f"/{self.schema}" if self.schema else "")

    def scrub(self, text: str) -> str:
        """``text`` with every occurrence of the password replaced (driver messages may echo a DSN)."""
        if self.password:
            text = text.replace(self.password, MASK)
        return text


def parse(
    url: str,
    user: str | None = None,
    password: str | None = None,
    *,
    platform: str,
    flag: str,
    env: str | None = None,
) -> Target:
    """A :class:`Target` from any accepted form; ``user``/``password`` override the URL's.

    ``platform``, ``flag`` and ``env`` (the variable the URL may come from) name whose database it
    is in messages."""
    text = (url or "").strip()
    if not text:
        raise PlatformUrlError(f"no {platform} database given: pass {flag} URL" + (f" (or set {env})" if env else ""))
    if text.lower().startswith("jdbc:"):
        text = text[5:]
    scheme = text.split(":", 1)[0].lower()
    dialect = _DIALECTS.get(scheme)
    if dialect is None:
        raise PlatformUrlError(
            f"unsupported database scheme {scheme!r}: use postgresql://… or mysql://… "
            f"({platform}'s default H2 database cannot be read from outside the console)"
        )
    parts = urlsplit(text)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    try:
        port = parts.port
    except ValueError:
        raise PlatformUrlError(f"the port of {_safe(text)} is not a number") from None
    host = parts.hostname
    if not host:
        raise PlatformUrlError(f"no host in {_safe(text)}: expected {dialect}://user@host:port/database")
    database = unquote(parts.path.lstrip("/").split("/", 1)[0])
    if not database:
        raise PlatformUrlError(f"no database name in {_safe(text)}: expected {dialect}://user@host:port/database")
    url_user = unquote(parts.username) if parts.username else query.get("user")
    url_password = unquote(parts.password) if parts.password is not None else query.get("password")
    schema = query.get("currentSchema") or query.get("currentschema") or query.get("search_path")
    return Target(
        dialect=dialect,
        host=host,
        port=port or _DEFAULT_PORTS[dialect],
        database=database,
        user=user or url_user,
        password=password if password else url_password,
        schema=schema if dialect == "postgresql" and schema else None,
        platform=platform,
    )


def _safe(text: str) -> str:
    """An address for a message before it could be parsed: credentials and query dropped."""
    scheme, _, rest = text.partition("://")
    rest = rest.split("?", 1)[0]
    if "@" in rest:
        rest = "…@" + rest.rsplit("@", 1)[1]
    return f"{scheme}://{rest}"
