"""Splits a Flink SQL script into statements and says what each one is.

Done in Python, before any JVM starts, because a statement's line number must survive into error
messages, `SET` must be normalised (the SQL client accepts `SET k = v`, Flink's parser only the
quoted form), and the runtime mode must be known when the TableEnvironment is created.
"""

from __future__ import annotations

import re
from enum import Enum

from planlineage.errors import ScriptError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # annotations only: submit and a warm extract load this module, typing costs them ~5 ms
    from typing import Literal


class Kind(str, Enum):
    SET = "set"
    RESET = "reset"
    ADD_JAR = "add-jar"
    INSERT = "insert"  # INSERT INTO / INSERT OVERWRITE / EXECUTE INSERT
    STATEMENT_SET = "statement-set"  # EXECUTE STATEMENT SET BEGIN ... END
    STATEMENT_SET_MARKER = "statement-set-marker"  # the SQL client's BEGIN STATEMENT SET; / END;
    CTAS = "ctas"  # CREATE [OR REPLACE] TABLE ... AS query
    QUERY = "query"  # SELECT, WITH, VALUES: not executed
    INSPECT = "inspect"  # EXPLAIN, SHOW, DESCRIBE: not executed
    DDL = "ddl"  # CREATE/ALTER/DROP, USE, LOAD/UNLOAD MODULE, ...
    PLAN_FILE = "plan-file"  # EXECUTE PLAN 'file': runs a plan compiled elsewhere; not executed, warned


#: Statements that never reach the planner: they would not change a job's lineage.
NOT_EXECUTED = {Kind.QUERY, Kind.INSPECT, Kind.STATEMENT_SET_MARKER, Kind.PLAN_FILE}
#: Statements that declare sinks.
SINKS = {Kind.INSERT, Kind.STATEMENT_SET, Kind.CTAS}


class Statement:
    """One statement of a script.  A plain class rather than a dataclass: `submit` splits the
    script on the platform's path, where loading the dataclasses machinery costs more than the
    split itself."""

    __slots__ = ("sql", "line", "kind", "words", "set_pair")

    def __init__(
        self,
        sql: str,  # as written, comments and hints kept (hints matter)
        line: int,  # 1-based line of its first token
        kind: Kind = Kind.DDL,
        words: list[str] | None = None,  # leading keywords, upper-cased, comments removed
        set_pair: tuple[str, str] | None = None,  # for SET k = v
    ):
        self.sql = sql
        self.line = line
        self.kind = kind
        self.words = [] if words is None else words
        self.set_pair = set_pair

    def _fields(self) -> tuple:
        return (self.sql, self.line, self.kind, self.words, self.set_pair)

    def __eq__(self, other: object) -> bool:
        return self._fields() == other._fields() if isinstance(other, Statement) else NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass was

    def __repr__(self) -> str:
        return (
            f"Statement(sql={self.sql!r}, line={self.line!r}, kind={self.kind!r}, "
            f"words={self.words!r}, set_pair={self.set_pair!r})"
        )

    def for_planner(self) -> str:
        """The text Flink's parser gets: `SET` in the quoted form it accepts, and the INSERT or
        statement set a `COMPILE [AND EXECUTE] PLAN '…' FOR` carries (writing or running the plan
        file is the platform's business; the lineage is that of what it carries)."""
        if self.kind is Kind.SET and self.set_pair:
            key, value = self.set_pair
            return f"SET '{_quote(key)}' = '{_quote(value)}'"
        carried = _COMPILE_PLAN.match(self.sql)
        if carried:
            body = self.sql[carried.end() :]
            # Flink's parser knows a statement set on its own only as EXECUTE STATEMENT SET.
            prefix = self.kind is Kind.STATEMENT_SET and not body.lstrip().upper().startswith("EXECUTE")
            return "EXECUTE " + body if prefix else body
        return self.sql


#: `COMPILE PLAN 'file' [IF NOT EXISTS] FOR` / `COMPILE AND EXECUTE PLAN 'file' FOR` before an
#: INSERT or a statement set; comments may stand between the words.
_GAP = r"(?:\s|--[^\n]*(?:\n|$)|/\*(?!\+).*?\*/)+"
_COMPILE_PLAN = re.compile(
    rf"^\s*COMPILE{_GAP}(?:AND{_GAP}EXECUTE{_GAP})?PLAN{_GAP}'(?:[^']|'')*'{_GAP}"
    rf"(?:IF{_GAP}NOT{_GAP}EXISTS{_GAP})?FOR{_GAP}",
    re.IGNORECASE | re.DOTALL,
)


