"""How a script uses the functions it creates: the kind and result type a stand-in must have.

A function whose class the analyser cannot load (or any Python function) is compiled as a
stand-in that accepts any arguments (planner/java/.../StandInFunctions.java). The SQL text is the
only thing that says what the stand-in must be, so this reads it, without a JVM:

- kind: `table` when called as `TABLE(f(...))` (LATERAL TABLE, JOIN ... ON TRUE), `aggregate`
  when followed by `OVER`, called with `DISTINCT`, or in the select list / HAVING of a grouped
  query on a column that is not grouped (or next to other aggregates without GROUP BY), else
  `scalar`. A table-aggregate function cannot be called from SQL, so it never needs a kind.
- type: the target of a `CAST(f(...) AS T)` around it, BOOLEAN where it stands as a condition
  (WHERE/AND/OR/NOT/HAVING/WHEN/ON), else none: the stand-in's documented default, STRING. A use
  the planner then rejects (a typed builtin's argument, a comparison, a CAST, a sink column, also
  through an alias) retypes the stand-in inside the compile server, from the planner's own
  message (StandInFunctions#learning).
- fields: for a table function, one STRING per alias of `AS T(a, b, ...)` (one field without).

Wrong hints cannot invent lineage: which tables a statement reads does not depend on what a
function computes; a wrong hint can only make the compile fail, which is reported as such.
"""

from __future__ import annotations

import re

from planlineage.planner.protocol import FunctionHint

_CREATE_FUNCTION = re.compile(
    r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMPORARY\s+)?(?:SYSTEM\s+)?FUNCTION\s+(?:IF\s+NOT\s+EXISTS\s+)?"
    r"(?P<name>[\w`.$]+)",
    re.IGNORECASE,
)
_AGGREGATES = {
    "SUM", "COUNT", "AVG", "MIN", "MAX", "LISTAGG", "COLLECT", "FIRST_VALUE", "LAST_VALUE", "STDDEV_POP",
    "STDDEV_SAMP", "VAR_POP", "VAR_SAMP", "ARRAY_AGG", "JSON_OBJECTAGG", "JSON_ARRAYAGG", "SUM0",
}  # fmt: skip
_CONDITION_BEFORE = re.compile(r"\b(?:WHERE|AND|OR|NOT|HAVING|WHEN|ON)\s*$", re.IGNORECASE)
_CONDITION_AFTER = re.compile(
    r"^\s*(?:$|\)|;|AND\b|OR\b|THEN\b|GROUP\b|ORDER\b|HAVING\b|WINDOW\b|LIMIT\b|UNION\b|LEFT\b|RIGHT\b|"
    r"INNER\b|JOIN\b|FULL\b|CROSS\b|WHERE\b)",
    re.IGNORECASE,
)
_IDENTIFIER = re.compile(r"[A-Za-z_][\w$]*")
_FUNCTION_WORD = re.compile(r"FUNCTION", re.IGNORECASE)


def created_functions(sqls: list[str]) -> list[str]:
    """The simple (unqualified, lower-cased) names of the functions a script creates."""
    names = []
    for sql in sqls:
        match = _CREATE_FUNCTION.match(code_of(sql))
        if match:
            name = match["name"].replace("`", "").split(".")[-1].lower()
            if name and name not in names:
                names.append(name)
    return names


def function_hints(sqls: list[str]) -> dict[str, FunctionHint]:
    """{name: {"kind": .., "type": .. | None, "fields": [..]}} for every function the script creates."""
    if not any(_FUNCTION_WORD.search(sql) for sql in sqls):
        return {}  # no statement can create a function: spare every statement's scan
    names = created_functions(sqls)
    if not names:
        return {}
    # The INSERTs of a statement set are read one by one (strings are blanked, so ';' splits).
    uses = [piece for sql in sqls if not _CREATE_FUNCTION.match(code_of(sql)) for piece in code_of(sql).split(";")]
    return {name: _hint(name, uses) for name in names}


def code_of(sql: str) -> str:
    """The statement without comments, string literal contents blanked and backticks dropped,
    so that positions and parentheses can be read with plain scanning."""
    out = []
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end < 0 else end
            out.append(" ")
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            i = n if end < 0 else end + 2
            out.append(" ")
        elif c == "'":
            j = i + 1
            while j < n and not (sql[j] == "'" and not sql.startswith("''", j)):
                j += 2 if sql.startswith("''", j) else 1
            out.append("''")
            i = j + 1
        elif c == "`":
            end = sql.find("`", i + 1)
            out.append(sql[i + 1 : end if end > 0 else n])
            i = n if end < 0 else end + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _hint(name: str, uses: list[str]) -> FunctionHint:
    kind = "scalar"
    type_hint: str | None = None
    fields: list[str] = []
    call = re.compile(rf"(?<![\w.$])(?:[\w$]+\.){{0,2}}{re.escape(name)}\s*\(", re.IGNORECASE)
    for code in uses:
        for match in call.finditer(code):
            start, open_paren = match.start(), match.end() - 1
            close = _matching(code, open_paren)
            before, after = code[:start], code[close + 1 :]
            if re.search(r"\bTABLE\s*\(\s*$", before, re.IGNORECASE):
                kind = "table"
                aliases = re.match(r"^\s*\)\s*(?:AS\s+)?[\w$]+\s*\(([^()]*)\)", after, re.IGNORECASE)
                count = len(aliases[1].split(",")) if aliases else 1
                fields = fields if len(fields) >= count else ["STRING"] * count
                continue
            if kind != "table" and _is_aggregate_call(code, start, open_paren, close):
                kind = "aggregate"
            if type_hint is None:
                type_hint = _type_from_context(code, before, after)
    return {"kind": kind, "type": None if kind == "table" else type_hint, "fields": fields}


