"""Text from events made safe to show: on a terminal, in an HTML page, in DOT.

Names and namespaces in other producers' events are arbitrary strings. Written raw, an ESC or a
CSI (U+009B) starts a terminal escape sequence (a name can clear the screen, retitle the window
or hide the lines before it), a NUL byte lands in an HTML file, a bidirectional override
reorders what is shown, and a lone surrogate (valid in JSON as ``\\ud800``) cannot be encoded
as UTF-8 at all. :func:`visible` replaces each such character by its escape (``\\x1b``,
``\\u202e``), so what is shown says what the event holds and nothing else. Standard library only.
"""

from __future__ import annotations

import re

# C0 and C1 controls and DEL, surrogates, line/paragraph separators, bidirectional formatting.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match) -> str:
    code = ord(match[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` with every control, surrogate and bidirectional formatting character escaped."""
    return _UNSAFE.sub(_escape, text)


def shorten(text: str, limit: int) -> str:
    """At most `limit` characters: the start and the end of a longer text around an ellipsis (the
    end of a dataset name is its table, the start its database or bucket)."""
    if len(text) <= limit:
        return text
    head = (limit - 1) // 2
    tail = limit - 1 - head
    return text[:head] + "…" + text[len(text) - tail :]
