"""The two pieces of Java semantics that openlineage-java's identity code silently depends on.

The identity rules we port (JdbcDatasetUtils, FilesystemDatasetUtils) decide what to emit by
asking `java.net.URI` whether a string parses and what its host is, and by `String.split`.
Python's `urllib.parse` and `str.split` answer differently (urllib accepts `my_host` as a host,
Java does not; Java drops trailing empty strings), and every such difference is a byte of
namespace that no longer meets the other producers'. So this module reimplements exactly the
parts of RFC 2396 parsing that `java.net.URI(String)` applies, and nothing more.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import unquote


class JavaURISyntaxError(ValueError):
    """Raised wherever `new java.net.URI(s)` would throw URISyntaxException."""


def java_split(text: str, regex: str, flags: int = 0) -> list[str]:
    """`String.split(regex)`: like re.split, but trailing empty strings are removed and a string
    with no match at all comes back whole (so `"".split(",")` is `[""]`, `",".split(",")` is `[]`)."""
    if re.search(regex, text, flags) is None:
        return [text]
    parts = re.split(regex, text, flags=flags)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


# Character classes of java.net.URI (RFC 2396 plus Java's documented deviations).
_ALPHA = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DIGIT = set("0123456789")
_ALPHANUM = _ALPHA | _DIGIT
_MARK = set("-_.!~*'()")
_UNRESERVED = _ALPHANUM | _MARK
_RESERVED = set(";/?:@&=+$,[]")
_URIC = _RESERVED | _UNRESERVED  # plus escapes
_PCHAR = _UNRESERVED | set(":@&=+$,")  # plus escapes
_PATH = _PCHAR | set(";/")
_USERINFO = _UNRESERVED | set(";:&=+$,")
_REG_NAME = _UNRESERVED | set("$,;:@&=+")
_SERVER = _USERINFO | _ALPHANUM | set("-.:@[]")
_SCHEME = _ALPHANUM | set("+-.")
_HEX = set("0123456789abcdefABCDEF")


def _is_other(ch: str) -> bool:
    # Java admits "other" characters (non-ASCII, not control, not space) wherever escapes are legal.
    return ord(ch) > 0x7F and not ch.isspace() and ch.isprintable()


@dataclass
class JavaURI:
    scheme: str | None = None
    authority: str | None = None  # raw (still escaped)
    user_info: str | None = None
    host: str | None = None  # None when the authority is registry-based (e.g. `my_host`)
    port: int = -1
    raw_path: str | None = None  # None for an opaque URI
    query: str | None = None
    fragment: str | None = None

    @property
    def path(self) -> str | None:
        """`URI.getPath()`: decoded."""
        return None if self.raw_path is None else unquote(self.raw_path)

    @property
    def decoded_authority(self) -> str | None:
        return None if self.authority is None else unquote(self.authority)


class _Parser:
    def __init__(self, text: str):
        self.s = text
        self.uri = JavaURI()

    def fail(self, reason: str, index: int | None = None) -> None:
        where = "" if index is None else f" at index {index}"
        raise JavaURISyntaxError(f"{reason}{where}: {self.s}")

    def at(self, p: int, n: int, ch: str) -> bool:
        return p < n and self.s[p] == ch

    def scan_until(self, p: int, n: int, stop: str, want: str | None = None) -> int:
        """Java `scan(start, end, err, stop)`: index of the first `want` char, or -1 if a char of
        `stop` (or the end) comes first. With want=None, index of the first char in `stop` or n."""
        i = p
        while i < n:
            c = self.s[i]
            if want is not None and c in want:
                return i
            if c in stop:
                return -1 if want is not None else i
            i += 1
        return -1 if want is not None else n

    def is_escape(self, i: int, end: int) -> bool:
        s = self.s
        return s[i] == "%" and i + 2 < end and s[i + 1] in _HEX and s[i + 2] in _HEX

    def scan_set(self, p: int, n: int, allowed: set[str], escapes: bool = False, other: bool = False) -> int:
        i = p
        while i < n:
            c = self.s[i]
            if c in allowed:
                i += 1
            elif escapes and self.is_escape(i, n):
                i += 3
            elif other and _is_other(c):
                i += 1
            else:
                break
        return i

    def check_chars(
        self, p: int, q: int, allowed: set[str], what: str, escapes: bool = True, other: bool = True
    ) -> None:
        i = p
        while i < q:
            c = self.s[i]
            if c in allowed:
                i += 1
            elif escapes and c == "%":
                if not self.is_escape(i, q):
                    self.fail(f"Malformed escape pair in {what}", i)
                i += 3
            elif other and _is_other(c):
                i += 1
            else:
                self.fail(f"Illegal character in {what}", i)

    # --- grammar -------------------------------------------------------------------------------

    def parse(self) -> JavaURI:
        s, n = self.s, len(self.s)
        p = -1
        for i, c in enumerate(s):
            if c in "/?#":
                break
            if c == ":":
                p = i
                break
        if p >= 0:
            if p == 0:
                self.fail("Expected scheme name", 0)
            if s[0] not in _ALPHA:
                self.fail("Illegal character in scheme name", 0)
            self.check_chars(1, p, _SCHEME, "scheme name", escapes=False, other=False)
            self.uri.scheme = s[:p]
            p += 1
            if self.at(p, n, "/"):
                p = self.parse_hierarchical(p, n)
            else:
                q = s.find("#", p)
                q = n if q < 0 else q
                if q <= p:
                    self.fail("Expected scheme-specific part", p)
                self.check_chars(p, q, _URIC, "opaque part")
                p = q
        else:
            p = self.parse_hierarchical(0, n)
        if self.at(p, n, "#"):
            self.check_chars(p + 1, n, _URIC, "fragment")
            self.uri.fragment = s[p + 1 :]
            p = n
        if p < n:
            self.fail("Expected end of URI", p)
        return self.uri

    def parse_hierarchical(self, start: int, n: int) -> int:
        s = self.s
        p = start
        if self.at(p, n, "/") and self.at(p + 1, n, "/"):
            p += 2
            q = self.scan_until(p, n, "/?#")
            if q > p:
                p = self.parse_authority(p, q)
            elif q < n:
                pass  # Java deviation: empty authority before a path, query or fragment
            else:
                self.fail("Expected authority", p)
        q = self.scan_until(p, n, "?#")
        self.check_chars(p, q, _PATH, "path")
        self.uri.raw_path = s[p:q]
        p = q
        if self.at(p, n, "?"):
            p += 1
            q = self.scan_until(p, n, "#")
            self.check_chars(p, q, _URIC, "query")
            self.uri.query = s[p:q]
            p = q
        return p

    def parse_authority(self, start: int, n: int) -> int:
        s = self.s
        server_chars = self.scan_set(start, n, _SERVER, escapes=True, other=True) == n
        reg_chars = self.scan_set(start, n, _REG_NAME, escapes=True, other=True) == n
        if reg_chars and not server_chars:
            self.uri.authority = s[start:n]
            return n
        error: JavaURISyntaxError | None = None
        q = start
        if server_chars:
            try:
                q = self.parse_server(start, n)
                if q < n:
                    self.fail("Expected end of authority", q)
                self.uri.authority = s[start:n]
            except JavaURISyntaxError as exc:
                # Not a server-based authority: Java falls back to a registry-based one, with no
                # host. This is how `my_host:5432` ends up "unparseable" for the JDBC extractors.
                self.uri.user_info = None
                self.uri.host = None
                self.uri.port = -1
                error = exc
                q = start
        if q < n:
            if reg_chars:
                self.uri.authority = s[start:n]
            elif error is not None:
                raise error
            else:
                self.fail("Illegal character in authority", q)
        return n

    def parse_server(self, start: int, n: int) -> int:
        s = self.s
        p = start
        q = self.scan_until(p, n, "/?#", "@")
        if q >= p and self.at(q, n, "@"):
            self.check_chars(p, q, _USERINFO, "user info")
            self.uri.user_info = s[p:q]
            p = q + 1
        if self.at(p, n, "["):
            p += 1
            q = self.scan_until(p, n, "/?#", "]")
            if q > p and self.at(q, n, "]"):
                self.check_ipv6(s[p:q])
                self.uri.host = s[p - 1 : q + 1]
                p = q + 1
            else:
                self.fail("Expected closing bracket for IPv6 address", q)
        else:
            q = self.parse_ipv4(p, n)
            if q <= p:
                q = self.parse_hostname(p, n)
            p = q
        if self.at(p, n, ":"):
            p += 1
            q = p
            while q < n and s[q] in _DIGIT:
                q += 1
            if q > p:
                try:
                    self.uri.port = int(s[p:q])
                except ValueError:
                    self.fail("Malformed port number", p)
                if self.uri.port > 2**31 - 1:
                    self.fail("Malformed port number", p)
                p = q
        if p < n:
            self.fail("Expected port number", p)
        return p

    def check_ipv6(self, text: str) -> None:
        # Java accepts RFC 2373 addresses (embedded IPv4 included) with an optional %scope.
        try:
            ipaddress.IPv6Address(text.split("%", 1)[0])
        except ValueError:
            self.fail("Malformed IPv6 address")

    def parse_ipv4(self, start: int, n: int) -> int:
        s = self.s
        m = start
        while m < n and (s[m] in _DIGIT or s[m] == "."):
            m += 1
        candidate = s[start:m]
        match = re.match(r"(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$", candidate)
        if m <= start or not match or any(int(g) > 255 for g in match.groups()):
            return -1
        p = m
        if p < n and s[p] != ":":
            return -1
        self.uri.host = s[start:p]
        return p

    def parse_hostname(self, start: int, n: int) -> int:
        s = self.s
        p = start
        last_label = -1
        while True:
            q = p
            while q < n and s[q] in _ALPHANUM:
                q += 1
            if q <= p:
                break
            last_label = p
            p = q
            q = p
            while q < n and (s[q] in _ALPHANUM or s[q] == "-"):
                q += 1
            if q > p:
                if s[q - 1] == "-":
                    self.fail("Illegal character in hostname", q - 1)
                p = q
            if not self.at(p, n, "."):
                break
            p += 1
            if p >= n:
                break
        if p < n and not self.at(p, n, ":"):
            self.fail("Illegal character in hostname", p)
        if last_label < 0:
            self.fail("Expected hostname", start)
        if last_label > start and s[last_label] not in _ALPHA:
            self.fail("Illegal character in hostname", last_label)
        self.uri.host = s[start:p]
        return p


def parse_java_uri(text: str) -> JavaURI:
    """`new java.net.URI(text)`; raises JavaURISyntaxError where Java throws."""
    return _Parser(text).parse()