def _carried(code: str) -> str:
    """What a statement runs: the INSERT or statement set of a COMPILE PLAN, else itself."""
    match = _COMPILE_PLAN.match(code)
    return code[match.end() :] if match else code


def decode(data: bytes) -> str:
    """A script file's bytes as text (UTF-8, a BOM dropped); ScriptError naming the first line
    that is not UTF-8 text or holds a NUL byte (a binary file)."""
    nul = data.find(b"\0")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        bad = error.start
        if nul < 0 or bad < nul:
            line = data.count(b"\n", 0, bad) + 1
            raise ScriptError(
                f"byte 0x{data[bad]:02x} is not UTF-8 text: save the script as UTF-8 (is it a binary file?)", line
            ) from None
    if nul >= 0:
        raise ScriptError(
            "the file holds a NUL byte: it is a binary file, not a SQL script", data.count(b"\n", 0, nul) + 1
        )
    return text


def _quote(text: str) -> str:
    return text.replace("'", "''")


#: Where split() must look closer: quotes, comments and statement ends (the rest is copied as is).
_SPECIAL = re.compile(r"['\"`;]|--|/\*")


def split(script: str) -> list[Statement]:
    """Statements of a script, in order; empty and comment-only pieces are dropped."""
    statements: list[Statement] = []
    start = 0
    i = 0
    n = len(script)
    code: list[str] = []  # the current statement without comments, to read its keywords
    block = False  # inside EXECUTE STATEMENT SET BEGIN ... END, where ';' separates INSERTs
    piece_start = 0  # where the current ';'-separated piece starts: an index into `code`
    lines = _Lines(script)
    while i < n:
        special = _SPECIAL.search(script, i)
        if special is None:  # plain text up to the end
            code.append(script[i:])
            break
        if special.start() > i:  # plain text up to the next quote, comment or ';', as one piece
            code.append(script[i : special.start()])
            i = special.start()
        c = script[i]
        if c in "'\"`":
            end = _skip_quoted(script, i, c)
            code.append(script[i:end])
            i = end
            continue
        if script.startswith("--", i):
            end = script.find("\n", i)
            i = n if end < 0 else end
            code.append(" ")
            continue
        if script.startswith("/*", i):
            end = script.find("*/", i + 2)
            if end < 0:
                raise ScriptError("unterminated /* comment", _line_of(script, i))
            hint = script.startswith("/*+", i)
            code.append(script[i : end + 2] if hint else " ")
            i = end + 2
            continue
        if c == ";":
            # Joined once per statement (and inside a statement set once per piece): joining the
            # whole statement at each of a block's ';' made long blocks quadratic.
            text = None
            if block:
                piece = "".join(code[piece_start:])
            else:
                text = piece = "".join(code)
                block = _is_statement_set_start(text)
            if block:
                if piece.strip().upper() == "END" or _ends_with_end(piece):
                    block = False
                else:
                    code.append(";")
                    piece_start = len(code)
                    i += 1
                    continue
            _emit(statements, script, start, i, "".join(code) if text is None else text, lines)
            code = []
            piece_start = 0
            i += 1
            start = i
            continue
        code.append(c)
        i += 1
    _emit(statements, script, start, n, "".join(code), lines)
    return statements


_LITERAL_START = re.compile(r"['\"`]|--|/\*")


def end_of_literals(script: str, i: int, limit: int) -> int:
    """Scanning from ``i`` (outside any string or comment), the first index at or after ``limit``
    that is outside them: ``limit`` itself, or the end of the string or comment covering it (the
    end of the script when that one is never closed: :func:`split` reports it)."""
    while True:
        found = _LITERAL_START.search(script, i, limit)
        if found is None:
            return limit
        i = found.start()
        if script[i] in "'\"`":
            try:
                end = _skip_quoted(script, i, script[i])
            except ScriptError:
                return len(script)
        elif script.startswith("--", i):
            newline = script.find("\n", i)
            end = len(script) if newline < 0 else newline
        else:
            close = script.find("*/", i + 2)
            end = len(script) if close < 0 else close + 2
        if end > limit:
            return end
        i = end


