"""Which StreamPark Spark applications the watcher reports, and what their compile is given.

A Spark SQL app (``t_spark_app.job_type`` 2) is reported like a Flink SQL app: its effective
``t_spark_sql`` text is compiled by Spark's own parser of the app's Spark version
(:mod:`planlineage.spark`) and its runs get START/RUNNING/COMPLETE/FAIL/ABORT with those datasets.

Lineage that comes from the OpenLineage Spark listener running inside the application is never
reported a second time.  That is every Spark JAR or PySpark app (planlineage cannot read their code;
``planlineage spark-conf`` adds the listener to their properties), and every app whose Spark conf
registers the listener (``spark.extraListeners``) or configures it (``spark.openlineage.*``), in the
app's own properties or in the environment's ``spark-defaults.conf`` that every submit of that
Spark home reads.

The Spark conf is read as StreamPark submits it: ``t_spark_app.app_properties`` is parsed by
``SparkConfigurationUtils.extractProperties`` (``--conf k=v`` / ``-c k=v`` pieces), ported in
:func:`properties`; ``t_spark_env.spark_conf`` is the deflated ``conf/spark-defaults.conf`` of the
Spark home (``SparkEnv.doSetSparkConf``), read as Spark reads that file (:func:`defaults`).  Only
the keys that name tables reach the compile (:func:`naming_conf`): a conf also holds credentials.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LISTENER_CLASS = "io.openlineage.spark.agent.OpenLineageSparkListener"
LISTENER_PREFIX = "spark.openlineage."

# SparkConfigurationUtils: pieces split on `--conf` / `-c`, each `["']?key=value["']?` (no DOTALL:
# a piece spanning lines is not a property, as in the console).
_PIECES = re.compile(r"(?:\s)*(?:--conf|-c)(?:\s)+")
_PROPERTY = re.compile(r"[\"']?(.*?)=(.*?)[\"']?")
_MINOR = re.compile(r"^(\d+\.\d+)")

#: What :mod:`planlineage.spark` reads from a job's conf to name tables (its naming and catalogs).
NAMING_KEYS = frozenset(
    {
        "spark.sql.catalogImplementation",
        "spark.sql.hive.metastore.uris",
        "hive.metastore.uris",
        "spark.sql.warehouse.dir",
        "hive.metastore.warehouse.dir",
    }
)


def properties(text: str | None) -> dict[str, str]:
    """``t_spark_app.app_properties`` as the console passes it to spark-submit."""
    if not text:
        return {}
    found: dict[str, str] = {}
    for piece in _PIECES.split(text):
        if piece:
            match = _PROPERTY.fullmatch(piece)
            if match:
                found[match.group(1).strip()] = match.group(2).strip()
    return found


def defaults(text: str | None) -> dict[str, str]:
    """A ``spark-defaults.conf`` (java.util.Properties lines: ``key value``, ``key=value`` or
    ``key:value``; ``#``/``!`` comments; a trailing ``\\`` continues the line), values trimmed as
    Spark's ``Utils.getPropertiesFromFile`` does."""
    if not text:
        return {}
    found: dict[str, str] = {}
    logical = ""
    for raw in text.splitlines():
        line = raw.strip() if not logical else raw.lstrip()
        if not logical and (not line or line[0] in "#!"):
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            logical += line[:-1]
            continue
        logical += line
        key, value = re.match(r"([^\s=:]*)\s*[=:]?\s*(.*)", logical, re.S).groups()  # type: ignore[union-attr]
        if key:
            found[key] = value.strip()
        logical = ""
    return found


def listener_reason(app_properties: str | None, env_conf: dict[str, str]) -> str | None:
    """Why an app's lineage comes from the OpenLineage Spark listener (None: it does not)."""
    for where, conf in (("its properties", properties(app_properties)), ("the Spark env's defaults", env_conf)):
        listeners = [name.strip() for name in conf.get("spark.extraListeners", "").split(",")]
        if LISTENER_CLASS in listeners:
            return f"{where} register the OpenLineage Spark listener (spark.extraListeners)"
        configured = sorted(key for key in conf if key.startswith(LISTENER_PREFIX))
        if configured:
            return f"{where} configure the OpenLineage Spark listener ({configured[0]})"
    if app_properties and LISTENER_CLASS in app_properties:  # a form the console does not parse
        return "its properties name the OpenLineage Spark listener"
    return None


def naming_conf(env_conf: dict[str, str], app_properties: str | None) -> dict[str, str]:
    """The keys of the app's effective conf (env defaults, then its properties) that name tables."""
    merged = {**env_conf, **properties(app_properties)}
    return {key: value for key, value in merged.items() if key in NAMING_KEYS or _catalog_key(key)}


def _catalog_key(key: str) -> bool:
    """``spark.sql.catalog.<name>`` (its class) and the catalog keys that fix where its tables
    are (``type``, ``warehouse``, ``catalog-impl``); never a catalog's credentials or URIs."""
    if not key.startswith("spark.sql.catalog."):
        return False
    rest = key[len("spark.sql.catalog.") :].split(".")
    return len(rest) == 1 or (len(rest) == 2 and rest[1] in ("type", "warehouse", "catalog-impl"))


@dataclass(frozen=True)
class Env:
    """One ``t_spark_env`` row: the Spark version StreamPark parsed from ``spark-submit --version``."""

    version: str | None
    conf: dict[str, str]

    @property
    def minor(self) -> str | None:
        """The supported Spark line (``3.5``, ``4.0``) of this version; None when unsupported."""
        from planlineage.spark.versions import SUPPORTED

        match = _MINOR.match(self.version or "")
        return match.group(1) if match and match.group(1) in SUPPORTED else None


def supported_lines() -> str:
    from planlineage.spark.versions import SUPPORTED

    return ", ".join(SUPPORTED)
