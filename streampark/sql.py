"""StreamPark's stored text: base64 of zlib-deflate, and its ``${var}`` substitution.

``DeflaterUtils.zipString`` (streampark-common) deflates ``text.getBytes()`` (the console JVM's
default charset) at BEST_COMPRESSION into a zlib stream and Base64-encodes it; blank text is
stored as ``""``.  ``t_flink_sql.sql``, ``t_spark_sql.sql`` and ``t_flink_env.flink_conf`` use it.

``VariableServiceImpl.replaceVariable`` replaces, for each match of
``\\$\\{([A-Za-z])+([A-Za-z0-9._-])+\\}`` in the original text (so a name needs at least two
characters), every occurrence of that placeholder with the team's variable value, unless the
value is unknown or blank, in which case the placeholder stays.
"""

from __future__ import annotations

import base64
import binascii
import re
import zlib

DEFAULT_CHARSET = "utf-8"
_PLACEHOLDER = re.compile(r"\$\{([A-Za-z])+([A-Za-z0-9._-])+\}")


class DecodeError(ValueError):
    """A stored text is not StreamPark's deflate+base64 encoding."""


def decode(stored: str | None, charset: str = DEFAULT_CHARSET) -> str | None:
    """The plain text of a stored value (``None`` stays ``None``, blank stays ``""``)."""
    if stored is None:
        return None
    if stored.strip() == "":
        return ""
    try:
        return zlib.decompress(base64.b64decode(stored, validate=False)).decode(charset)
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


def replace_variables(text: str | None, variables: dict[str, str]) -> str | None:
    """``text`` with the team's ``${name}`` placeholders replaced as the console does at start."""
    if text is None or text.strip() == "" or not variables:
        return text
    out = text
    for match in _PLACEHOLDER.finditer(text):
        placeholder = match.group(0)
        value = variables.get(placeholder[2:-1])
        if value is not None and value.strip() != "":
            out = out.replace(placeholder, value)
    return out
