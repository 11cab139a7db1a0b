"""User identity rules: a platform's own naming convention, stated per connector as templates.

    [connectors.doris]
    namespace = "doris://{fenodes}"
    name = "{table.identifier}"

Template syntax (checked when the file is loaded, so a typo fails the load, not a job):

- `{key}`: the value of the table option `key`. Keys are what Flink accepts as option keys:
  letters, digits, `_`, `.` and `-` (e.g. `{fenodes}`, `{table.identifier}`,
  `{properties.bootstrap.servers}`). An option the table does not set: warning, no dataset.
- `{$table}`: the Flink table identifier `catalog.database.table`; `{$catalog}`, `{$database}`,
  `{$object}`: its three parts (the object part keeps any further dots). `$` marks the table
  fields, so they can never collide with an option key.
- `{{` and `}}`: literal braces. Any other `{` or `}` is an error, as is an empty `{}`, a key with
  other characters, or an unknown `$field`.
- A template may not name a secret option (secrets.is_secret_key): a password must never become
  part of a dataset identity.

User rules win over the built-in rule of the same connector.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from .rule_result import MissingOption, RuleResult
from .secrets import is_secret_key, strip_credentials

TABLE_FIELDS = ("$table", "$catalog", "$database", "$object")
_OPTION_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")


class TemplateError(ValueError):
    pass


@dataclass(frozen=True)
class Template:
    source: str
    parts: tuple[tuple[str, str], ...]  # ("text", literal) | ("option", key) | ("field", $name)

    @classmethod
    def parse(cls, source: str) -> Template:
        parts: list[tuple[str, str]] = []
        literal: list[str] = []
        i, n = 0, len(source)
        while i < n:
            c = source[i]
            if c == "{" and source.startswith("{{", i):
                literal.append("{")
                i += 2
            elif c == "}" and source.startswith("}}", i):
                literal.append("}")
                i += 2
            elif c == "}":
                raise TemplateError(f"unmatched '}}' at position {i} (write '}}}}' for a literal brace)")
            elif c == "{":
                end = source.find("}", i + 1)
                if end < 0:
                    raise TemplateError(f"unclosed '{{' at position {i}")
                inner = source[i + 1 : end]
                if inner == "":
                    raise TemplateError(f"empty placeholder '{{}}' at position {i}")
                if inner.startswith("$"):
                    if inner not in TABLE_FIELDS:
                        raise TemplateError(
                            f"unknown table field '{{{inner}}}' "
                            f"(known: {', '.join('{' + f + '}' for f in TABLE_FIELDS)})"
                        )
                    kind = "field"
                elif _OPTION_KEY.fullmatch(inner):
                    if is_secret_key(inner):
                        raise TemplateError(f"placeholder '{{{inner}}}' names a secret option")
                    kind = "option"
                else:
                    raise TemplateError(
                        f"invalid placeholder '{{{inner}}}' at position {i}: an option key may hold only "
                        "letters, digits, '_', '.' and '-', a table field starts with '$'"
                    )
                if literal:
                    parts.append(("text", "".join(literal)))
                    literal = []
                parts.append((kind, inner))
                i = end + 1
            else:
                literal.append(c)
                i += 1
        if literal:
            parts.append(("text", "".join(literal)))
        return cls(source, tuple(parts))

    def render(self, options: Mapping[str, str], table: str, connector: str) -> str:
        out = []
        for kind, value in self.parts:
            if kind == "text":
                out.append(value)
            elif kind == "option":
                if options.get(value) in (None, ""):
                    raise MissingOption(connector, value, " for its user rule")
                # a URL-valued option must not carry its credentials into an identity
                out.append(strip_credentials(str(options[value])))
            else:
                out.append(_table_field(value, table))
        return "".join(out)


class _TableFieldMissing(Exception):
    pass


def _table_field(field: str, table: str) -> str:
    if not table:
        raise _TableFieldMissing(f"'{{{field}}}' needs the table identifier, and none was given")
    if field == "$table":
        return table
    parts = table.split(".", 2)
    if len(parts) != 3:
        raise _TableFieldMissing(f"'{{{field}}}' needs a 'catalog.database.table' identifier")
    return parts[TABLE_FIELDS.index(field) - 1]


@dataclass(frozen=True)
class UserRule:
    connector: str
    namespace: Template
    name: Template
    source: str = ""  # the file it came from, for messages

    def __call__(self, options: Mapping[str, str], connector: str, table: str = "") -> RuleResult:
        try:
            namespace = self.namespace.render(options, table, connector)
            name = self.name.render(options, table, connector)
        except _TableFieldMissing as exc:
            return RuleResult(warnings=[f"user rule for connector '{connector}': {exc}; no dataset"])
        if not namespace or not name:
            empty = "namespace" if not namespace else "name"
            return RuleResult(warnings=[f"user rule for connector '{connector}' renders an empty {empty}; no dataset"])
        return RuleResult(datasets=[(namespace, name)])
