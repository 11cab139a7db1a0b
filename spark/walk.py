"""From the parsed statements of a Spark SQL script to its targets and their source tables.

Replays the script the way Spark's session would resolve names, without running anything:
`USE` moves the current database, temporary views (`CREATE TEMPORARY VIEW … AS`, `CACHE TABLE …
AS`) and views are expanded to the tables under them, a view declared over a path or a JDBC table
(`CREATE TEMPORARY VIEW v USING … OPTIONS (…)`) is itself a source, tables created in the script
remember their provider, location and options, and every statement that writes (INSERT
INTO/OVERWRITE [DIRECTORY], INSERT INTO … REPLACE WHERE, CTAS, RTAS, MERGE INTO, DELETE FROM,
UPDATE) pairs its target with its own sources. A multi-insert (`FROM src INSERT INTO a SELECT …
INSERT INTO b SELECT …`, a Union of writes to Spark's parser) is one write per INSERT. Two
statements writing the same target are one target with the union of their sources.

Which node is the output and which the inputs follows openlineage-spark's plan visitors, whatever
the analyzer turns a statement into on the job's catalog: an INSERT becomes AppendData (or
InsertIntoHadoopFsRelationCommand / InsertIntoHiveTable for session-catalog tables), INSERT
OVERWRITE becomes OverwriteByExpression or OverwritePartitionsDynamic, DELETE/UPDATE/MERGE on a
table with row-level operations become ReplaceData or WriteDelta, whose query scans the target;
the output is always the written table. Its lifecycle state change is what those visitors attach
(TableContentChangeDatasetBuilder, CreateReplaceDatasetBuilder, the v1 CTAS and insert visitors):
CREATE for CTAS, OVERWRITE for RTAS, INSERT OVERWRITE and REPLACE WHERE, none for an append,
DELETE, UPDATE or MERGE.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from planlineage.spark.plan import Node, name_parts, relations, simple_name, table_spec, tree, type_name

SESSION_CATALOG = "spark_catalog"
#: Data sources whose data is files at a location (`USING parquet`, Hive's `STORED AS`, lakehouse
#: formats whose openlineage-spark handlers name the table by its location).
FILE_PROVIDERS = {
    "parquet",
    "orc",
    "csv",
    "json",
    "text",
    "avro",
    "xml",
    "binaryfile",
    "delta",
    "iceberg",
    "hudi",
    "hive",
}
#: Formats Spark reads straight from a path in SQL: parquet.`s3a://bucket/key`.
PATH_FORMATS = FILE_PROVIDERS - {"hive", "iceberg"}

#: The writes a multi-insert's Union holds, each its own command when Spark runs it.
MULTI_INSERT_WRITES = ("InsertIntoStatement", "InsertIntoDir")

#: Writes this walk does not pair: named in a warning, never dropped silently.
UNSUPPORTED_WRITES = {
    "LoadData",
    "TruncateTable",
    "CreateTableLikeCommand",
    "AlterTableAsSelect",
}


# Spark's DataSource.backwardCompatibilityMap and the packages its built-in sources live in:
# `USING org.apache.spark.sql.jdbc` is `USING jdbc`.
_PROVIDER_ALIASES = {"com.databricks.spark.csv": "csv", "com.databricks.spark.avro": "avro"}
_BUILTIN_FORMATS = ("jdbc", "parquet", "orc", "json", "csv", "text", "avro")


def provider_name(raw: str | None) -> str | None:
    if not raw:
        return None
    name = raw.strip().lower()
    if name in _PROVIDER_ALIASES:
        return _PROVIDER_ALIASES[name]
    if name.startswith("org.apache.spark.sql."):
        for segment in reversed(name.split(".")):
            if segment in _BUILTIN_FORMATS:
                return segment
    return name


@dataclass
class Source:
    """A table as the script uses it: what it is named, and what is known of its storage."""

    display: str  # spark_catalog.db.t, a view's name, or parquet.`path`
    kind: str  # "table" (catalog), "view" (a view USING a data source), "path", "directory"
    provider: str | None = None
    location: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    columns: list[dict] = field(default_factory=list)
    declared: bool = False  # created in this script (provider/location known)
    catalog: str | None = None
    database: str | None = None
    name: str | None = None


#: openlineage-spark's lifecycleStateChange of an output this walk can tell.
LifecycleChange = Literal["CREATE", "OVERWRITE"]

#: The v2 write commands Spark's parser can produce itself (`INSERT INTO t REPLACE WHERE …` is
#: OverwriteByExpression) or the analyzer makes of an INSERT: the table is a tree of its own, the
#: query the node's child. The value is the lifecycle state change openlineage-spark reports.
V2_WRITES: dict[str, LifecycleChange | None] = {
    "AppendData": None,
    "OverwriteByExpression": "OVERWRITE",
    "OverwritePartitionsDynamic": "OVERWRITE",
}
#: Row-level writes: their target is a child, their conditions and assignments may read tables.
ROW_LEVEL_WRITES = ("DeleteFromTable", "UpdateTable")

#: When one script writes a target several times, the event carries the strongest change of the
#: run: a table created by the job stays CREATE, one whose content was replaced stays OVERWRITE.
_LIFECYCLE_RANK = {None: 0, "OVERWRITE": 1, "CREATE": 2}


@dataclass
class Target:
    source: Source
    inputs: list[Source] = field(default_factory=list)
    # Per write into this target, its analysed query (None where the analyzer did not run).
    query_plans: list[list[dict] | None] = field(default_factory=list)
    # openlineage-spark's lifecycleStateChange of the output: "CREATE", "OVERWRITE" or None.
    lifecycle: LifecycleChange | None = None
    # The script line of each statement writing into this target (its job's SQL facet).
    lines: list[int] = field(default_factory=list)


@dataclass
class ScriptLineage:
    targets: list[Target] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass
class _Session:
    catalog: str = SESSION_CATALOG
    database: str = "default"
    temp_views: dict[str, list[Source]] = field(default_factory=dict)  # name -> what it expands to
    global_views: dict[str, list[Source]] = field(default_factory=dict)
    views: dict[str, list[Source]] = field(default_factory=dict)  # qualified persistent views
    tables: dict[str, Source] = field(default_factory=dict)  # qualified -> declared table
    catalogs: frozenset[str] = frozenset()


def walk(statements: list[dict], catalogs: frozenset[str] = frozenset()) -> ScriptLineage:
    """`statements`: the analyze server's answer items ({line, class, plan, extra, analysis});
    `catalogs`: the catalogs the job's conf registers (`spark.sql.catalog.<name>`), lower-cased."""
    session = _Session(catalogs=catalogs)
    result = ScriptLineage()
    by_target: dict[str, Target] = {}

    def write(
        target: Source,
        inputs: list[Source],
        query_plan: list[dict] | None = None,
        lifecycle: LifecycleChange | None = None,
    ) -> None:
        entry = by_target.get(target.display)
        if entry is None:
            entry = by_target[target.display] = Target(target)
            result.targets.append(entry)
        elif target.declared and not entry.source.declared:
            entry.source = target
        for source in inputs:
            if all(source.display != seen.display for seen in entry.inputs):
                entry.inputs.append(source)
        entry.query_plans.append(query_plan)
        if line is not None and line not in entry.lines:
            entry.lines.append(line)
        if _LIFECYCLE_RANK[lifecycle] > _LIFECYCLE_RANK[entry.lifecycle]:
            entry.lifecycle = lifecycle

    for statement in (write for item in statements for write in _multi_insert_writes(item)):
        root = tree(statement["plan"])
        ctes: list = []
        # `WITH c AS (…) INSERT INTO t SELECT … FROM c`: the CTEs wrap the write.
        while root.cls in ("UnresolvedWith", "WithCTE") and root.children:
            ctes += root.fields.get("cteRelations") or []
            root = root.children[0]
        kind = root.cls

        def _inputs(query: Node | None, ctes=ctes) -> list[Source]:
            if query is None:
                return []
            if ctes:  # the CTE definitions are part of what the query reads
                query = Node("UnresolvedWith", {"class": "UnresolvedWith", "cteRelations": ctes}, [query])
            return _expand(session, relations(query))

        extra = statement.get("extra") or {}
        line = statement.get("line")
        analysis = statement.get("analysis") or {}
        if analysis.get("rejected"):
            # Every table it reads was declared, and Spark's analyzer still refuses it: the job
            # will fail the same way. The lineage is kept (fail-open); the reason is Spark's.
            result.warnings.append(f"statement at line {line}: Spark's analyzer rejects it: {analysis['rejected']}")
        if kind == "SetCatalogAndNamespace":
            parts = [
                p.lower()
                for p in name_parts((root.children[0].fields if root.children else {}).get("multipartIdentifier"))
            ]
            if len(parts) >= 2:
                session.catalog, session.database = parts[0], ".".join(parts[1:])
            elif parts and parts[0] in session.catalogs:  # USE ice: that catalog, its root namespace
                session.catalog, session.database = parts[0], ""
            elif parts:
                session.database = parts[0]
        elif kind == "SetNamespaceCommand":  # USE in older parsers
            parts = [p.lower() for p in name_parts(root.fields.get("namespace"))]
            if parts:
                session.database = parts[-1]
        elif kind in ("CreateTableAsSelect", "ReplaceTableAsSelect", "CreateTable", "ReplaceTable"):
            declared = _declare(session, root)
            if not declared.columns and analysis.get("schema"):  # CTAS: the analysed query's columns
                declared.columns = [{"name": c["name"], "type": type_name(c["type"])} for c in analysis["schema"]]
            query = root.child("query")
            if query is not None:  # CTAS creates its table, RTAS (and CREATE OR REPLACE … AS) overwrites it
                lifecycle: LifecycleChange | None = "CREATE" if kind.startswith("Create") else "OVERWRITE"
                write(declared, _inputs(query), analysis.get("query_plan"), lifecycle)
        elif kind == "InsertIntoStatement" or kind in V2_WRITES:
            table = root.embedded("table")
            parts = relations(table)[0] if table is not None and relations(table) else []
            query = root.child("query") or (root.children[0] if root.children else None)
            target = _resolve_target(session, parts, result.warnings, line)
            if kind == "InsertIntoStatement":
                lifecycle = "OVERWRITE" if root.fields.get("overwrite") is True else None
            else:  # REPLACE WHERE's condition reads nothing: Spark's analyzer allows no subquery there
                lifecycle = V2_WRITES[kind]
            if target is not None:
                write(target, _inputs(query), analysis.get("query_plan"), lifecycle)
        elif kind in ROW_LEVEL_WRITES:
            # DELETE FROM / UPDATE: the output is the table; a table with row-level operations
            # (Iceberg, Delta) is rewritten into ReplaceData / WriteDelta whose query scans it, so it
            # is an input too, as for MERGE; subqueries in the condition and assignments are read.
            target_tree = root.child("table") or (root.children[0] if root.children else None)
            target_parts = relations(target_tree)[0] if target_tree is not None and relations(target_tree) else []
            target = _resolve_target(session, target_parts, result.warnings, line)
            inputs = _inputs(Node(kind, {}, _embedded_trees(root, exclude=("table",))))
            if target is not None:
                write(target, ([target] if _merge_reads_target(session, target) else []) + inputs)
        elif kind == "InsertIntoDir" and not extra.get("location"):
            # Never a name made of a missing value (`hive.`None``): the write is said, not guessed.
            result.warnings.append(
                f"statement at line {line}: the directory INSERT OVERWRITE DIRECTORY writes could not be read "
                "from Spark's plan; its target and sources are not in the lineage"
            )
        elif kind == "InsertIntoDir":
            location = extra.get("location")
            directory = provider_name(extra.get("provider")) or "hive"
            target = Source(
                display=f"{directory}.`{location}`", kind="directory", provider=directory, location=location
            )
            if analysis.get("schema"):  # the directory's files have the analysed query's columns
                target.columns = [{"name": c["name"], "type": type_name(c["type"])} for c in analysis["schema"]]
            query = root.child("child") or (root.children[0] if root.children else None)
            lifecycle = "OVERWRITE" if root.fields.get("overwrite") is True else None
            write(target, _inputs(query), analysis.get("query_plan"), lifecycle)
        elif kind == "MergeIntoTable":
            target_tree = root.child("targetTable")
            source_tree = root.child("sourceTable")
            target_parts = relations(target_tree)[0] if target_tree is not None and relations(target_tree) else []
            target = _resolve_target(session, target_parts, result.warnings, line)
            inputs = _inputs(source_tree)
            # Subqueries in the merge condition or actions read tables too.
            inputs += _expand(session, relations(_embedded_trees(root, exclude=("targetTable", "sourceTable"))[0]))
            if target is not None:
                write(target, ([target] if _merge_reads_target(session, target) else []) + inputs)
        elif kind == "CreateTempViewUsing":
            name = str((root.fields.get("tableIdent") or {}).get("table", "")).lower()
            options = {str(k).lower(): str(v) for k, v in (extra.get("options") or {}).items()}
            provider = provider_name(root.fields.get("provider"))
            schema = root.fields.get("userSpecifiedSchema") or {}
            view = Source(
                display=name,
                kind="view",
                provider=provider,
                location=options.get("path"),
                options=options,
                columns=[{"name": f["name"], "type": type_name(f.get("type"))} for f in schema.get("fields", [])],
                declared=True,
            )
            (session.global_views if root.fields.get("global") else session.temp_views)[name] = [view]
        elif kind in ("CreateViewCommand", "CacheTableAsSelect", "CreateView", "CreateViewStatement"):
            _declare_view(session, root)
        elif kind in UNSUPPORTED_WRITES:
            result.warnings.append(
                f"statement at line {line} ({kind}) writes a table in a way this analysis does not pair; "
                "its target and sources are not in the lineage"
            )
    return result


