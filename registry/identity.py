"""resolve(): one Flink table's options -> its OpenLineage datasets and warnings.

Order of work: pick the rule (user rule, else built-in, else warn) -> physical (namespace, name)
pairs -> credentials can never survive into them -> namespace resolvers -> shape by profile
(symlinks) -> every warning prefixed `table <identifier>: ` and redacted.

Profiles:

- `openlineage` (default): the physical datasets; each carries one TABLE symlink
  `{namespace: <its namespace>, name: <catalog.database.table>}` when the table lives in a
  persistent catalog (`catalog_kind`: a Hive metastore, a JDBC / Iceberg / Paimon catalog), like
  openlineage-flink's Kafka visitor. Not for a table of Flink's in-memory catalog
  (`default_catalog`, any `generic_in_memory` catalog) or a temporary table: such a name exists
  only inside the job (every session has its `default_catalog.default_database.t`), and a backend
  stores each symlink as a dataset of its own (Data.Rentgen did: issue #37).
- `gravitino`: one logical dataset `namespace = <metalake>`, `name = <catalog.database.table>`,
  as Gravitino's OpenLineage Spark plugin names datasets (apache/gravitino
  docs/lineage/gravitino-spark-lineage.md: "transforms the Gravitino metalake name into the
  dataset namespace", name `${catalog}.${schema}.${table}`; GravitinoUtils in OpenLineage PRs
  #4179/#4214 builds the same `DatasetIdentifier(catalog.schema.table, metalake)`). That code
  keeps no symlinks at all; naming.md asks us to keep the physical address, and we do so with
  symlink type `LOCATION`: the type openlineage-java's SymlinkType offers for a physical location
  and the one OpenLineage's Hive hook uses for exactly this shape (logical table as the dataset,
  storage location as a LOCATION symlink). A TABLE symlink to itself would add nothing, so there
  is none. The logical dataset is emitted even when no physical dataset could be resolved (the
  warning says why), except for connectors with no data at rest (datagen, print, blackhole).
  Namespace resolvers apply to the physical symlinks only: the metalake is a name, not a host.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from planlineage.document import Dataset, Symlink

from . import catalogs
from .builtin import BUILTIN_RULES
from .config import IdentityConfig
from .resolvers import resolve_namespace
from .rule_result import MissingOption, RuleResult
from .secrets import is_secret_key, redact_text, secret_values, strip_credentials

_DEFAULT = IdentityConfig()


@dataclass
class Resolution:
    datasets: list[Dataset] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _run_rule(options: Mapping[str, str], table: str, connector: str | None, config: IdentityConfig) -> RuleResult:
    if not connector:
        return RuleResult(warnings=["no 'connector' option, so no identity rule applies"])
    try:
        user_rule = config.rules.get(connector)
        if user_rule is not None:
            return user_rule(options, connector, table)
        if catalogs.is_catalog_table(options):
            return catalogs.rule(options, table)
        builtin = BUILTIN_RULES.get(connector)
        if builtin is None:
            return RuleResult(warnings=[f"no identity rule for connector '{connector}'"])
        return builtin(options, connector)
    except MissingOption as exc:
        return RuleResult(warnings=[str(exc)])


def _public_values(options: Mapping[str, str]) -> list[str]:
    """What the options say in the open: non-secret values with their embedded credentials removed."""
    return [strip_credentials(v) for k, v in options.items() if v and not is_secret_key(k)]


def _clean(
    namespace: str, name: str, secrets: list[str], public: list[str], warnings: list[str]
) -> tuple[str, str] | None:
    """No credential may be part of an identity, whatever a ported rule would have emitted.

    Credentials really embedded (URL user-info, password parameters) are stripped. A secret's
    value that still appears is a leak only if no public option explains it: a compose setup's
    `hostname`, `database-name` and `password` may all be `postgres`, and then the host is
    `postgres`, not the password.
    """
    clean_ns, clean_name = strip_credentials(namespace), strip_credentials(name)
    if (clean_ns, clean_name) != (namespace, name):
        warnings.append("credentials removed from the dataset identity")
    # Only secrets of 6+ characters: a short password ("kafka", "db1") would match by coincidence.
    leaked = [
        s
        for s in secrets
        if len(s) >= 6 and (s in clean_ns or s in clean_name) and not any(s in value for value in public)
    ]
    if leaked:
        warnings.append("the dataset identity would contain a secret option value; no dataset")
        return None
    return clean_ns, clean_name


#: Connectors whose datasets openlineage-flink names without the Flink table as a TABLE symlink.
NO_TABLE_SYMLINK = frozenset({"jdbc"})
#: The catalog kind of Flink's built-in catalog and of `CREATE CATALOG ... ('type' = 'generic_in_memory')`.
IN_MEMORY = "generic_in_memory"


#: Flink's built-in catalog: a GenericInMemoryCatalog in every session.
BUILTIN_CATALOG = "default_catalog"


def catalog_kind_of(options: Mapping[str, str], catalog_types: Mapping[str, str], table: str) -> str:
    """The kind of catalog ``table`` (``catalog.database.table``) lives in: the stand-in catalog's
    type its options carry, else the type the script gave the catalog (`CREATE CATALOG`), else
    Flink's in-memory one for `default_catalog`. A catalog neither says is defined outside the
    script (the platform's configuration, a catalog store) and kept for a real one: "unknown"."""
    catalog = table.split(".")[0] if table.count(".") == 2 else ""
    kind = options.get(catalogs.CATALOG_TYPE) or catalog_types.get(catalog, "")
    if not kind:
        kind = IN_MEMORY if catalog in ("", BUILTIN_CATALOG) else "unknown"
    return kind.strip().lower()


def resolve(
    options: Mapping[str, str],
    table: str = "",
    connector: str | None = None,
    config: IdentityConfig | None = None,
    catalog_kind: str | None = None,
) -> Resolution:
    """The datasets of one table; ``catalog_kind`` is the kind of catalog it lives in
    (:func:`catalog_kind_of`, which None applies to the options alone; ``generic_in_memory`` for
    a temporary table whatever its catalog), which decides whether its Flink name is a symlink
    (see the module docstring)."""
    config = config or _DEFAULT
    options = {str(k): ("" if v is None else str(v)) for k, v in (options or {}).items()}
    connector = connector if connector is not None else options.get("connector")
    table = table or ""
    catalog_kind = catalog_kind or catalog_kind_of(options, {}, table)

    outcome = _run_rule(options, table, connector, config)
    warnings = list(outcome.warnings)
    secrets = secret_values(options)
    public = _public_values(options)

    physical: list[tuple[str, str]] = []
    for namespace, name in outcome.datasets:
        cleaned = _clean(namespace, name, secrets, public, warnings)
        if cleaned is None:
            continue
        pair = (resolve_namespace(list(config.resolvers), cleaned[0]), cleaned[1])
        if pair not in physical:
            physical.append(pair)

    if config.profile == "gravitino":
        datasets: list[Dataset] = []
        if not outcome.by_design_none:
            if table:
                links = [Symlink(namespace=ns, name=n, type="LOCATION") for ns, n in physical]
                datasets.append(Dataset(namespace=config.metalake or "", name=table, symlinks=links))
            else:
                warnings.append(
                    "the gravitino profile names a dataset by its table identifier, and none was given; no dataset"
                )
    else:
        # The Flink table as a TABLE symlink, as openlineage-flink's Kafka visitor attaches it, only
        # where that name identifies the table outside the job (a persistent catalog's); not where
        # its visitor for the connector attaches none (JDBC, measured by tests/conformance).
        table_symlink = (connector or "").lower() not in NO_TABLE_SYMLINK and catalog_kind.lower() != IN_MEMORY
        extra = [Symlink(namespace=ns, name=n, type="TABLE") for ns, n in outcome.symlinks]
        datasets = [
            Dataset(
                namespace=ns,
                name=n,
                symlinks=([Symlink(namespace=ns, name=table, type="TABLE")] if table and table_symlink else [])
                + [s for s in extra if (s.namespace, s.name) != (ns, n)],
            )
            for ns, n in physical
        ]

    label = table or "(unnamed)"
    return Resolution(datasets, [redact_text(f"table {label}: {w}", options) for w in warnings])
