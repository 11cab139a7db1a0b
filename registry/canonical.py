"""The canonical address of a dataset some producer already named: what the built-in rules
(naming.md, ported from openlineage-java) would name the same physical table.

Other producers do not always spell an address the way openlineage-java does: openlineage-dbt
writes a profile's `host` and `port` as they are typed (`postgres://Warehouse.Prod:5432`), an
Airflow connection may say `postgresql`, a hand-written emitter may keep `s3a://` or a trailing
`/`. To compare such a spelling with ours, the address is run back through the very rules that
produce ours: a JDBC-style namespace through `jdbc.jdbc_identity` (scheme aliases, host case,
default ports), a storage location through `filesystem.filesystem_identity` (s3a/s3n, abfs, wasb,
trailing and leading `/`). There is no second copy of those rules here.

Two equivalences go beyond what any producer emits, because they concern how a database resolves
a name rather than how a URL is spelled. They are kept apart (`equivalent_name`) so that a caller
can say which one joined two names:

- `DEFAULT_SCHEMAS`: a two-part name `db.table` on a database with a default schema resolves to
  `db.<default>.table` (postgres and redshift `public`, SQL Server `dbo`). openlineage-java and
  our jdbc rule never add it, so a Flink `table-name = 'orders'` and a Spark read of
  `public.orders` are two nodes for one table.
- `CASE_INSENSITIVE_SCHEMES`: databases whose unquoted identifiers are case-insensitive, so
  `SALES.Orders` and `sales.orders` are one table there (never for Kafka topics, paths or MySQL
  on Linux, where case names a different object).
"""

from __future__ import annotations

from .filesystem import LocationError, filesystem_identity
from .jdbc import JdbcUnsupported, jdbc_identity

#: Namespace schemes that hold a JDBC location (`scheme://host:port`), as the jdbc rule names them,
#: plus the spellings other producers use for the same databases.
JDBC_SCHEMES = frozenset(
    {
        "postgres",
        "postgresql",
        "mysql",
        "mariadb",
        "oracle",
        "sqlserver",
        "mssql",
        "db2",
        "clickhouse",
        "trino",
        "crate",
        "teradata",
        "oceanbase",
        "cassandra",
        "redshift",
    }
)

#: Scheme spellings of other producers -> the scheme openlineage-java writes for that database.
#: (`postgresql` and the `mysql:*` variants are already handled by the jdbc rule itself.)
SCHEME_ALIASES = {"mssql": "sqlserver", "mariadb": "mysql"}

#: Namespace schemes of storage locations (filesystem rule).
LOCATION_SCHEMES = frozenset({"s3", "s3a", "s3n", "gs", "abfs", "abfss", "wasb", "wasbs", "hdfs", "file", "dbfs"})

DEFAULT_SCHEMAS = {"postgres": "public", "redshift": "public", "sqlserver": "dbo"}

CASE_INSENSITIVE_SCHEMES = frozenset(
    {"postgres", "redshift", "oracle", "sqlserver", "db2", "snowflake", "trino", "hive"}
)
#: Of those, the databases that store an unquoted identifier upper-cased (the others lower-case it).
UPPER_CASE_SCHEMES = frozenset({"oracle", "db2", "snowflake"})


#: Namespaces that are no URL but still name a physical store.
PHYSICAL_WITHOUT_SCHEME = frozenset({"file", "bigquery"})


def is_logical(namespace: str) -> bool:
    """A namespace that names no store, only a catalog (Gravitino's profile: the metalake)."""
    return "://" not in namespace and ":" not in namespace and namespace not in PHYSICAL_WITHOUT_SCHEME


def scheme_of(namespace: str) -> str:
    """The scheme of a namespace (`postgres://h:5432` -> `postgres`, `file` -> `file`), lower-cased."""
    head = namespace.split("://", 1)[0] if "://" in namespace else namespace.split(":", 1)[0]
    return head.strip().lower()


def canonical_address(namespace: str, name: str) -> tuple[str, str]:
    """The (namespace, name) the built-in rules give the table another producer named so.

    An address no built-in rule covers (Kafka, BigQuery, a metalake...) is returned unchanged:
    its spelling is the only identity there is.
    """
    scheme = scheme_of(namespace)
    if scheme in JDBC_SCHEMES and "://" in namespace:
        rest = namespace.split("://", 1)[1]
        url = f"jdbc:{SCHEME_ALIASES.get(scheme, scheme)}://{rest}"
        try:
            return jdbc_identity(url, name)
        except (JdbcUnsupported, ValueError):
            return namespace, name
    if scheme in LOCATION_SCHEMES:
        if "://" in namespace:
            location = namespace.rstrip("/") + "/" + name.lstrip("/")
        elif name.startswith("/"):  # `file` with the path as the name
            location = f"{scheme}:///" + name.lstrip("/")
        else:
            # a relative path stays relative: `file://` + `orders` would read `orders` as a host and
            # name every such dataset `/`, one false split of unrelated tables
            location = name
        try:
            return filesystem_identity(location)
        except LocationError:
            return namespace, name
    return namespace, name


#: Schemes whose authority is a host name as written by each producer, compared case-insensitively
#: as DNS does (the jdbc rule already lower-cases JDBC hosts; object-store buckets are lower-case).
HOST_CASE_SCHEMES = frozenset({"kafka", "hdfs", "hive", "thrift", "webhdfs"})


def fold_host_case(namespace: str) -> str:
    """`kafka://Kafka-1.PROD:9092` -> `kafka://kafka-1.prod:9092`: one host, whatever its case."""
    if scheme_of(namespace) not in HOST_CASE_SCHEMES or "://" not in namespace:
        return namespace
    scheme, rest = namespace.split("://", 1)
    authority, slash, path = rest.partition("/")
    return f"{scheme}://{authority.lower()}{slash}{path}"


def with_default_schema(namespace: str, name: str) -> str:
    """`db.table` -> `db.<default schema>.table` where the database has a default schema."""
    default = DEFAULT_SCHEMAS.get(scheme_of(namespace))
    parts = name.split(".")
    if default is None or len(parts) != 2 or not all(parts):
        return name
    return f"{parts[0]}.{default}.{parts[1]}"


def folds_name_case(namespace: str) -> bool:
    return scheme_of(namespace) in CASE_INSENSITIVE_SCHEMES


def preferred_case(namespace: str, name: str) -> str:
    """The name in the case its database stores unquoted identifiers in (unchanged elsewhere)."""
    if not folds_name_case(namespace):
        return name
    return name.upper() if scheme_of(namespace) in UPPER_CASE_SCHEMES else name.lower()


def equivalent_name(namespace: str, name: str) -> str:
    """The name as the database resolves it: default schema added, case folded where it folds."""
    name = with_default_schema(namespace, name)
    return name.lower() if folds_name_case(namespace) else name