def _subtree_sizes(flat: list[dict]) -> list[int]:
    """Per node of a flat pre-order list, how many entries its subtree takes."""
    sizes = [1] * len(flat)
    for index in range(len(flat) - 1, -1, -1):
        position = index + 1
        for _ in range(int(flat[index].get("num-children", 0))):
            sizes[index] += sizes[position]
            position += sizes[position]
    return sizes


def _multi_insert_writes(statement: dict) -> list[dict]:
    """A multi-insert (`FROM src INSERT INTO a SELECT … INSERT INTO b SELECT …`, optionally after
    WITH) as one statement per INSERT: Spark parses it into a Union of writes and runs each as its
    own command, so openlineage-spark reports each target with the sources of its own SELECT.
    Any other statement is itself."""
    flat = statement.get("plan") or []
    wrapper: list[dict] = []
    start = 0
    if flat and simple_name(flat[0].get("class", "")) in ("UnresolvedWith", "WithCTE"):
        if int(flat[0].get("num-children", 0)) != 1:
            return [statement]
        wrapper, start = [flat[0]], 1
    if start >= len(flat) or simple_name(flat[start].get("class", "")) != "Union":
        return [statement]
    sizes = _subtree_sizes(flat)
    children = []
    position = start + 1
    for _ in range(int(flat[start].get("num-children", 0))):
        children.append(flat[position : position + sizes[position]])
        position += sizes[position]
    if not children or any(simple_name(c[0].get("class", "")) not in MULTI_INSERT_WRITES for c in children):
        return [statement]  # a query's UNION, not a multi-insert
    extras = (statement.get("extra") or {}).get("writes") or []
    analyses = (statement.get("analysis") or {}).get("writes") or []
    return [
        {
            **statement,
            "plan": [*wrapper, *child],
            "extra": extras[index] if index < len(extras) else {},
            "analysis": analyses[index] if index < len(analyses) else {},
        }
        for index, child in enumerate(children)
    ]