def _skip_quoted(script: str, i: int, quote: str) -> int:
    j = i + 1
    while True:
        k = script.find(quote, j)
        if k < 0:
            kind = "identifier" if quote == "`" else "string"
            raise ScriptError(f"unterminated {kind} starting with {quote}", _line_of(script, i))
        if script.startswith(quote * 2, k):  # a doubled quote escapes itself
            j = k + 2
            continue
        return k + 1


def _line_of(script: str, index: int) -> int:
    return script.count("\n", 0, index) + 1


class _Lines:
    """Line numbers of positions met in order: each call counts only the newlines since the
    previous one (counting from the script's start for every statement made a split quadratic:
    20,000 statements took 16 s)."""

    __slots__ = ("script", "index", "line")

    def __init__(self, script: str):
        self.script = script
        self.index = 0
        self.line = 1

    def of(self, index: int) -> int:
        if index >= self.index:
            self.line += self.script.count("\n", self.index, index)
        else:
            self.line -= self.script.count("\n", index, self.index)
        self.index = index
        return self.line


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _leading_words(code: str, count: int = 8) -> list[str]:
    words = []
    for match in _WORD.finditer(code):
        # Stop at the first thing that is not a bare keyword-like word separated by spaces.
        words.append(match.group(0).upper())
        if len(words) == count:
            break
    return words


def _is_statement_set_start(code: str) -> bool:
    code = _carried(code)
    first = _WORD.search(code)  # asked at every statement's end: most fail on their first word
    if first is None or first.group(0).upper() not in ("EXECUTE", "STATEMENT"):
        return False
    words = _leading_words(code, 4)
    return words == ["EXECUTE", "STATEMENT", "SET", "BEGIN"] or words[:3] == ["STATEMENT", "SET", "BEGIN"]


def _ends_with_end(code: str) -> bool:
    return re.search(r"(^|;)\s*END\s*$", code, flags=re.IGNORECASE) is not None


def _emit(statements: list[Statement], script: str, start: int, end: int, code: str, lines: _Lines) -> None:
    if not code.strip():
        return
    # The statement's line is that of its first code character, not of comments before it.
    offset = start
    while offset < end:
        if script[offset].isspace():
            offset += 1
        elif script.startswith("--", offset):
            nl = script.find("\n", offset)
            offset = end if nl < 0 else nl
        elif script.startswith("/*", offset) and not script.startswith("/*+", offset):
            offset = script.find("*/", offset) + 2
        else:
            break
    statement = Statement(sql=script[offset:end].strip(), line=lines.of(offset))
    classify(statement, code)
    statements.append(statement)


_SET = re.compile(
    r"""^\s*SET\s+(?:'(?P<qk>(?:[^']|'')*)'|(?P<k>[^\s=]+))\s*=\s*(?:'(?P<qv>(?:[^']|'')*)'|(?P<v>.*?))\s*$""",
    re.IGNORECASE | re.DOTALL,
)


def classify(statement: Statement, code: str | None = None) -> Statement:
    """Sets `kind` (and `set_pair` for SET) from the statement's code."""
    code = _carried(statement.sql if code is None else code)
    words = _leading_words(code)
    statement.words = words
    first = words[0] if words else ""
    if first == "SET":
        match = _SET.match(code.strip())
        if match:
            key = match.group("qk").replace("''", "'") if match.group("qk") is not None else match.group("k")
            if match.group("qv") is not None:
                value = match.group("qv").replace("''", "'")
            else:
                value = match.group("v")
            statement.set_pair = (key, value)
            statement.kind = Kind.SET
        else:  # a bare SET lists the configuration: nothing to apply
            statement.kind = Kind.INSPECT
    elif first == "RESET":
        statement.kind = Kind.RESET
    elif words[:2] == ["ADD", "JAR"]:
        statement.kind = Kind.ADD_JAR
    elif first == "INSERT" or words[:2] == ["EXECUTE", "INSERT"]:
        statement.kind = Kind.INSERT
    elif words[:2] == ["EXECUTE", "PLAN"]:
        statement.kind = Kind.PLAN_FILE
    elif words[:4] == ["EXECUTE", "STATEMENT", "SET", "BEGIN"] or words[:3] == ["STATEMENT", "SET", "BEGIN"]:
        statement.kind = Kind.STATEMENT_SET
    elif words[:3] == ["BEGIN", "STATEMENT", "SET"] or words == ["END"]:
        statement.kind = Kind.STATEMENT_SET_MARKER
    elif first in {"SELECT", "WITH", "VALUES"} or code.lstrip().startswith("("):
        statement.kind = Kind.QUERY
    elif first in {"EXPLAIN", "SHOW", "DESCRIBE", "DESC"}:
        statement.kind = Kind.INSPECT
    elif first in {"CREATE", "REPLACE"} and _is_table_as_select(code):
        statement.kind = Kind.CTAS
    else:
        statement.kind = Kind.DDL
    return statement


