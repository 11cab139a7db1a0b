"""Reading the keys of a job's configuration text, and writing entries in the same syntax.

Two syntaxes, each read the way the engine that loads it reads it:

* Java properties (Spark's ``--properties-file`` and ``spark-defaults.conf``, read by
  ``java.util.Properties.load``): logical lines joined at an odd number of trailing backslashes
  (the continuation's leading whitespace dropped), ``#``/``!`` comment lines, ``\\r``, ``\\n`` or
  ``\\r\\n`` line ends, a key ending at the first unescaped ``=``, ``:`` or whitespace, at most one
  ``=``/``:`` separator with whitespace around it, and the escapes ``\\t \\n \\r \\f \\uXXXX`` (any
  other escaped character stands for itself).
* YAML (Flink's ``config.yaml``), read with PyYAML's ``safe_load``; nested mappings are flattened
  to dotted keys as Flink flattens them (``execution: {job-status-changed-listeners: X}`` is
  ``execution.job-status-changed-listeners``).

Writing is append-only (see :mod:`planlineage.listener_conf`), so what is written here
are single entries, escaped or quoted so that the same reader gives back exactly the same key and
value.
"""

from __future__ import annotations

import json
import re

PROPERTIES_WHITESPACE = " \t\f"
_NATURAL_LINE_END = re.compile(r"\r\n|\r|\n")
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


class SyntaxProblem(ValueError):
    """The text cannot be read in its syntax. The message never quotes the text (it may hold secrets)."""


# -- Java properties ---------------------------------------------------------------------------


def _ends_in_escape(line: str) -> bool:
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def logical_lines(text: str) -> list[str]:
    """The logical lines of a properties text, blank and comment lines left out."""
    lines: list[str] = []
    pending: str | None = None
    for natural in _NATURAL_LINE_END.split(text):
        if pending is None:
            stripped = natural.lstrip(PROPERTIES_WHITESPACE)
            if not stripped or stripped[0] in "#!":
                continue  # a blank or comment line never continues, even ending in a backslash
            line = stripped
        else:
            line = natural.lstrip(PROPERTIES_WHITESPACE)
        if _ends_in_escape(line):
            pending = (pending or "") + line[:-1]
            continue
        lines.append((pending or "") + line)
        pending = None
    if pending is not None:
        lines.append(pending)
    return lines


def unescape(text: str) -> str:
    """``Properties.loadConvert``: ``\\uXXXX`` (UTF-16 units, so surrogate pairs join), ``\\t`` etc."""
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        index += 1
        if char != "\\" or index == len(text):
            if char != "\\":
                out.append(char)
            continue
        char = text[index]
        index += 1
        if char == "u":
            digits = text[index : index + 4]
            if len(digits) != 4 or not all(d in "0123456789abcdefABCDEF" for d in digits):
                raise SyntaxProblem("a \\u escape is not followed by four hexadecimal digits (Malformed \\uxxxx)")
            out.append(chr(int(digits, 16)))
            index += 4
        else:
            out.append(_ESCAPES.get(char, char))
    joined = "".join(out)
    # Java strings are UTF-16: a pair of \\u escapes may encode one character beyond the BMP.
    return joined.encode("utf-16", "surrogatepass").decode("utf-16") if _has_surrogates(joined) else joined


def _has_surrogates(text: str) -> bool:
    return any("\ud800" <= char <= "\udfff" for char in text)


def split_entry(line: str) -> tuple[str, str, str]:
    """``(raw key, separator, raw value)`` of a logical line; separator ``=``, ``:`` or `` ``."""
    index = 0
    while index < len(line):
        char = line[index]
        if char == "\\":
            index += 2
            continue
        if char in "=:" or char in PROPERTIES_WHITESPACE:
            break
        index += 1
    key = line[:index]
    rest = line[index:]
    trimmed = rest.lstrip(PROPERTIES_WHITESPACE)
    separator = " " if trimmed != rest else ""
    if trimmed[:1] in ("=", ":"):
        separator = trimmed[0]
        trimmed = trimmed[1:].lstrip(PROPERTIES_WHITESPACE)
    return key, separator, trimmed


def parse_properties(text: str) -> tuple[dict[str, str], str | None]:
    """``(key -> value, separator style)``; style is ``=``, ``:`` or `` `` of the first entry."""
    found: dict[str, str] = {}
    style = None
    for line in logical_lines(text):
        raw_key, separator, raw_value = split_entry(line)
        key = unescape(raw_key)
        found[key] = unescape(raw_value)
        style = style or separator or None
    return found, style


def _escape_properties(text: str, *, key: bool) -> str:
    """``Properties.saveConvert``: what `unescape` reads back as `text` (non-ASCII as ``\\uXXXX``)."""
    out: list[str] = []
    for position, char in enumerate(text):
        if char == "\\":
            out.append("\\\\")
        elif char in "\t\n\r\f":
            out.append("\\" + {"\t": "t", "\n": "n", "\r": "r", "\f": "f"}[char])
        elif char == " " and (key or position == 0):
            out.append("\\ ")
        elif key and (char in "=:" or (position == 0 and char in "#!")):
            out.append("\\" + char)
        elif " " <= char <= "~":
            out.append(char)
        else:
            units = char.encode("utf-16-be", "surrogatepass")
            out.extend(f"\\u{int.from_bytes(units[i : i + 2], 'big'):04x}" for i in range(0, len(units), 2))
    return "".join(out)


def format_property(key: str, value: str, style: str) -> str:
    separator = {"=": "=", ":": ": ", " ": " "}.get(style, "=")
    return f"{_escape_properties(key, key=True)}{separator}{_escape_properties(value, key=False)}"


# -- YAML ----------------------------------------------------------------------------------------


def _flink_string(value: object) -> str:
    """A YAML value as a string, the way Flink turns standard YAML values into option strings."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ";".join(_flink_string(item) for item in value)
    if isinstance(value, dict):
        return json.dumps(value, default=str)
    return str(value)


def _flatten(mapping: dict, prefix: str, into: dict[str, str]) -> None:
    for key, value in mapping.items():
        name = prefix + _flink_string(key)
        if isinstance(value, dict) and value:
            _flatten(value, name + ".", into)
        else:
            into[name] = _flink_string(value)


def yaml_keys(text: str) -> dict[str, str]:
    """Flattened keys (``a.b.c``) of a YAML mapping; an empty document has none."""
    import yaml  # only the conf commands read YAML

    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise SyntaxProblem(f"the configuration is not valid YAML{where}") from None
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise SyntaxProblem("the configuration is not a YAML mapping of options")
    found: dict[str, str] = {}
    _flatten(document, "", found)
    return found


_PLAIN = re.compile(r"^[A-Za-z0-9_./@+=-][A-Za-z0-9_./:@+=-]*$")


def _yaml_scalar(text: str) -> str:
    """`text` plain when YAML reads it back as this very string, else double-quoted."""
    import yaml

    if _PLAIN.match(text):
        try:
            if yaml.safe_load(f"k: {text}") == {"k": text}:
                return text
        except yaml.YAMLError:
            pass
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a YAML double-quoted scalar


def format_yaml(key: str, value: str) -> str:
    return f"{_yaml_scalar(key)}: {_yaml_scalar(value)}"


def line_end(text: str) -> str:
    """The line end the text uses (``\\n`` for a text without one)."""
    if "\r\n" in text:
        return "\r\n"
    if "\r" in text and "\n" not in text:
        return "\r"
    return "\n"