def _embedded_trees(root: Node, exclude: tuple[str, ...]) -> list[Node]:
    """The node's fields other than `exclude` as one tree to search for the tables they read
    (the subqueries of a condition or an assignment)."""
    return [Node("fields", {k: v for k, v in root.fields.items() if k not in exclude})]


def _merge_reads_target(session: _Session, target: Source) -> bool:
    """Whether openlineage-spark lists a MERGE's target among its inputs too: Delta's
    MergeIntoCommand (its MergeIntoCommandInputDatasetBuilder delegates the target, then the
    source) and Iceberg's rewrite of MergeIntoTable into a write whose query scans the target (a
    DataSourceV2Relation its input builders visit). A target whose format is not known here
    (an undeclared session-catalog table) is not guessed."""
    provider = (target.provider or "").lower()
    return provider in ("delta", "iceberg") or (target.catalog is not None and target.catalog in session.catalogs)


def _declare(session: _Session, root: Node) -> Source:
    name_node = root.child("name") or root.embedded("name")
    parts = [p.lower() for p in name_parts((name_node.fields if name_node else {}).get("nameParts"))]
    spec = table_spec(root)
    source = _catalog_table(session, parts)
    source.provider = provider_name(spec["provider"]) or "hive"  # no USING: a Hive table
    options = {str(k).lower(): v for k, v in spec["options"].items()}
    source.location = spec["location"] or options.get("path")
    source.options = options
    source.columns = spec["columns"]
    source.declared = True
    session.tables[source.display] = source
    return source


