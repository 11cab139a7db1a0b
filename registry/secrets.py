"""The one place that decides what is a secret and how it is hidden.

A Flink plan carries every table option in clear text (passwords, `properties.sasl.jaas.config`,
URLs with `user:password@`). Every output path of the tool (lineage events, logs, stdout, the
state store, error messages) goes through this module, so that one fix here fixes them all.

- `is_secret_key(key)`: is an option's value a secret (by its key)?
- `redact_options(options)`: a copy safe to print; secret values -> "******", URLs de-credentialed.
- `redact_url(url)`: mask `user:pw@`, `password=`/`user=` parameters and Oracle `user/pw@`.
- `redact_text(text, options)`: mask every secret value of `options` (also in its SQL-, JSON- and
  URL-escaped spellings), URL credentials, and in free text every pair whose key is a secret:
  `'k' = 'v'`, `"k": "v"`, the SQL client's `SET k = v`, `k: v` / `k=v` in comments and log lines,
  `password="..."` inside JAAS strings, `Authorization: Bearer ...`.
  Also `SET k = v` read to the end of the statement and Spark's `OPTIONS (k 'v')`.
- `redact_sql(sql, options)`: `redact_text` plus SQL comments (`-- the password is ...`): for SQL
  facets, quoted statements and other producers' queries.
- `RedactingFilter`: a logging filter that passes every record through `redact_text`.
- `strip_credentials(value)`: remove (not mask) credentials; for dataset namespaces and names,
  where a mask would become part of an identity.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Mapping
from urllib.parse import quote, quote_plus

MASK = "******"

# Substrings of an option key (lower-cased) that make its value a secret.
_SECRET_KEY_PARTS = (
    "password",
    "passwd",
    "secret",  # secret, secret-key, client-secret, secret.access.key
    "token",  # token, session-token, bearer-auth.token
    "credential",  # credentials, credential-file
    "private-key",
    "private_key",
    "privatekey",
    "private.key",
    "access-key",
    "access_key",
    "accesskey",
    "access.key",
    "api-key",
    "api_key",
    "apikey",
    "api.key",
    "jaas",  # properties.sasl.jaas.config carries the password inline
    "user-info",  # schema registry basic-auth user-info is "user:password"
    "user.info",
    "userinfo",
    "connection-string",  # Azure connection strings embed AccountKey
    "connection.string",
    "connectionstring",
    "authorization",
    "sas-token",
    "signature",
    "account.key",  # fs.azure.account.key.<account>.dfs.core.windows.net: the storage account key
    "account-key",
    "account_key",
    "accountkey",  # AccountKey= of an Azure connection string
    "authparam",  # Pulsar pulsar.client.authParams / authParamMap: the token or key inline
    "auth-param",
    "auth.param",
    "auth_param",
)
# Whole dot/dash-separated segments that are secrets on their own (too short to match as parts):
# as the last segment; `sig` is the signature of an Azure SAS token (`?sv=..&sig=..`).
_SECRET_KEY_SEGMENTS = {"pwd", "pass", "sas", "key", "sig"}
# Segments that make a key secret wherever they stand: fs.azure.sas.<container>.<account>.blob...
_SECRET_KEY_ANY_SEGMENTS = {"sas"}
# Segments that are not secrets even though a segment rule would match them.
_NOT_SECRET_KEYS = {"key.format", "key.fields", "key.fields-prefix", "key.type"}


@functools.lru_cache(maxsize=4096)  # the same few option keys, for every table of every job
def is_secret_key(key: str) -> bool:
    k = key.strip().lower()
    if k in _NOT_SECRET_KEYS or k.startswith("key."):
        return False
    if any(part in k for part in _SECRET_KEY_PARTS):
        return True
    segments = k.split(".")
    return segments[-1] in _SECRET_KEY_SEGMENTS or not _SECRET_KEY_ANY_SEGMENTS.isdisjoint(segments)


# --- URLs -------------------------------------------------------------------------------------------

# A URL's authority: after `//`, to the first `/`, `?`, `#` or blank; a `?` or `#` that an `@`
# follows before any `/`, `=` or `&` is inside a password (`u:pa?ss@h`), not a query. Quotes are
# part of it (a password may hold a `'`): in free text `_URL_IN_TEXT` decides where a URL ends.
AUTHORITY = r"//(?P<authority>[^/?#\s]*+(?:[?#][^/@\s=&]*+(?=@)[^/?#\s]*+)?)"
_AUTHORITY = re.compile(AUTHORITY)


def split_hosts(authority: str) -> list[str]:
    """The hosts of a URL's authority, each `[userinfo@]host[:port]`; the one reading of a `,` for
    masking, removing and naming (registry/jdbc): a part without `@` that a part with `@` follows
    belongs to that part's userinfo, so a password with an unencoded `,` (`u:12,34@h`,
    `u:p,ss:x@h`) is kept whole, never `u:12` taken for a host. `u:p@h1,h2:3306` and
    `u:p@h1,u:p@h2` are two hosts. Within a host the userinfo runs to its LAST `@`."""
    parts = authority.split(",")
    last = max((i for i, part in enumerate(parts) if "@" in part), default=-1)
    hosts: list[str] = []
    pending: list[str] = []
    for i, part in enumerate(parts):
        if i < last and "@" not in part:
            pending.append(part)
            continue
        hosts.append(",".join([*pending, part]))
        pending = []
    return hosts


def _each_userinfo(value: str, replace) -> str:
    """`value` with each host's `userinfo@host` of every authority passed through
    `replace(userinfo, host_rest)` (the host's new text)."""
    if "@" not in value:
        return value

    def authority(m: re.Match) -> str:
        hosts = []
        for host in split_hosts(m["authority"]):
            userinfo, at, rest = host.rpartition("@")
            hosts.append(replace(userinfo, rest) if at else host)
        return "//" + ",".join(hosts)

    return _AUTHORITY.sub(authority, value)


# A userinfo without ':' is a token only on web schemes (https://TOKEN@host); elsewhere it is a
# name, e.g. abfss://container@account, and must stay.
_TOKEN_USERINFO = re.compile(
    r"(?i)\b(?P<lead>(?:https?|ftps?|wss?|git)://)(?P<token>[^/?#@\s:'\"]++(?:@[^/?#@\s:'\"]*+)*)@"
)
# Oracle thin/oci: jdbc:oracle:thin:user/password@host. The password runs to the LAST `@` before
# the host (`scott/ti@ger@h` -> `ti@ger`), as `split_hosts` reads a userinfo; the parts after an `@` hold no
# `/`, so that one URL never reads into the next. Bounded groups: linear on any text.
_ORACLE_USER_PW = re.compile(
    r"(?i)\b(?P<lead>oracle:[a-z0-9]{1,20}+:)(?P<user>[^/@:\s'\"]{1,128}+)/"
    r"(?P<pw>[^@\s'\"]{1,256}+(?:@[^/@\s'\"]{0,256}+){0,16})@"
)
# key=value parameters (query, `;` params, MySQL `(password=..)`, key=value lists)
_PARAM = re.compile(r"(?P<key>[A-Za-z][A-Za-z0-9_.\-]{0,100})=(?P<value>\{[^}]{0,500}\}|[^&;,()\s'\"?#]*+)")
_USER_PARAM_KEYS = {"user", "username"}


def _secret_param(key: str, users_too: bool = True) -> bool:
    k = key.lower()
    return (users_too and k in _USER_PARAM_KEYS) or is_secret_key(k)


def redact_url(url: str) -> str:
    """Mask credentials in a URL, keeping its shape (for display, logs and errors)."""

    def userinfo(userinfo: str, rest: str) -> str:
        user, sep, _ = userinfo.partition(":")
        return f"{user}:{MASK}@{rest}" if sep else f"{userinfo}@{rest}"

    out = _ORACLE_USER_PW.sub(lambda m: f"{m['lead']}{m['user']}/{MASK}@", url)
    out = _each_userinfo(out, userinfo)
    out = _TOKEN_USERINFO.sub(lambda m: f"{m['lead']}{MASK}@", out)
    return _PARAM.sub(lambda m: f"{m['key']}={MASK}" if _secret_param(m["key"]) else m.group(0), out)


def _is_secret_pair(pair: str) -> bool:
    key, sep, _ = pair.partition("=")
    return bool(sep) and _secret_param(key.strip())


def strip_credentials(value: str) -> str:
    """Remove credentials outright (used on dataset namespaces/names, never masked into them)."""
    if "@" not in value and "=" not in value and "?" not in value:
        return value  # every form below needs one of these: most option values are plain words
    out = _ORACLE_USER_PW.sub(lambda m: m["lead"] + "@", value)
    out = _each_userinfo(out, lambda userinfo, rest: rest if ":" in userinfo else f"{userinfo}@{rest}")
    out = _TOKEN_USERINFO.sub(lambda m: m["lead"], out)
    base, question, query = out.partition("?")
    if question:
        kept = [p for p in query.split("&") if not _is_secret_pair(p)]
        out = base + ("?" + "&".join(kept) if kept else "")
    # ;key=value (SQL Server style, values may be {braced}) and (key=value) (MySQL address form)
    out = re.sub(r";([^;=]+)=(\{[^}]*\}|[^;]*)", lambda m: "" if _secret_param(m[1]) else m.group(0), out)
    return re.sub(r"\(([^()=]++=[^()]*+)\)", _strip_listed_pairs, out)


def _strip_listed_pairs(m: re.Match) -> str:
    """`(host=h,port=3306,user=u,password=x)` -> `(host=h,port=3306)`; `(password=x)` -> ``."""
    pairs = m[1].split(",")
    kept = [p for p in pairs if not _is_secret_pair(p)]
    if len(kept) == len(pairs):
        return m.group(0)
    return f"({','.join(kept)})" if kept else ""


# --- options ------------------------------------------------------------------------------------------


def redact_options(options: Mapping[str, str]) -> dict[str, str]:
    redacted: dict[str, str] = {}
    for key, value in options.items():
        if is_secret_key(key):
            redacted[key] = MASK
        elif isinstance(value, str):
            redacted[key] = redact_url(value)
        else:
            redacted[key] = value
    return redacted


_JAAS_INNER = re.compile(r"""(?i)\b(?:password|secret|token|apikey|api_key)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s;]+))""")


def secret_values(options: Mapping[str, str]) -> list[str]:
    """Every secret string of `options`, with the inner passwords of JAAS-style values, longest
    first (so that a value containing another is masked whole)."""
    found: set[str] = set()
    for key, value in options.items():
        if not isinstance(value, str) or not value:
            continue
        if is_secret_key(key):
            found.add(value)
            for m in _JAAS_INNER.finditer(value):
                inner = next(g for g in m.groups() if g is not None)
                if inner:
                    found.add(inner)
        # passwords embedded in URL-valued options (user-info needs an @, a parameter an =)
        if "@" in value:

            def password(userinfo: str, rest: str) -> str:
                _, sep, pw = userinfo.partition(":")
                if sep and pw:
                    found.add(pw)
                return rest

            _each_userinfo(value, password)
            for m in _ORACLE_USER_PW.finditer(value):
                found.add(m["pw"])
        if "=" in value:
            for m in _PARAM.finditer(value):
                if _secret_param(m["key"]) and m["key"].lower() not in _USER_PARAM_KEYS and m["value"]:
                    found.add(m["value"])
    return sorted(found, key=len, reverse=True)


def _spellings(secret: str) -> list[str]:
    """How a secret may appear in text: raw, SQL-quoted (' doubled), JSON-escaped, URL-encoded."""
    forms = {
        secret,
        secret.replace("'", "''"),
        json.dumps(secret)[1:-1],
        quote(secret, safe=""),
        quote_plus(secret, safe=""),
        quote(secret, safe="/:"),
    }
    return sorted((f for f in forms if f), key=len, reverse=True)


# Patterns run over arbitrary text (a whole SQL script, a log): alternatives are disjoint and
# quantifiers possessive or bounded, so that no input can make them backtrack for long.
# A URL in text ends at a blank or a quote, but for a `''` (a quote in a SQL literal) and a `'` that an
# `@` follows before the next blank or quote (a password holding a `'`: `u:pa'ss@h`).
_URL_IN_TEXT = re.compile(
    r"(?i)\b(?:jdbc:)?[a-z][a-z0-9+.\-]{0,30}:(?:[a-z0-9]{1,20}:){0,3}//"
    r"(?:[^\s'\"`<>]++|''|'(?=[^\s'\"`<>/@]*+@))++"
)
# 'key' = 'value' (SQL WITH clauses, '' escapes a quote), 'key': 'value' (Python reprs)
_SQL_PAIR = re.compile(r"(?P<k>'(?P<key>[^'\n]{1,200})'\s*+[=:]\s*+)'(?P<v>(?:[^']|'')*+)'")
# "key": "value" (JSON, backslash escapes)
_JSON_PAIR = re.compile(r'(?P<k>"(?P<key>[^"\n]{1,200})"\s*+[=:]\s*+)"(?P<v>(?:[^"\\]|\\.)*+)"')
_TEXT_PARAM = re.compile(r"(?P<key>\b[A-Za-z][A-Za-z0-9_.\-]{0,100})=(?P<value>\{[^}]{0,500}\}|[^&;,()\s'\"?#]*+)")


# k = v, k: v, k=v with a bare key (SQL client SET, comments, JAAS, log lines). The value is a
# quoted string or one bare word; an authorization scheme (Bearer/Basic) takes its token along.
# Keys are found first and values read only after a secret key, so that the value of one pair
# ("failed: Authorization") never hides the key of the next.
# A key right after a quote counts too when a `:` and a value follow without a blank: the first pair
# of a map-typed option's value, `'db.password:x,user:y'` (Flink's `pipeline.global-job-parameters`),
# starts at the quote; prose in quotes (`'key: value'`) keeps its blank and stays as it is.
_BARE_KEY = re.compile(
    r"(?:(?<![\w.\-'\"`])|(?<=['\"])(?=[A-Za-z][\w.\-]{0,100}+(?<![.\-]):[^\s'\"]))"
    r"(?P<key>[A-Za-z][\w.\-]{0,100}+)(?<![.\-])\s*+[=:][ \t]*+"
)
_BARE_VALUE = re.compile(r"'(?:[^'\n]|'')*+'|\"(?:[^\"\\\n]|\\.)*+\"|(?:(?i:bearer|basic)\s++)?[^\s;,'\"()]++")


def _mask_bare_pairs(text: str) -> str:
    out: list[str] = []
    done = 0
    for m in _BARE_KEY.finditer(text):
        if m.start() < done or not is_secret_key(m["key"]):
            continue
        value = _BARE_VALUE.match(text, m.end())
        if value is None:
            continue
        quote = value.group(0)[:1]
        out.append(text[done : m.end()])
        out.append(f"{quote}{MASK}{quote}" if quote in ("'", '"') else MASK)
        done = value.end()
    out.append(text[done:])
    return "".join(out)


# `SET key = value` of Flink's and Spark's SQL clients: an unquoted value is read to the end of the
# statement (Flink stops at a blank, Spark takes the rest of the line), so `abc,def(x)` is masked
# whole, not up to its first `,` or `(`.
_SET_PAIR = re.compile(
    r"(?i)(?<![\w.\-'\"`])(?P<head>SET\s++(?P<key>'[^'\n]{1,200}+'|`[^`\n]{1,200}+`|[^\s=;'\"`]{1,200}+)\s*+=[ \t]*+)"
    r"(?P<value>'(?:[^'\n]|'')*+'|\"(?:[^\"\\\n]|\\.)*+\"|[^;\r\n]*+)"
)
# Spark's property lists, `OPTIONS (password 'x', 'token' "y")` and TBLPROPERTIES: key and value
# separated by blanks only (at most 200, line breaks included; a key may be quoted '…', `…` or
# "…"). A quoted value is taken after any key; a bare literal only inside a list, right after `(`
# or `,`, and only a number or a boolean (Spark's property values): a column definition
# `(token STRING, …)` keeps its type.
_SPACED_PAIR = re.compile(
    r"(?P<k>(?<![\w.\-'\"`])(?P<key>'[^'\n]{1,200}+'|`[^`\n]{1,200}+`|\"[^\"\n]{1,200}+\"|[A-Za-z][\w.\-]{0,100}+)"
    r"\s{1,200}+)"
    r"(?P<v>'(?:[^'\n]|'')*+'|\"(?:[^\"\\\n]|\\.)*+\")"
)
_LISTED_BARE_PAIR = re.compile(
    r"(?P<k>[(,]\s*+(?P<key>'[^'\n]{1,200}+'|`[^`\n]{1,200}+`|[A-Za-z][\w.\-]{0,100}+)[ \t]++)"
    r"(?P<v>[-+]?+\d[\w.]*+(?![^\s,)])|(?i:true|false)(?![^\s,)]))"
)


def _unquoted(key: str) -> str:
    return key[1:-1] if key[:1] in ("'", "`", '"') and key[-1:] == key[:1] else key


def _masked_value(value: str) -> str:
    quote = value[:1]
    return f"{quote}{MASK}{quote}" if quote in ("'", '"') and len(value) > 1 else MASK


def _mask_set_value(m: re.Match) -> str:
    value = m["value"]
    if not is_secret_key(_unquoted(m["key"])) or not value.strip():
        return m.group(0)
    kept = value[len(value.rstrip()) :]  # blanks before the `;` or the line end stay
    return m["head"] + _masked_value(value.rstrip()) + kept


def _mask_spaced_pair(m: re.Match) -> str:
    key = m["key"]
    if key.lower() in _PROSE_NOT_SECRET or not is_secret_key(_unquoted(key)):  # "with key 'id1'"
        return m.group(0)
    return m["k"] + _masked_value(m["v"])


# SQL comments. A `--` inside a string literal is taken for a comment start too: that can only
# mask more of that line, never less.
_COMMENT = re.compile(r"--[^\r\n]*+|/\*(?:[^*]|\*(?!/))*+(?:\*/|$)")
_WORD = re.compile(r"[A-Za-z][\w.\-]{0,100}+")
# In prose a lone `key`, `pass` or `sig` is an ordinary word ("primary key", "pass through").
_PROSE_NOT_SECRET = {"key", "pass", "sas", "sig"}
# what tells the value after a secret's name in prose: `password: x`, `token = x`, `password is x`
_PROSE_SEPARATOR = re.compile(r"(?i)[ \t]*+(?:[:=]|\b(?:is|are|was|were)\b)")


def _mask_comment(m: re.Match) -> str:
    comment = m.group(0)
    closing = "*/" if comment.startswith("/*") and comment.endswith("*/") and len(comment) >= 4 else ""
    body = comment[2 : len(comment) - len(closing)]
    for word in _WORD.finditer(body):
        name = word.group(0).rstrip(".-")
        if name.lower() in _PROSE_NOT_SECRET or not is_secret_key(name):
            continue
        # everything after a separator right after the secret's name, else after the name: a
        # separator further on (`password hunter2 is rotated`) would leave the secret before it
        separator = _PROSE_SEPARATOR.match(body, word.end())
        start = separator.end() if separator else word.end()
        rest = body[start:]
        if not rest.strip():
            return comment
        lead = rest[: len(rest) - len(rest.lstrip())]
        trail = rest[len(rest.rstrip()) :]
        return comment[:2] + body[:start] + lead + MASK + trail + closing
    return comment


def redact_sql(sql: str, options: Mapping[str, str] | None = None) -> str:
    """`redact_text` for a SQL script (a SQL facet, another producer's query): also masks, in
    comments, whatever follows a secret's name (`-- the password is x`)."""
    if not sql:
        return sql
    return redact_text(_COMMENT.sub(_mask_comment, sql), options)


def redact_text(text: str, options: Mapping[str, str] | None = None) -> str:
    """Mask every secret that could be in free text: SQL, a log line, an error message."""
    if not text:
        return text
    out = text
    for secret in secret_values(options or {}):
        for form in _spellings(secret):
            if len(form) < 3:
                # a one- or two-character secret is masked only as a whole word, so as not to
                # shred the text; it stays masked wherever it stands alone.
                out = re.sub(rf"(?<![A-Za-z0-9]){re.escape(form)}(?![A-Za-z0-9])", MASK, out)
            else:
                out = out.replace(form, MASK)
    # secret-looking pairs of any table or config, whatever options we were given
    out = _SQL_PAIR.sub(lambda m: f"{m['k']}'{MASK}'" if is_secret_key(m["key"]) else m.group(0), out)
    out = _JSON_PAIR.sub(lambda m: f'{m["k"]}"{MASK}"' if is_secret_key(m["key"]) else m.group(0), out)
    out = _TEXT_PARAM.sub(
        lambda m: f"{m['key']}={MASK}" if m["value"] and _secret_param(m["key"], users_too=False) else m.group(0),
        out,
    )
    out = _SET_PAIR.sub(_mask_set_value, out)
    out = _SPACED_PAIR.sub(_mask_spaced_pair, out)
    out = _LISTED_BARE_PAIR.sub(_mask_spaced_pair, out)
    out = _mask_bare_pairs(out)
    out = _ORACLE_USER_PW.sub(lambda m: f"{m['lead']}{m['user']}/{MASK}@", out)
    return _URL_IN_TEXT.sub(lambda m: redact_url(m.group(0)), out)


class RedactingFilter(logging.Filter):
    """Redacts every record a handler writes (arguments merged into the message first)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
            record.msg, record.args = redact_text(message), None
        except Exception:  # a record that cannot be formatted is dropped rather than leaked
            return False
        return True
