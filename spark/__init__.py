"""Spark SQL lineage: Spark's own parser, per Spark version, in an isolated virtualenv.

from planlineage.spark import extract
lineage = extract(script, spark_version="3.5", conf={"spark.sql.warehouse.dir": "s3a://lake/wh"})
"""

from planlineage.spark.extract import extract

__all__ = ["extract"]