def _declare_view(session: _Session, root: Node) -> None:
    kind = root.cls
    query = root.child("plan") or root.child("query") or root.child("child")
    if kind == "CreateView":  # persistent: CREATE VIEW db.v AS …
        name_node = root.child("child")
        query = root.child("query")
        parts = [p.lower() for p in name_parts((name_node.fields if name_node else {}).get("nameParts"))]
        qualified = _catalog_table(session, parts).display
        session.views[qualified] = _query_inputs(session, query) if query is not None else []
        return
    if kind == "CacheTableAsSelect":
        name = str(root.fields.get("tempViewName", "")).lower()
        session.temp_views[name] = _query_inputs(session, query) if query is not None else []
        return
    identifier = root.fields.get("name") or {}
    name = str(identifier.get("table", "")).lower()
    view_type = str((root.fields.get("viewType") or {}).get("object", ""))
    expanded = _query_inputs(session, query) if query is not None else []
    if "GlobalTempView" in view_type:
        session.global_views[name] = expanded
    elif "LocalTempView" in view_type:
        session.temp_views[name] = expanded
    else:
        session.views[_catalog_table(session, [name]).display] = expanded


def _query_inputs(session: _Session, query: Node) -> list[Source]:
    return _expand(session, relations(query))


def _expand(session: _Session, found: list[list[str]]) -> list[Source]:
    result: list[Source] = []
    for parts in found:
        for source in _resolve(session, parts):
            if all(source.display != seen.display for seen in result):
                result.append(source)
    return result


