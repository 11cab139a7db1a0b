"""The target, column list and query of each INSERT of a statement, read from its text.

Catalogs the analyser cannot create are stood in, and a table of theirs the script never declares
has no schema. For a sink the schema is that of the query feeding it, which the planner can give
before the INSERT itself is validated, if it is told which query feeds which target
(StandInCatalogs.prepareInsert). Everything else about the INSERT stays the planner's business.
"""

from __future__ import annotations

import re

from planlineage.planner.protocol import InsertPart

_HEAD = re.compile(
    r"(?:EXECUTE\s+)?INSERT\s+(?:INTO|OVERWRITE)\s+(?:TABLE\s+)?(?P<target>(?:`(?:[^`]|``)+`|[\w$]+)"
    r"(?:\s*\.\s*(?:`(?:[^`]|``)+`|[\w$]+)){0,2})\s*",
    re.IGNORECASE,
)


def masked(sql: str) -> str:
    """The statement with comments, hints and string literal contents replaced by spaces, of the
    same length, so that positions found in it are positions in the statement."""
    out = list(sql)
    i, n = 0, len(sql)
    while i < n:
        if sql.startswith("--", i) or sql.startswith("/*", i):
            line = sql.startswith("--", i)
            end = sql.find("\n" if line else "*/", i + 2)
            end = n if end < 0 else (end if line else end + 2)
            blank_from, i_next = i, end
        elif sql[i] in "'\"":
            quote, end = sql[i], i + 1
            while end < n and not (sql[end] == quote and not sql.startswith(quote * 2, end)):
                end += 2 if sql.startswith(quote * 2, end) else 1
            blank_from, i_next = i + 1, end + 1  # the quotes themselves stay
        else:
            i += 1
            continue
        for k in range(blank_from, min(end, n)):
            out[k] = " "
        i = i_next
    return "".join(out)


def inserts(sql: str) -> list[InsertPart]:
    """[{"target", "columns" | None, "query"}] for each INSERT of an INSERT or statement set."""
    mask = masked(sql)
    found: list[InsertPart] = []
    for piece_start, piece_end in _pieces(mask):
        head = _HEAD.match(mask, _skip_space(mask, piece_start, piece_end))
        if not head or head.end() > piece_end:
            continue
        position = head.end()
        if re.match(r"PARTITION\b", mask[position:], re.IGNORECASE):
            continue  # static partitions: the sink's partition columns are not the query's
        columns = None
        if mask.startswith("(", position):
            close = mask.find(")", position)
            if close < 0:
                continue
            columns = [c.strip().strip("`") for c in sql[position + 1 : close].split(",")]
            position = close + 1
        query = sql[position:piece_end].strip()
        if query:
            found.append({"target": sql[head.start("target") : head.end("target")], "columns": columns, "query": query})
    return found


def _skip_space(mask: str, start: int, end: int) -> int:
    while start < end and mask[start].isspace():
        start += 1
    return start


def _pieces(mask: str) -> list[tuple[int, int]]:
    """[start, end) of the ';'-separated pieces, without a statement set's BEGIN and END."""
    begin = re.match(r"\s*(?:EXECUTE\s+)?STATEMENT\s+SET\s+BEGIN\b", mask, re.IGNORECASE)
    start = begin.end() if begin else 0
    pieces = []
    for part in re.finditer(r"[^;]+", mask[start:]):
        s, e = start + part.start(), start + part.end()
        if not re.fullmatch(r"\s*END\s*", mask[s:e], re.IGNORECASE):
            pieces.append((s, e))
    return pieces


def insert_pieces(sql: str) -> list[tuple[str, str, bool]]:
    """(target as written, the INSERT's own text, whether it overwrites) for each INSERT of an
    INSERT or statement set: the text of one INSERT of a statement set without its neighbours."""
    mask = masked(sql)
    found = []
    for piece_start, piece_end in _pieces(mask):
        start = _skip_space(mask, piece_start, piece_end)
        head = _HEAD.match(mask, start)
        if head and head.end() <= piece_end:
            overwrite = re.match(r"(?:EXECUTE\s+)?INSERT\s+OVERWRITE\b", mask[start:], re.IGNORECASE) is not None
            found.append((sql[head.start("target") : head.end("target")], sql[start:piece_end].strip(), overwrite))
    return found
