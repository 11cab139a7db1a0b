"""Column lineage of a Spark write from its analysed query (where Spark's analyzer resolved it).

The analysed plan (`toJSON`) names every column by its exprId. Walking it bottom-up gives, for
each exprId, the source columns it derives from and how, in the columnLineage facet's terms:
DIRECT IDENTITY (a column passed on), TRANSFORMATION (an expression of columns), AGGREGATION (an
aggregate or window function); and the dataset-wide INDIRECT sources: JOIN conditions, FILTER
(WHERE, HAVING), GROUP_BY, SORT and WINDOW partitioning and ordering, repeated on every output
column as for Flink. Source columns are those of the tables the analyzer saw: catalog tables (a
`LogicalRelation` and its CatalogTable) and views declared over a data source (a `View` over an
empty local relation); views over queries and CTEs are walked through. A node kind not read here
passes on its first child's columns by exprId (what Filter, Sort, SubqueryAlias, Limit, View and
Repartition do); a column whose origin is not found has no sources: nothing is invented.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from planlineage.spark.plan import Node, simple_name, subtree_json, tree

Kind = tuple[str, str]  # (type, subtype)
IDENTITY: Kind = ("DIRECT", "IDENTITY")
TRANSFORMATION: Kind = ("DIRECT", "TRANSFORMATION")
AGGREGATION: Kind = ("DIRECT", "AGGREGATION")
_INDIRECT_FIELDS = {
    "Join": [("condition", "JOIN")],
    "Filter": [("condition", "FILTER")],
    "Aggregate": [("groupingExpressions", "GROUP_BY")],
    "Sort": [("order", "SORT")],
    "Window": [("partitionSpec", "WINDOW"), ("orderSpec", "WINDOW")],
}
_LISTS = {"Project": "projectList", "Aggregate": "aggregateExpressions", "Window": "windowExpressions"}


@dataclass
class QueryColumns:
    columns: list[tuple[str, int]]  # the query's output: (name, exprId), in order
    direct: dict[int, dict[tuple[str, str], set[Kind]]] = field(default_factory=dict)
    indirect: dict[tuple[str, str], set[Kind]] = field(default_factory=dict)  # (table, column) -> kinds


def _expr_id(raw: dict) -> int | None:
    value = (raw.get("exprId") or {}).get("id")
    return value if isinstance(value, int) else None


def _expressions(value) -> list[list[dict]]:
    """A field holding one expression (a flat list) or several (a list of flat lists)."""
    if isinstance(value, list) and value:
        if isinstance(value[0], dict) and "class" in value[0]:
            return [value]
        return [v for v in value if isinstance(v, list) and v and isinstance(v[0], dict)]
    return []


def _kind(raw: dict) -> str:
    return simple_name(raw.get("class", ""))


def _references(flat: list[dict], skip: tuple[str, ...] = ()) -> list[int]:
    """The columns an expression reads; `skip` leaves out subtrees of those kinds."""
    found = []

    def visit(node: Node) -> None:
        if node.cls in skip:
            return
        if node.cls == "AttributeReference" and (exprid := _expr_id(node.fields)) is not None:
            found.append(exprid)
        for child in node.children:
            visit(child)

    visit(tree(flat))
    return found


def _output(node: Node) -> list[tuple[str, int]]:
    found = []
    for flat in _expressions(node.fields.get("output")):
        if (exprid := _expr_id(flat[0])) is not None:
            found.append((str(flat[0].get("name")), exprid))
    return found


def _table_of(node: Node) -> str | None:
    identifier = (node.fields.get("catalogTable") or node.fields.get("desc") or {}).get("identifier") or {}
    table = identifier.get("table")
    if not table:
        return None
    database = identifier.get("database")
    if node.cls == "View" and database in (None, "global_temp"):
        return str(table).lower()  # a temporary view, named as the script names it
    parts = (identifier.get("catalog") or "spark_catalog", database, table)
    return ".".join(str(p).lower() for p in parts if p)


def _columns_of(node: Node) -> list[int]:
    """The exprIds a node outputs, in order."""
    if node.cls in _LISTS and node.cls != "Window":
        return [i for e in _expressions(node.fields.get(_LISTS[node.cls])) if (i := _expr_id(e[0])) is not None]
    if node.cls == "Window":
        extra = [i for e in _expressions(node.fields.get("windowExpressions")) if (i := _expr_id(e[0])) is not None]
        return (_columns_of(node.children[0]) if node.children else []) + extra
    if node.cls == "Join":
        join_type = str((node.fields.get("joinType") or {}).get("object", ""))
        left = _columns_of(node.children[0]) if node.children else []
        if "LeftSemi" in join_type or "LeftAnti" in join_type or "ExistenceJoin" in join_type:
            return left
        return left + (_columns_of(node.children[1]) if len(node.children) > 1 else [])
    if _output(node):
        return [i for _, i in _output(node)]
    return _columns_of(node.children[0]) if node.children else []


def analyse(flat: list[dict]) -> QueryColumns:
    root = tree(flat)
    result = QueryColumns(columns=[])
    cte_columns: dict = {}  # CTE id -> its definition's output exprIds

    def derive(target: int, expression: list[dict], aggregate: bool, view_cast: bool) -> None:
        # A view's own projection casts its columns to the view's schema: that is not the query's
        # transformation, so under a View a cast of one column still passes it on.
        passing = ("Alias", "AttributeReference", "Cast", "UpCast") if view_cast else ("Alias", "AttributeReference")
        bare = all(_kind(raw) in passing for raw in expression) and len(_references(expression)) == 1
        kind = AGGREGATION if aggregate else (IDENTITY if bare else TRANSFORMATION)
        found: dict[tuple[str, str], set[Kind]] = {}
        # A window function's PARTITION BY / ORDER BY are dataset-wide (INDIRECT WINDOW), not its input.
        for reference in _references(expression, skip=("WindowSpecDefinition",)):
            for column, kinds in result.direct.get(reference, {}).items():
                if kind == IDENTITY:
                    found.setdefault(column, set()).update(kinds)
                else:
                    found.setdefault(column, set()).add(AGGREGATION if AGGREGATION in kinds else kind)
        result.direct[target] = found

    def visit(node: Node, under_view: bool = False) -> None:
        for child in node.children:
            visit(child, node.cls == "View")
        kind = node.cls
        leaf = kind == "LogicalRelation" or (
            kind == "View" and node.children and node.children[0].cls in ("LocalRelation", "LogicalRDD")
        )
        if leaf and (table := _table_of(node)):
            for name, exprid in _output(node) or _output(node.children[0]):
                result.direct[exprid] = {(table, name): {IDENTITY}}
        for field_name, subtype in _INDIRECT_FIELDS.get(kind, []):
            for expression in _expressions(node.fields.get(field_name)):
                for reference in _references(expression):
                    for column in result.direct.get(reference, {}):
                        result.indirect.setdefault(column, set()).add(("INDIRECT", subtype))
        if kind in _LISTS:
            for expression in _expressions(node.fields.get(_LISTS[kind])):
                target = _expr_id(expression[0])
                if target is None or _kind(expression[0]) == "AttributeReference":
                    continue  # a column passed on keeps its exprId, and so its origins
                aggregate = kind == "Window" or any(_kind(raw) == "AggregateExpression" for raw in expression)
                derive(target, expression, aggregate, under_view and kind == "Project")
        if kind == "CTERelationDef" and node.children:
            cte_columns[node.fields.get("id")] = _columns_of(node.children[0])
        if kind == "CTERelationRef":
            # A CTE reference outputs new exprIds standing for its definition's, by position.
            for (_, target), source in zip(_output(node), cte_columns.get(node.fields.get("cteId"), [])):
                result.direct[target] = dict(result.direct.get(source, {}))
        if kind == "Union" and node.children:
            # A union outputs its first child's exprIds; the other children add theirs by position.
            first = _columns_of(node.children[0])
            for other in node.children[1:]:
                for target, source in zip(first, _columns_of(other)):
                    merged = result.direct.setdefault(target, {})
                    for column, kinds in result.direct.get(source, {}).items():
                        merged.setdefault(column, set()).update(kinds)

    visit(root)
    names: dict[int, str] = {}
    for raw in subtree_json(root):
        if _kind(raw) in ("Alias", "AttributeReference") and (exprid := _expr_id(raw)) is not None:
            names.setdefault(exprid, str(raw.get("name")))
    result.columns = [(names.get(i, f"col{n + 1}"), i) for n, i in enumerate(_columns_of(root))]
    return result