def _matching(code: str, open_paren: int) -> int:
    depth = 0
    for i in range(open_paren, len(code)):
        if code[i] == "(":
            depth += 1
        elif code[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return len(code) - 1


def _enclosing(code: str, position: int) -> list[int]:
    """Positions of the unclosed '(' around `position`, innermost first."""
    stack: list[int] = []
    for i in range(position):
        if code[i] == "(":
            stack.append(i)
        elif code[i] == ")" and stack:
            stack.pop()
    return stack[::-1]


def _word_before(code: str, position: int) -> str:
    found = re.search(r"([\w$]+)\s*$", code[:position])
    return found[1].upper() if found else ""


def _is_aggregate_call(code: str, start: int, open_paren: int, close: int) -> bool:
    after = code[close + 1 :]
    args = code[open_paren + 1 : close]
    if re.match(r"^\s*OVER\b", after, re.IGNORECASE) or re.match(r"^\s*DISTINCT\b", args, re.IGNORECASE):
        return True
    block_start, block_end = 0, len(code)
    for paren in _enclosing(code, start):
        if _word_before(code, paren) in _AGGREGATES:
            return False  # an argument of an aggregate is computed per row
        if re.match(r"^\s*(?:SELECT|WITH)\b", code[paren + 1 :], re.IGNORECASE):
            block_start, block_end = paren + 1, _matching(code, paren)
            break
    block = _depth_zero(code, block_start, block_end)
    # the query block of the call: from its SELECT to the next set operator at the same depth
    selects = [i for i, (position, word) in enumerate(block) if word == "SELECT" and position <= start]
    if selects:
        block = block[selects[-1] :]
        ends = [i for i, (_, word) in enumerate(block) if i and word in {"SELECT", "UNION", "INTERSECT", "EXCEPT"}]
        block = block[: ends[0]] + [(block[ends[0]][0], "")] if ends else block
    select = _clause(block, "SELECT", ("FROM",))
    having = _clause(block, "HAVING", ("ORDER", "LIMIT", "WINDOW", "UNION"))
    inside = any(s <= start < e for s, e in (select, having) if s >= 0)
    if not inside:
        return False
    group = _clause(block, "GROUP BY", ("HAVING", "ORDER", "LIMIT", "WINDOW", "UNION"))
    if group[0] >= 0:
        keys = {w.upper() for w in _IDENTIFIER.findall(code[group[0] : group[1]])}
        # columns the call reads: identifiers that are not themselves called
        used = {m[0].upper() for m in _IDENTIFIER.finditer(args) if not re.match(r"\s*\(", args[m.end() :])}
        used -= {"DISTINCT", "AS", "TRUE", "FALSE", "NULL"}
        return not used or not used <= keys
    others = re.finditer(r"([\w$]+)\s*\(", code[select[0] : select[1]])
    return any(m[1].upper() in _AGGREGATES for m in others)


def _depth_zero(code: str, start: int, end: int) -> list[tuple[int, str]]:
    """(position, upper-cased word) of the words of code[start:end] outside any parenthesis."""
    words = []
    depth = 0
    i = start
    while i < end:
        c = code[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif depth == 0 and (c.isalpha() or c == "_") and (i == 0 or not (code[i - 1].isalnum() or code[i - 1] == "_")):
            word = _IDENTIFIER.match(code, i)
            if word:
                words.append((i, word[0].upper()))
                i = word.end()
                continue
        i += 1
    return words + [(end, "")]


def _clause(words: list[tuple[int, str]], keyword: str, ends: tuple[str, ...]) -> tuple[int, int]:
    """[start, end) of a depth-zero clause introduced by `keyword` (a GROUP BY is two words)."""
    first, *rest = keyword.split()
    for index, (position, word) in enumerate(words):
        if word == first and all(
            index + k + 1 < len(words) and words[index + k + 1][1] == w for k, w in enumerate(rest)
        ):
            for later, lword in words[index + 1 :]:
                if lword in ends or lword == "":
                    return position, later
    return -1, -1


def _type_from_context(code: str, before: str, after: str) -> str | None:
    cast = re.search(r"\b(?:TRY_)?CAST\s*\(\s*$", before, re.IGNORECASE)
    target = re.match(r"^\s*AS\s+", after, re.IGNORECASE)
    if cast and target:
        open_paren = before.rindex("(")
        end = _matching(code, open_paren)
        offset = len(code) - len(after)
        text = code[offset + target.end() : end].strip()
        return " ".join(text.split()) or None
    if _CONDITION_BEFORE.search(before) and _CONDITION_AFTER.match(after):
        return "BOOLEAN"
    return None