def _resolve(session: _Session, parts: list[str]) -> list[Source]:
    """A table reference to the sources it stands for (a view: the sources under it)."""
    lowered = [p.lower() for p in parts]
    if len(lowered) == 1 and lowered[0] in session.temp_views:
        return session.temp_views[lowered[0]]
    if len(lowered) == 2 and lowered[0] == "global_temp" and lowered[1] in session.global_views:
        return session.global_views[lowered[1]]
    path = _path_source(parts)
    if path is not None:
        return [path]
    table = _catalog_table(session, lowered)
    if table.display in session.views:
        return session.views[table.display]
    return [session.tables.get(table.display, table)]


def _resolve_target(session: _Session, parts: list[str], warnings: list[str], line) -> Source | None:
    if not parts:
        warnings.append(f"statement at line {line}: its target table could not be read from the plan")
        return None
    lowered = [p.lower() for p in parts]
    if len(lowered) == 1 and lowered[0] in session.temp_views:
        views = session.temp_views[lowered[0]]
        if len(views) == 1 and views[0].kind == "view":  # INSERT INTO a view declared USING a source
            return views[0]
    path = _path_source(parts)
    if path is not None:
        return path
    table = _catalog_table(session, lowered)
    return session.tables.get(table.display, table)


def _path_source(parts: list[str]) -> Source | None:
    """parquet.`s3a://bucket/key`: Spark's SQL on files. The path is everything after the format."""
    if len(parts) >= 2 and parts[0].lower() in PATH_FORMATS:
        location = ", ".join(parts[1:])
        if "/" in location:
            provider = parts[0].lower()
            return Source(display=f"{provider}.`{location}`", kind="path", provider=provider, location=location)
    return None


def _catalog_table(session: _Session, parts: list[str]) -> Source:
    """The fully qualified name Spark's resolution gives a table name: a first part naming a
    registered catalog is that catalog (as in CatalogAndIdentifier), else the current one."""
    if len(parts) >= 2 and (parts[0] in session.catalogs or parts[0] == SESSION_CATALOG):
        catalog, database, name = parts[0], ".".join(parts[1:-1]), parts[-1]
    elif len(parts) == 1:
        catalog, database, name = session.catalog, session.database, parts[0]
    elif len(parts) == 2:
        catalog, database, name = session.catalog, parts[0], parts[1]
    else:
        catalog, database, name = parts[0], ".".join(parts[1:-1]), parts[-1]
    display = ".".join(part for part in (catalog, database, name) if part)
    return Source(display=display, kind="table", catalog=catalog, database=database or None, name=name)
