"""Loading the identity configuration: profile, user rules and namespace resolvers.

File format (TOML); every section is optional, any other top-level key is an error (a typo in
an identity rule must fail loudly, not silently change dataset names):

    [connectors.<connector>]            # a user rule, see rules.py for the template syntax
    namespace = "doris://{fenodes}"
    name = "{table.identifier}"

    [dataset.namespaceResolvers.<name>] # as openlineage-java's openlineage.yml, see resolvers.py
    type = "hostList"
    hosts = ["k1.prod", "k2.prod"]
    schema = "kafka"

Flat openlineage-java properties (`[spark.]openlineage.dataset.namespaceResolvers.<name>.type`
= hostList, `.hosts` = [a;b], `.schema`) may be passed as `properties` and are merged after the
file, so a deployment can hand us the same settings its Spark and Flink listeners get.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

from planlineage.errors import ConfigError

from .resolvers import NamespaceResolver, ResolverConfigError, build_resolver, specs_from_properties
from .rules import Template, TemplateError, UserRule

PROFILES = ("openlineage", "gravitino")


@dataclass(frozen=True)
class IdentityConfig:
    profile: str = "openlineage"
    metalake: str | None = None
    rules: Mapping[str, UserRule] = field(default_factory=dict)
    resolvers: tuple[NamespaceResolver, ...] = ()
    source: str | None = None
    # [tables."catalog.db.table"] columns = {name = "TYPE", ...}: the schema of a table of a catalog
    # the analyser stands in, where the script's usage cannot say it.
    schemas: Mapping[str, Mapping[str, str]] = field(default_factory=dict)


def load_config(
    path: str | PathLike[str] | None = None,
    profile: str = "openlineage",
    metalake: str | None = None,
    properties: Mapping[str, str] | None = None,
) -> IdentityConfig:
    if profile not in PROFILES:
        raise ConfigError(f"unknown identity profile '{profile}' (known: {', '.join(PROFILES)})")
    if profile == "gravitino" and not (metalake and metalake.strip()):
        raise ConfigError("the gravitino identity profile needs a metalake name (dataset namespace)")

    where = str(path) if path is not None else "<properties>"
    data: dict[str, Any] = {}
    if path is not None:
        try:
            with Path(path).open("rb") as fh:
                data = tomllib.load(fh)
        except FileNotFoundError:
            raise ConfigError(f"{where}: identity configuration file not found") from None
        except OSError as exc:
            raise ConfigError(f"{where}: cannot read identity configuration: {exc.strerror or exc}") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{where}: not valid TOML: {exc}") from None

    unknown = sorted(set(data) - {"connectors", "dataset", "tables"})
    if unknown:
        raise ConfigError(
            f"{where}: unknown top-level key(s) {', '.join(unknown)} "
            "(expected [connectors.*], [dataset.namespaceResolvers.*], [tables.*])"
        )
    schemas = _load_schemas(data.get("tables", {}), where)

    rules = _load_rules(data.get("connectors", {}), where)
    specs = _file_resolver_specs(data.get("dataset", {}), where)
    try:
        specs.update(specs_from_properties(properties or {}))
        resolvers = tuple(build_resolver(name, spec) for name, spec in specs.items())
    except ResolverConfigError as exc:
        raise ConfigError(f"{where}: dataset.namespaceResolvers: {exc}") from None
    return IdentityConfig(
        profile, metalake.strip() if metalake else None, rules, resolvers, str(path) if path else None, schemas
    )


def _load_schemas(tables: Any, where: str) -> dict[str, dict[str, str]]:
    """[tables."catalog.db.table"] columns = {name = "SQL type", ...}, in the order written."""
    if not isinstance(tables, dict):
        raise ConfigError(f"{where}: 'tables' must be a table of [tables.\"catalog.db.table\"] entries")
    schemas: dict[str, dict[str, str]] = {}
    for table, spec in tables.items():
        columns = spec.get("columns") if isinstance(spec, dict) else None
        if len(table.split(".")) != 3 or not isinstance(columns, dict) or not columns:
            raise ConfigError(
                f'{where}: [tables."{table}"] needs a catalog.database.table name and columns = {{name = "TYPE", ...}}'
            )
        if not all(isinstance(t, str) and t.strip() for t in columns.values()):
            raise ConfigError(f'{where}: [tables."{table}"] column types must be SQL type strings')
        schemas[table] = {str(name): str(kind) for name, kind in columns.items()}
    return schemas


def _load_rules(connectors: Any, where: str) -> dict[str, UserRule]:
    if not isinstance(connectors, dict):
        raise ConfigError(f"{where}: 'connectors' must be a table of [connectors.<connector>] rules")
    rules: dict[str, UserRule] = {}
    for connector, spec in connectors.items():
        label = f"{where}: [connectors.{connector}]"
        if not isinstance(spec, dict):
            raise ConfigError(f"{label} must be a table with 'namespace' and 'name'")
        unknown = sorted(set(spec) - {"namespace", "name"})
        if unknown:
            raise ConfigError(f"{label}: unknown key(s) {', '.join(unknown)} (expected namespace, name)")
        templates = {}
        for key in ("namespace", "name"):
            if key not in spec:
                raise ConfigError(f"{label}: missing '{key}' template")
            if not isinstance(spec[key], str) or not spec[key]:
                raise ConfigError(f"{label}: '{key}' must be a non-empty string template")
            try:
                templates[key] = Template.parse(spec[key])
            except TemplateError as exc:
                raise ConfigError(f"{label}: {key} template '{spec[key]}': {exc}") from None
        rules[connector] = UserRule(connector, templates["namespace"], templates["name"], where)
    return rules


def _file_resolver_specs(dataset: Any, where: str) -> dict[str, dict[str, Any]]:
    if not isinstance(dataset, dict):
        raise ConfigError(f"{where}: 'dataset' must be a table")
    unknown = sorted(set(dataset) - {"namespaceResolvers"})
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) dataset.{', dataset.'.join(unknown)} (expected dataset.namespaceResolvers)"
        )
    resolvers = dataset.get("namespaceResolvers", {})
    if not isinstance(resolvers, dict):
        raise ConfigError(f"{where}: dataset.namespaceResolvers must be a table of resolvers")
    return {name: dict(spec) if isinstance(spec, dict) else spec for name, spec in resolvers.items()}
