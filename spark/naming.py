"""A Spark source or target -> the OpenLineage datasets openlineage-spark emits for it.

Ported from openlineage-spark (integration/spark/shared/.../agent/util/PathUtils, JdbcSparkUtils,
SparkConfUtils; spark3/.../catalog/DeltaHandler and IcebergHandler), which name data by where it
is, through openlineage-java's shared utilities that the registry already ports:

- files (a path, `LOCATION`, `OPTIONS (path …)`, parquet.`path`, Delta and Iceberg tables with a
  location): FilesystemDatasetUtils.fromLocation -> the registry's filesystem rule;
- JDBC (`url` + `dbtable`): JdbcDatasetUtils -> the registry's jdbc rule, so a Spark JDBC read and
  a Flink JDBC or CDC table of the same database table are one node. A `dbtable` that is a
  subquery, or a `query` option, needs an SQL parser openlineage-spark loads natively: WARN;
- a catalog table also gets a TABLE symlink named `database.table`: `hive://<metastore host:port>`
  when the session uses a Hive metastore (spark.sql.catalogImplementation=hive and
  spark.sql.hive.metastore.uris / hive.metastore.uris, the first URI), else the warehouse's
  namespace when the table lies under spark.sql.warehouse.dir;
- a managed table created in the script has the location `<warehouse>/<db>.db/<table>`
  (`<warehouse>/<table>` in `default`), known only when spark.sql.warehouse.dir is given.

A catalog table the script does not create has no location we could know without the metastore:
with a metastore configured it is named by its Hive identity (the TABLE symlink openlineage-spark
attaches to the same table) and a WARN says so; without one it has no dataset and a WARN. Never a
guessed location.
"""

from __future__ import annotations

from collections.abc import Mapping

from planlineage.document import Column, Dataset, Symlink, TableLineage
from planlineage.registry import IdentityConfig, resolve
from planlineage.registry.filesystem import LocationError, filesystem_identity
from planlineage.registry.javauri import JavaURISyntaxError, parse_java_uri
from planlineage.spark.trimmers import NameTrimming
from planlineage.spark.walk import FILE_PROVIDERS, SESSION_CATALOG, Source


def metastore_authority(conf: Mapping[str, str]) -> str | None:
    """SparkConfUtils.getMetastoreUri, only when the session's catalog is Hive's."""
    if conf.get("spark.sql.catalogImplementation", "").strip() != "hive":
        return None
    uris = conf.get("spark.sql.hive.metastore.uris") or conf.get("hive.metastore.uris")
    if not uris:
        return None
    try:
        return parse_java_uri(uris.split(",")[0]).authority
    except JavaURISyntaxError:
        return None


def warehouse(conf: Mapping[str, str]) -> str | None:
    return conf.get("spark.sql.warehouse.dir") or conf.get("hive.metastore.warehouse.dir") or None


def _registry_options(source: Source, warnings: list[str]) -> dict[str, str] | None:
    provider = (source.provider or "").lower()
    if provider == "jdbc":
        options = source.options
        table = options.get("dbtable")
        if options.get("query") or (table and (table.strip().startswith("(") or len(table.split()) > 1)):
            warnings.append(
                f"table {source.display}: a JDBC query or subquery ('query' / dbtable '(…)') names no table "
                "without parsing the database's SQL; no dataset"
            )
            return None
        return {"connector": "jdbc", "url": options.get("url", ""), "table-name": table or ""}
    if provider in FILE_PROVIDERS:
        if not source.location:
            return None  # handled by the caller: managed or undeclared tables
        return {"connector": "filesystem", "path": source.location}
    # Any other data source: its own options under its own name, so a user rule can name it.
    return {"connector": provider, **source.options}


ICEBERG_CATALOGS = ("org.apache.iceberg.spark.SparkCatalog",)


def hadoop_catalog_warehouse(catalog: str | None, conf: Mapping[str, str]) -> str | None:
    """The warehouse of an Iceberg catalog of type ``hadoop`` registered in the conf, else None.

    openlineage-spark's IcebergHandler picks the first matching catalog-type handler (S3 Tables,
    Nessie, Glue, Snowflake, REST, BigQuery, Hadoop, Hive); the Hadoop one matches ``type=hadoop``,
    and only there is a table's location fixed by its name: ``<warehouse>/<namespace…>/<table>``
    (BaseCatalogTypeHandler.defaultTableLocation; HadoopCatalog allows no other). The other types
    keep their tables' locations in their service: not known offline."""
    if not catalog or catalog == "spark_catalog":
        return None
    prefix = f"spark.sql.catalog.{catalog}"
    if conf.get(prefix, "").strip() not in ICEBERG_CATALOGS or conf.get(f"{prefix}.catalog-impl"):
        return None
    root = (conf.get(f"{prefix}.warehouse") or "").strip()
    if conf.get(f"{prefix}.type", "").strip().lower() != "hadoop" or not root or root.startswith("arn:"):
        return None  # an ARN warehouse is S3 Tables', whose handler goes first
    return root


