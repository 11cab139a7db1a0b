"""Per-version Spark virtualenvs, built the way Flink's are (planner/provision.py).

Each supported Spark version gets its own virtualenv holding PySpark (Spark's jars) and py4j,
nothing else, every file verified by the sha256 its version file lists (PySpark, a source
distribution, is built with the version file's verified setuptools): the child
(`child/analyze_server.py`) runs there with the standard library and PySpark only. Provisioning
happens on first use with progress on stderr, under a file lock (a second process waiting for the
lock finds the first one's work), and a venv whose recorded fingerprint no longer matches is
rebuilt.

Where: `$PLANLINEAGE_SPARK_CACHE`, else `<user cache dir>/planlineage/spark`, the sibling of
Flink's default `…/planlineage/flink`. A separate variable rather than one derived from
`PLANLINEAGE_FLINK_CACHE`: a shared read-only Flink cache must not decide where Spark writes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from planlineage.errors import ProvisionError
from planlineage.spark.versions import DEFAULT_MINOR
from planlineage.spark_versions import SparkVersion, supported
from planlineage.version_venvs import MARKER, InVenv, VenvCache, fingerprint

__all__ = ["MARKER", "ProvisionedSpark", "cache_root", "ensure", "list_installed"]

CACHE_ENV = "PLANLINEAGE_SPARK_CACHE"
#: Bumped when what provisioning produces changes.
LAYOUT = 1
CACHE = VenvCache(engine="Spark", command="spark", cache_env=CACHE_ENV, cache_dir="spark")


@dataclass(frozen=True)
class ProvisionedSpark(InVenv):
    """A ready Spark version: where its python and its JVM's log are."""

    spark: SparkVersion
    home: Path


def cache_root() -> Path:
    return CACHE.root()


def resolve_version(requested: str | None) -> SparkVersion:
    """`3.5` or `3.5.9` (or None for the default) to a supported version."""
    return CACHE.resolve(supported(), requested, DEFAULT_MINOR)


def _fingerprint(spark: SparkVersion) -> str:
    return fingerprint(LAYOUT, spark.version, [*spark.requirements, *spark.build_requirements])


def list_installed() -> dict[str, dict]:
    """What the cache holds, per minor version: ready or not, and where."""
    return CACHE.listing(supported(), _fingerprint)


def ensure(
    requested: str | None, *, force: bool = False, progress: Callable[[str], None] | None = None
) -> ProvisionedSpark:
    """The provisioned Spark version, building its venv first if needed (or again, with `force`)."""
    spark = resolve_version(requested)

    def finish(home: Path, venv: Path, say: Callable[[str], None]) -> dict:
        if not list(venv.glob("lib/python*/site-packages/pyspark/jars/spark-catalyst_*.jar")):
            raise ProvisionError(
                f"Spark's jars are missing from {venv}; run `planlineage spark install {spark.minor}`."
            )
        return {}

    home = CACHE.ensure(
        spark.version,
        _fingerprint(spark),
        spark.requirements,
        finish,
        build_requirements=spark.build_requirements,
        first_use="a few minutes",
        download="~400 MB download, built once into the pip cache",
        force=force,
        progress=progress,
    )
    return ProvisionedSpark(spark, home)
