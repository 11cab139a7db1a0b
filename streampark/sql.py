"""StreamPark's stored text: base64 of zlib-deflate, and its ``${var}`` substitution.

``DeflaterUtils.zipString`` (streampark-common) deflates ``text.getBytes()`` (the console JVM's
default charset) at BEST_COMPRESSION into a zlib stream and Base64-encodes it; blank text is
stored as ``""``.  ``t_flink_sql.sql``, ``t_spark_sql.sql`` and ``t_flink_env.flink_conf`` use it.

``VariableServiceImpl.replaceVariable`` replaces, for each match of
``\\$\\{([A-Za-z])+([A-Za-z0-9._-])+\\}`` in the original text (so a name needs at least two
characters), every occurrence of that placeholder with the team's variable value, unless the
value is unknown or blank, in which case the placeholder stays.

Both are bounded, per stored text, because the watcher trusts no row (a 530 KB row can inflate to
196 MB; 200k placeholders replaced one by one, as the console does, took 36 s): the text is
inflated in steps up to :data:`MAX_TEXT_BYTES`, and substituted in one pass whose result may not
pass :data:`MAX_TEXT_CHARS`.  Past a limit :class:`TooLarge` says which; the caller skips that
app and goes on with the others.
"""

from __future__ import annotations

import base64
import binascii
import re
import zlib

DEFAULT_CHARSET = "utf-8"
#: The most a stored text may inflate to (bytes).  Real job scripts are kilobytes.
MAX_TEXT_BYTES = 8 * 1024 * 1024
#: The most characters a script may have once its variables are substituted.
MAX_TEXT_CHARS = 8 * 1024 * 1024
#: The most characters the console's own replace-per-placeholder loop may scan (used only when a
#: variable's value could make a new placeholder, see :func:`replace_variables`).
MAX_REPLACE_WORK = 64 * 1024 * 1024
# The console's pattern ``\$\{([A-Za-z])+([A-Za-z0-9._-])+\}`` matches the same names as this one,
# whose single character class after the first letter cannot backtrack on a long name.
_PLACEHOLDER = re.compile(r"\$\{[A-Za-z][A-Za-z0-9._-]+\}")


class DecodeError(ValueError):
    """A stored text is not StreamPark's deflate+base64 encoding."""


class TooLarge(DecodeError):
    """A stored text is past one of the watcher's limits (its message names the limit)."""


def _mib(limit: int) -> str:
    return f"{limit / (1024 * 1024):g} MiB"


def decode(stored: str | None, charset: str = DEFAULT_CHARSET, limit: int = MAX_TEXT_BYTES) -> str | None:
    """The plain text of a stored value (``None`` stays ``None``, blank stays ``""``); a text
    that would inflate past ``limit`` bytes is :class:`TooLarge` (never inflated further)."""
    if stored is None:
        return None
    if stored.strip() == "":
        return ""
    try:
        inflater = zlib.decompressobj()
        raw = inflater.decompress(base64.b64decode(stored, validate=False), limit + 1)
        if len(raw) > limit:
            raise TooLarge(
                f"its stored text inflates past {_mib(limit)}, the watcher's limit on a stored text "
                "(a guard against a compressed bomb): not compiled"
            )
        if not inflater.eof:
            raise zlib.error("incomplete or truncated stream")
        return raw.decode(charset)
    except (binascii.Error, zlib.error, UnicodeDecodeError, LookupError) as error:
        raise DecodeError(
            f"stored text is not deflate+base64 in {charset} ({type(error).__name__}); "
            "if the console runs with another default charset, pass --streampark-charset"
        ) from None


def encode(text: str, charset: str = DEFAULT_CHARSET) -> str:
    """What the console stores for ``text`` (the tests write rows as the console does)."""
    if text.strip() == "":
        return ""
    return base64.b64encode(zlib.compress(text.encode(charset), 9)).decode("ascii")


def replace_variables(
    text: str | None, variables: dict[str, str], limit: int = MAX_TEXT_CHARS, work: int = MAX_REPLACE_WORK
) -> str | None:
    """``text`` with the team's ``${name}`` placeholders replaced as the console does at start.

    The console replaces, match by match, every occurrence of that placeholder in the text so far
    (a scan of the whole text per placeholder).  When no value makes a new placeholder, that is
    one pass replacing each match, which is done here in linear time.  A replaceable placeholder
    still present after the pass is the sign that a value may have made one: then the console's
    loop itself is run, within ``work`` characters scanned.  A result past ``limit`` characters,
    or a loop past ``work``, is :class:`TooLarge`."""
    if text is None or text.strip() == "" or not variables:
        return text
    replaceable = {name: value for name, value in variables.items() if value is not None and value.strip() != ""}
    pieces: list[str] = []
    size = last = 0
    for match in _PLACEHOLDER.finditer(text):
        value = replaceable.get(match.group(0)[2:-1])
        if value is None:
            continue
        size += match.start() - last + len(value)
        if size > limit:
            raise _too_long(limit)
        pieces += (text[last : match.start()], value)
        last = match.end()
    pieces.append(text[last:])
    out = "".join(pieces)
    if len(out) > limit:
        raise _too_long(limit)
    if any(match.group(0)[2:-1] in replaceable for match in _PLACEHOLDER.finditer(out)):
        return _replace_as_the_console(text, replaceable, limit, work)
    return out


def _replace_as_the_console(text: str, replaceable: dict[str, str], limit: int, work: int) -> str:
    out, scanned = text, 0
    for match in _PLACEHOLDER.finditer(text):
        value = replaceable.get(match.group(0)[2:-1])
        if value is None:
            continue
        scanned += len(out)
        if scanned > work:
            raise TooLarge(
                f"substituting its ${{variables}} would scan more than {_mib(work)} of text, the watcher's "
                "limit on that work: not compiled"
            )
        out = out.replace(match.group(0), value)
        if len(out) > limit:
            raise _too_long(limit)
    return out


def _too_long(limit: int) -> TooLarge:
    return TooLarge(
        f"its script with ${{variables}} substituted is longer than {_mib(limit)} characters, the watcher's "
        "limit: not compiled"
    )
