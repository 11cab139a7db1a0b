"""planlineage: OpenLineage for Flink SQL and Spark jobs submitted through a platform."""

__version__ = "0.1.0"