def _is_table_as_select(code: str) -> bool:
    """CREATE [OR REPLACE] [TEMPORARY] TABLE ... AS <query> at parenthesis depth 0."""
    words = _leading_words(code, 5)
    head = [w for w in words if w not in {"OR", "REPLACE", "TEMPORARY", "CREATE"}]
    if not head or head[0] != "TABLE" or not _AS_QUERY.search(code):
        return False
    depth = 0
    i = 0
    # Only quotes, parentheses and the word AS matter: found by the regex engine, not char by char
    # in Python (a CREATE TABLE with its columns and options is hundreds of characters).
    while (found := _CTAS_MARKS.search(code, i)) is not None:
        mark = found.group(0)
        if mark in "'\"`":
            i = _skip_quoted(code, found.start(), mark)
            continue
        if mark == "(":
            depth += 1
        elif mark == ")":
            depth -= 1
        elif depth == 0:
            after = code[found.start() + 2 :]
            following = _leading_words(after, 1)
            if following and following[0] in {"SELECT", "WITH", "VALUES", "TABLE"} or after.lstrip().startswith("("):
                return True
        i = found.end()
    return False


# A quote, a parenthesis, or AS as a word of its own followed by white space or "(".
_CTAS_MARKS = re.compile(r"""['"`()]|(?<!\w)AS(?=[\s(])""", re.IGNORECASE)
# What the scan above needs to find, wherever it stands: an AS followed by "(" or by a query's
# first word. Most CREATE TABLE statements have none (their AS are computed columns and
# watermarks) and skip the scan, a third of splitting a script.
_AS_QUERY = re.compile(
    r"(?<!\w)AS(?=[\s(])(?:\s*\(|[^A-Za-z_]*(?:SELECT|WITH|VALUES|TABLE)(?![A-Za-z0-9_]))", re.IGNORECASE
)


#: Parentheses nested deeper than this are refused before the planner sees them: Flink's parser
#: read 3,000 levels (1.20, measured) and failed at 10,000 with a message about itself
#: ("SqlParseException.getMessage() is null"), not about the script.
MAX_NESTING = 3000
_NEST_MARKS = re.compile(r"['\"`()]|--|/\*")


def nesting(sql: str) -> int:
    """How deep parentheses nest in a statement (outside strings, identifiers and comments)."""
    if sql.count("(") <= MAX_NESTING:  # the usual statement: not read
        return 0
    depth = deepest = 0
    i = 0
    while (found := _NEST_MARKS.search(sql, i)) is not None:
        mark = found.group(0)
        if mark == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif mark == ")":
            depth -= 1
        elif mark == "--":
            end = sql.find("\n", found.end())
            i = len(sql) if end < 0 else end
            continue
        elif mark == "/*":
            end = sql.find("*/", found.end())
            i = len(sql) if end < 0 else end + 2
            continue
        else:
            i = _skip_quoted(sql, found.start(), mark)
            continue
        i = found.end()
    return deepest


def check_nesting(statements: list[Statement]) -> None:
    """ScriptError naming the first statement nested deeper than :data:`MAX_NESTING`."""
    for statement in statements:
        depth = nesting(statement.sql)
        if depth > MAX_NESTING:
            raise ScriptError(
                f"parentheses nest {depth:,} deep, deeper than the planner's parser reads ({MAX_NESTING:,}): "
                "write the expression flatter (is the script generated?)",
                statement.line,
            )


def runtime_mode(statements: list[Statement]) -> Literal["streaming", "batch"]:
    """`streaming` or `batch`: the last `execution.runtime-mode` the script sets."""
    mode = "streaming"
    for statement in statements:
        if statement.kind is Kind.SET and statement.set_pair:
            key, value = statement.set_pair
            if key.strip() == "execution.runtime-mode":
                mode = value.strip().lower()
        elif statement.kind is Kind.RESET:
            rest = statement.sql.strip()[len("RESET") :].strip().strip(";").strip().strip("'")
            if rest in ("", "execution.runtime-mode"):
                mode = "streaming"
    return "batch" if mode == "batch" else "streaming"
