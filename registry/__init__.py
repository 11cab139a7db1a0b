"""Dataset identity registry: a Flink table's connector options -> OpenLineage datasets whose
(namespace, name) are byte-identical to what openlineage-flink / openlineage-spark emit for the
same physical table (rules: docs/naming.md).

    from planlineage.registry import resolve, Resolution, IdentityConfig, load_config, ConfigError
    cfg = load_config(path_or_None, profile="openlineage", metalake=None, properties=None)
    res = resolve(options, table="catalog.db.table", connector=None, config=cfg)
    res.datasets  # list[planlineage.document.Dataset]
    res.warnings  # list[str], each "table <catalog.db.table>: <what>", secrets redacted

Modules: identity (resolve), builtin (the naming.md table), kafka, jdbc, cdc, filesystem (ported
rules), rules (user templates), resolvers (namespace resolvers), config (loading), secrets (the
one redaction module every output path uses), javauri (the Java parsing semantics the ports need).
"""

from .config import ConfigError, IdentityConfig, load_config
from .identity import Resolution, resolve

__all__ = ["resolve", "Resolution", "IdentityConfig", "load_config", "ConfigError"]
