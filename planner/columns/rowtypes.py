"""Names and types of the plan's serialised row types."""

from __future__ import annotations

import re


def row_names(row_type) -> list[str] | None:
    """Field names of a serialised row type: `{"type": "ROW", "fields": [...]}` or `ROW<`a` T, ...>`."""
    if isinstance(row_type, dict):
        fields = row_type.get("fields")
        if isinstance(fields, list) and all(isinstance(f, dict) and "name" in f for f in fields):
            return [f["name"] for f in fields]
        return None
    if not isinstance(row_type, str) or not row_type.strip().upper().startswith("ROW<"):
        return None
    return _names_in_row_text(row_type.strip())


def _names_in_row_text(text: str) -> list[str]:
    names, depth, i, expect_name = [], 0, 0, False
    while i < len(text):
        c = text[i]
        if c in "`'":
            end, value = _quoted(text, i)
            if c == "`" and depth == 1 and expect_name:
                names.append(value)
                expect_name = False
            i = end
            continue
        if c in "<(":
            depth += 1
            expect_name = depth == 1
        elif c in ">)":
            depth -= 1
        elif c == "," and depth == 1:
            expect_name = True
        i += 1
    return names


def _quoted(text: str, start: int) -> tuple[int, str]:
    quote, i, value = text[start], start + 1, []
    while i < len(text):
        if text[i] == quote:
            if text.startswith(quote * 2, i):
                value.append(quote)
                i += 2
                continue
            return i + 1, "".join(value)
        value.append(text[i])
        i += 1
    return i, "".join(value)


def plain_type(value) -> str | None:
    """A type without nullability and time-attribute markers, to tell a value-preserving CAST."""
    if isinstance(value, dict):
        root = {"TIMESTAMP_WITHOUT_TIME_ZONE": "TIMESTAMP", "TIMESTAMP_WITH_LOCAL_TIME_ZONE": "TIMESTAMP_LTZ"}.get(
            str(value.get("type"))
        )
        if root and isinstance(value.get("precision"), int):
            return f"{root}({value['precision']})"
        return None
    if not isinstance(value, str):
        return None
    text = re.sub(r"\s*\*(ROWTIME|PROCTIME)\*", "", value).replace(" NOT NULL", "").strip()
    return re.sub(r"^TIMESTAMP\((\d+)\) WITH LOCAL TIME ZONE$", r"TIMESTAMP_LTZ(\1)", text)
