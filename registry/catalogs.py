"""Identity of tables that live in a catalog (Paimon, Iceberg, Hive, JDBC, Hudi), not in a connector.

Such a table has no connector options of its own: what names it is the catalog's type and
properties plus the table's database and name. The planner's stand-in catalog copies them onto
each of its tables (`planlineage.catalog-type`, `planlineage.catalog.<property>`); Iceberg's
`connector = 'iceberg'` tables carry the same facts as their own options.

Rules, following what openlineage-flink and openlineage-spark emit for the same tables:

- **Iceberg, Paimon, Hudi**: the table's location, named like any file location
  (`FilesystemDatasetUtils.fromLocation`, which openlineage-flink's Iceberg visitors apply to
  `table.location()`): scheme + authority / path. The location is the catalog's default one
  under its warehouse, which is where the catalog puts a table it creates: Iceberg's Hive catalog
  `{warehouse}/{db}.db/{table}` (Hive's database directory), Iceberg's Hadoop catalog
  `{warehouse}/{db}/{table}`, Paimon `{warehouse}/{db}.db/{table}`, Hudi's DFS catalog
  `{catalog.path}/{db}/{table}`. A catalog that keeps locations elsewhere (Iceberg REST, Glue,
  JDBC, Nessie) gives no guessed location: a WARN says why.
- **Hive-metastore backed** (Hive catalog, Iceberg's Hive catalog, Paimon with
  `metastore = 'hive'`): a `TABLE` symlink `hive://{host}:{port}` / `{db}.{table}`, as
  openlineage-spark's IcebergHandler and Hive tables name them; for the Hive catalog itself that
  is the dataset. The metastore address comes from `uri` / `hive.metastore.uris`, or from
  `hive-site.xml` in `hive-conf-dir` when it is readable here.
- **JDBC catalog**: the jdbc rule of the registry on `base-url` + database and the table name.
- anything else: no dataset, a WARN naming the catalog type (never a guess).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from .filesystem import filesystem_identity
from .javauri import parse_java_uri
from .jdbc import JdbcUnsupported, jdbc_identity
from .rule_result import RuleResult

CATALOG_TYPE = "planlineage.catalog-type"
CATALOG_PROPERTY = "planlineage.catalog."


def is_catalog_table(options: Mapping[str, str]) -> bool:
    return CATALOG_TYPE in options or options.get("connector") == "iceberg"


def rule(options: Mapping[str, str], table: str) -> RuleResult:
    """The physical datasets (with the catalog's TABLE symlinks) and warnings of a catalog table."""
    outcome, symlinks = _rule(options, table)
    outcome.symlinks = symlinks
    return outcome


def _rule(options: Mapping[str, str], table: str) -> tuple[RuleResult, list[tuple[str, str]]]:
    if options.get("connector") == "iceberg" and CATALOG_TYPE not in options:
        catalog_type, props = "iceberg", dict(options)
        database = options.get("catalog-database") or _part(table, 1)
        name = options.get("catalog-table") or _part(table, 2)
    else:
        catalog_type = options.get(CATALOG_TYPE, "")
        props = {k[len(CATALOG_PROPERTY) :]: v for k, v in options.items() if k.startswith(CATALOG_PROPERTY)}
        database, name = _part(table, 1), _part(table, 2)
    if not database or not name:
        return RuleResult(warnings=[f"catalog type '{catalog_type}' needs the table's database and name"]), []
    handler = _RULES.get(catalog_type.lower())
    if handler is None:
        return RuleResult(
            warnings=[f"no identity rule for catalog type '{catalog_type}'; only the Flink table is known"]
        ), []
    return handler(props, database, name)


def _part(table: str, index: int) -> str:
    parts = table.split(".")
    return parts[index] if len(parts) == 3 else ""


def _location(base: str, *parts: str) -> tuple[str, str]:
    return filesystem_identity(base.rstrip("/") + "/" + "/".join(parts))


def _iceberg(props: Mapping[str, str], database: str, name: str):
    kind = (props.get("catalog-type") or ("" if props.get("catalog-impl") else "hive")).lower()
    warehouse = props.get("warehouse", "")
    symlinks = []
    if kind == "hive":
        metastore = _metastore(props)
        if metastore:
            symlinks.append((metastore, f"{database}.{name}"))
        if not warehouse:
            return RuleResult(
                warnings=["iceberg hive catalog without 'warehouse': the table's location is kept by the metastore"]
            ), symlinks
        return RuleResult(datasets=[_location(warehouse, f"{database}.db", name)]), symlinks
    if kind == "hadoop" and warehouse:
        return RuleResult(datasets=[_location(warehouse, database, name)]), symlinks
    return RuleResult(
        warnings=[f"iceberg catalog-type '{kind or props.get('catalog-impl')}' keeps table locations in the catalog"]
    ), symlinks


def _paimon(props: Mapping[str, str], database: str, name: str):
    symlinks = []
    if props.get("metastore", "").lower() == "hive":
        metastore = _metastore(props)
        if metastore:
            symlinks.append((metastore, f"{database}.{name}"))
    warehouse = props.get("warehouse", "")
    if not warehouse:
        return RuleResult(warnings=["paimon catalog without 'warehouse'"]), symlinks
    return RuleResult(datasets=[_location(warehouse, f"{database}.db", name)]), symlinks


def _hudi(props: Mapping[str, str], database: str, name: str):
    path = props.get("catalog.path", "")
    if props.get("mode", "dfs").lower() != "dfs" or not path:
        return RuleResult(warnings=["hudi catalog: only the 'dfs' mode with 'catalog.path' names a location"]), []
    return RuleResult(datasets=[_location(path, database, name)]), []


def _hive(props: Mapping[str, str], database: str, name: str):
    metastore = _metastore(props)
    if not metastore:
        return RuleResult(
            warnings=["hive catalog: no metastore address ('hive.metastore.uris' in a readable hive-conf-dir)"]
        ), []
    return RuleResult(datasets=[(metastore, f"{database}.{name}")]), []


def _jdbc(props: Mapping[str, str], database: str, name: str):
    base = props.get("base-url", "")
    if not base:
        return RuleResult(warnings=["jdbc catalog without 'base-url'"]), []
    try:
        return RuleResult(datasets=[jdbc_identity(base.rstrip("/") + "/" + database, name)]), []
    except JdbcUnsupported as exc:
        return RuleResult(warnings=[f"jdbc catalog base-url cannot be named offline: {exc}"]), []


def _metastore(props: Mapping[str, str]) -> str | None:
    """`hive://host:port` of the first metastore URI (options, else hive-site.xml)."""
    uris = props.get("uri") or props.get("hive.metastore.uris") or _hive_site_uris(props.get("hive-conf-dir"))
    if not uris:
        return None
    first = uris.split(",")[0].strip()
    try:
        uri = parse_java_uri(first)
    except ValueError:
        return None
    if not uri.host:
        return None
    return f"hive://{uri.host}" + (f":{uri.port}" if uri.port and uri.port > 0 else "")


def _hive_site_uris(conf_dir: str | None) -> str | None:
    if not conf_dir:
        return None
    import xml.etree.ElementTree as ElementTree  # only Hive catalogs with a conf dir read XML

    site = Path(conf_dir) / "hive-site.xml"
    try:
        root = ElementTree.parse(site).getroot()
    except (OSError, ElementTree.ParseError):
        return None
    for prop in root.iter("property"):
        if (prop.findtext("name") or "").strip() == "hive.metastore.uris":
            return (prop.findtext("value") or "").strip() or None
    return None


_RULES = {"iceberg": _iceberg, "paimon": _paimon, "hudi": _hudi, "hive": _hive, "jdbc": _jdbc}