def _identifier(source: Source) -> str:
    """Spark's Identifier.toString: the namespace and name, each quoted with backticks if needed."""
    parts = [*(source.database or "").split("."), str(source.name)]
    return ".".join(p if p.replace("_", "").isalnum() else f"`{p.replace('`', '``')}`" for p in parts if p)


def _managed_location(source: Source, conf: Mapping[str, str]) -> str | None:
    """PathUtils.reconstructDefaultLocation for the session catalog's managed tables; a Hadoop
    Iceberg catalog's default table location for its tables."""
    hadoop = hadoop_catalog_warehouse(source.catalog, conf)
    if hadoop is not None:
        inner = "/".join([*(source.database or "").split("."), str(source.name)]).strip("/")
        return f"{hadoop.rstrip('/')}/{inner}"
    root = warehouse(conf)
    if root is None or source.catalog != "spark_catalog":
        return None
    root = root.rstrip("/")
    if source.database in (None, "default"):
        return f"{root}/{source.name}"
    return f"{root}/{source.database}.db/{source.name}"


def _location_uri(location: str) -> tuple[str, str]:
    """FilesystemDatasetUtils.toLocation(fromLocation(x)): the normalised location, as (namespace, name)."""
    return filesystem_identity(location)


def _warehouse_namespace(root: str) -> str:
    """FilesystemDatasetUtils.fromLocationAndName(warehouse, …).namespace: the warehouse URI itself."""
    ns, path = _location_uri(root)
    if ns == "file":  # LocalFilesystemDatasetExtractor: `file:/path`, or `file` for the root
        path = path.rstrip("/")
        return f"file:{path}" if path else "file"
    return ns if path == "/" else f"{ns}/{path.strip('/')}"


def _table_symlink(source: Source, location: str | None, conf: Mapping[str, str]) -> Symlink | None:
    """The TABLE symlink openlineage-spark attaches to a catalog table's location dataset
    (PathUtils.fromTableIdentifier): the Hive metastore's name, else the warehouse's when the
    table lies under it, else none."""
    if source.kind != "table":
        return None
    hadoop = hadoop_catalog_warehouse(source.catalog, conf)
    if hadoop is not None:  # HadoopCatalogTypeHandler: fromLocationAndName(warehouse, identifier)
        try:
            return Symlink(namespace=_warehouse_namespace(hadoop), name=_identifier(source), type="TABLE")
        except LocationError:
            return None
    name = f"{source.database}.{source.name}" if source.database else str(source.name)
    authority = metastore_authority(conf)
    if authority is not None:
        return Symlink(namespace=f"hive://{authority}", name=name, type="TABLE")
    root = warehouse(conf)
    if root and location:
        try:
            root_ns, root_path = _location_uri(root)
            ns, path = _location_uri(location)
        except LocationError:
            return None
        base = root_path.strip("/")
        inner = path.strip("/")
        # java.net.URI.relativize: same scheme and authority, and the path below the base's.
        if ns == root_ns and (not base or inner == base or inner.startswith(base + "/")):
            return Symlink(namespace=_warehouse_namespace(root), name=name, type="TABLE")
    return None


