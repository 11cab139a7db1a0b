"""The Spark versions planlineage supports.

3.5 is the line most platforms run today (StreamPark's Spark support and openlineage-spark's
widest test matrix are on 3.x; 3.5 is its last, long-supported line). 4.0 is the first 4.x line,
the one openlineage-spark builds its Spark 4 support against; its parser and analyzer differ
from 3.5's in the plan nodes (e.g. `UnresolvedIdentifier` targets, `CreateTable` with a query
for CTAS), which is why both are exercised. Each is pinned to its latest patch release, with the
py4j that PySpark release requires (PySpark installs with --no-deps, like Flink's wheels).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SparkVersion:
    minor: str  # "3.5": what users type
    version: str  # "3.5.9": what is installed
    requirements: tuple[str, ...]


SUPPORTED: dict[str, SparkVersion] = {
    "3.5": SparkVersion("3.5", "3.5.9", ("pyspark==3.5.9", "py4j==0.10.9.7")),
    "4.0": SparkVersion("4.0", "4.0.5", ("pyspark==4.0.5", "py4j==0.10.9.9")),
}
DEFAULT_MINOR = "3.5"
