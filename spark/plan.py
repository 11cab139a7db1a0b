"""Spark's serialised logical plans (`TreeNode.toJSON`) as trees, and what a walk needs from them.

`toJSON` writes a tree as a flat list in pre-order: each node carries `num-children`, and a field
naming a child holds its index among the node's children (`"query": 1`). A field that holds
another tree (the target of an INSERT, an expression with a subquery) holds its own flat list.
The walk reads only a few classes by their simple names, which are the same in Spark 3.5 and 4.0;
everything else is searched generically, so a node kind Spark adds later cannot hide a table.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass
class Node:
    cls: str  # simple class name, e.g. "InsertIntoStatement"
    fields: dict
    children: list[Node] = field(default_factory=list)

    def child(self, name: str) -> Node | None:
        """The child a field points to by index (`"query": 1`)."""
        index = self.fields.get(name)
        if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(self.children):
            return self.children[index]
        return None

    def embedded(self, name: str) -> Node | None:
        """A field that holds a whole tree of its own (a flat list of nodes)."""
        value = self.fields.get(name)
        if isinstance(value, list) and value and isinstance(value[0], dict) and "class" in value[0]:
            return tree(value)
        return None


def simple_name(qualified: str) -> str:
    return qualified.rsplit(".", 1)[-1].rstrip("$")


def tree(flat: list[dict]) -> Node:
    """The root of a flat pre-order list."""
    position = 0

    def build() -> Node:
        nonlocal position
        raw = flat[position]
        position += 1
        node = Node(simple_name(raw.get("class", "")), raw)
        for _ in range(int(raw.get("num-children", 0))):
            node.children.append(build())
        return node

    return build()


def name_parts(value) -> list[str]:
    """A multipart identifier as toJSON writes it: a list, or Scala's `[a, b]` rendering."""
    if isinstance(value, list):
        return [str(v) for v in value]
    if isinstance(value, str):
        text = value[1:-1] if value.startswith("[") and value.endswith("]") else value
        return [part for part in text.split(", ")] if text else []
    return []


def walk_json(value) -> Iterator[dict]:
    """Every serialised node anywhere below a value: children, embedded trees, expressions."""
    if isinstance(value, dict):
        if "class" in value:
            yield value
        for item in value.values():
            yield from walk_json(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk_json(item)


def subtree_json(node: Node) -> Iterator[dict]:
    """Every serialised node of a subtree (its own fields, its children's, embedded trees)."""
    yield from walk_json(node.fields)
    for child in node.children:
        yield from subtree_json(child)


def relations(node: Node) -> list[list[str]]:
    """Every table reference in a subtree, in plan order, with the names of CTEs defined in it removed.

    A CTE name shadows a table only inside its WITH; treating it as defined for the whole
    statement is exact unless one statement uses a CTE name for a real table elsewhere.
    """
    found: list[list[str]] = []
    ctes: set[str] = set()
    for raw in subtree_json(node):
        kind = simple_name(raw.get("class", ""))
        if kind == "UnresolvedRelation":
            found.append(name_parts(raw.get("multipartIdentifier")))
        elif kind in ("UnresolvedWith", "WithCTE"):
            for relation in raw.get("cteRelations") or []:
                if isinstance(relation, dict) and isinstance(relation.get("_1"), str):
                    ctes.add(relation["_1"].lower())
    return [parts for parts in found if not (len(parts) == 1 and parts[0].lower() in ctes)]


def table_spec(node: Node) -> dict:
    """provider, location, options and columns of CREATE/REPLACE TABLE [AS SELECT] (3.5 and 4.0)."""
    spec_raw = node.fields.get("tableSpec")
    spec: dict = {}
    if isinstance(spec_raw, list) and spec_raw:
        spec_node = tree(spec_raw)
        spec = dict(spec_node.fields)
        options = {}
        for child in spec_node.children:
            if child.cls == "OptionList":
                for pair in child.fields.get("options") or []:
                    value = pair.get("_2")
                    literal = value[0] if isinstance(value, list) and value else {}
                    if isinstance(pair.get("_1"), str) and literal.get("value") is not None:
                        options[pair["_1"]] = str(literal["value"])
        spec["options"] = options
    elif isinstance(spec_raw, dict):  # a serialised TableSpec object
        spec = dict(spec_raw)
        spec["options"] = {}
    columns = []
    schema = node.fields.get("tableSchema")
    if isinstance(schema, dict):  # Spark 3.5: a StructType
        columns = [{"name": f["name"], "type": type_name(f.get("type"))} for f in schema.get("fields", [])]
    for column in node.fields.get("columns") or []:  # Spark 4.0: ColumnDefinition nodes
        definition = column[0] if isinstance(column, list) and column else column
        if isinstance(definition, dict) and "name" in definition:
            columns.append({"name": definition["name"], "type": type_name(definition.get("dataType"))})
    return {
        "provider": spec.get("provider"),
        "location": spec.get("location"),
        "options": spec.get("options") or {},
        "columns": columns,
    }


# Spark's JSON names of the types whose SQL names differ (DataType.typeName vs. simpleString).
_SQL_TYPES = {"long": "BIGINT", "integer": "INT", "short": "SMALLINT", "byte": "TINYINT"}


def type_name(value) -> str:
    """A column type as Spark SQL writes it (BIGINT, not toJSON's `long`)."""
    if isinstance(value, str):
        return _SQL_TYPES.get(value, value.upper())
    if isinstance(value, dict):
        return str(value.get("type", "struct")).upper()
    return "UNKNOWN"