def table_lineage(
    source: Source, conf: Mapping[str, str], identity: IdentityConfig | None, warnings: list[str]
) -> TableLineage:
    columns = [Column(name=c["name"], type=c["type"]) for c in source.columns]
    if source.kind == "table" and source.declared and _iceberg_catalog(source.catalog, conf):
        # CREATE TABLE lake.db.t AS … without USING: an Iceberg SparkCatalog makes Iceberg tables,
        # never the session catalog's default Hive format.
        source = Source(**{**source.__dict__, "provider": "iceberg"})
    connector = source.provider if source.kind != "table" or source.declared else None
    location = source.location
    if (
        source.kind == "table"
        and source.declared
        and not location
        and source.catalog not in (None, SESSION_CATALOG)
        and hadoop_catalog_warehouse(source.catalog, conf) is None
    ):
        # Created in another catalog without a LOCATION: where it lies is that catalog's choice.
        found = _undeclared(source, conf, identity, warnings, created=True)
        return TableLineage(**{**found.model_dump(by_alias=True), "connector": connector, "schema": columns})
    if source.kind == "table" and source.declared and not location and (source.provider or "") in FILE_PROVIDERS:
        location = _managed_location(source, conf)
        if location is None:
            warnings.append(
                f"table {source.display}: a managed table's location is under spark.sql.warehouse.dir, which "
                "was not given (pass --spark-conf spark.sql.warehouse.dir=…); no dataset"
            )
            return TableLineage(table=source.display, connector=connector, schema=columns)
    if source.kind == "table" and not source.declared:
        hadoop_location = _managed_location(source, conf) if hadoop_catalog_warehouse(source.catalog, conf) else None
        if hadoop_location is None or (identity is not None and identity.profile == "gravitino"):
            return _undeclared(source, conf, identity, warnings)
        location = hadoop_location  # named by the Hadoop catalog's layout, as openlineage-spark does
        source = Source(**{**source.__dict__, "provider": "iceberg"})
        connector = "iceberg"
    resolved_source = Source(**{**source.__dict__, "location": location})
    options = _registry_options(resolved_source, warnings)
    if options is None:
        return TableLineage(table=source.display, connector=connector, schema=columns)
    resolution = resolve(options, table=source.display, config=identity)
    warnings.extend(resolution.warnings)
    datasets = resolution.datasets
    if identity is None or identity.profile != "gravitino":
        # openlineage-spark's symlink, or none where it gives none (a table outside the warehouse, a
        # path, a view): the registry's usual TABLE symlink names the Spark table as
        # `spark_catalog.default.t` in the bare location scheme, the same string for every
        # session's `t`, which a backend that joins datasets by symlink would take for one table.
        link = _table_symlink(source, location, conf)
        datasets = [Dataset(namespace=d.namespace, name=d.name, symlinks=[link] if link else []) for d in datasets]
    return TableLineage(table=source.display, connector=connector, datasets=datasets, schema=columns)


def trimmed(lineage: TableLineage, trimming: NameTrimming) -> TableLineage:
    """The table's datasets named as openlineage-spark's DatasetReducer names them: a partition or
    date folder at the end of the name cut off (the name only: namespace and symlinks stay)."""
    datasets = [d.model_copy(update={"name": trimming.trim(d.name)}) for d in lineage.datasets]
    if all(new.name == old.name for new, old in zip(datasets, lineage.datasets)):
        return lineage
    return lineage.model_copy(update={"datasets": datasets})


def _iceberg_catalog(catalog: str | None, conf: Mapping[str, str]) -> bool:
    return bool(catalog) and conf.get(f"spark.sql.catalog.{catalog}", "").strip() in ICEBERG_CATALOGS


def _undeclared(
    source: Source, conf: Mapping[str, str], identity: IdentityConfig | None, warnings: list[str], created=False
) -> TableLineage:
    authority = metastore_authority(conf) if source.catalog == "spark_catalog" else None
    if identity is not None and identity.profile == "gravitino":
        # The logical identity needs no location: metalake / catalog.schema.table.
        resolution = resolve({"connector": "spark-catalog"}, table=source.display, config=identity)
        return TableLineage(table=source.display, datasets=resolution.datasets)
    if authority is not None:
        name = f"{source.database}.{source.name}"
        warnings.append(
            f"table {source.display}: not created in the script, so its location is unknown; named by its Hive "
            f"metastore identity hive://{authority} {name} (openlineage-spark's TABLE symlink for it)"
        )
        link = Symlink(namespace=f"hive://{authority}", name=name, type="TABLE")
        return TableLineage(
            table=source.display, datasets=[Dataset(namespace=link.namespace, name=name, symlinks=[link])]
        )
    if source.catalog != "spark_catalog":
        how = "created in the script without a LOCATION" if created else "not created in the script"
        warnings.append(
            f"table {source.display}: a table of catalog '{source.catalog}' {how}; its "
            "location is known only to that catalog; no dataset"
        )
        return TableLineage(table=source.display)
    warnings.append(
        f"table {source.display}: not created in the script and no Hive metastore configured "
        "(spark.sql.catalogImplementation=hive, spark.sql.hive.metastore.uris), so its physical identity "
        "cannot be known; no dataset"
    )
    return TableLineage(table=source.display)
