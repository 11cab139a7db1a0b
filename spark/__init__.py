"""Spark SQL lineage: the Spark engine (planlineage.spark.engine), Spark's own parser, per Spark
version, in an isolated virtualenv.

from planlineage.spark import extract
lineage = extract(script, spark_version="3.5", conf={"spark.sql.warehouse.dir": "s3a://lake/wh"})
"""

from __future__ import annotations


def extract(
    script: str,
    spark_version: str | None = None,
    identity=None,
    conf=None,
    parser=None,
    timeout: float = 300.0,
    columns: bool = False,
):
    """The lineage of one Spark SQL job, per target table: :func:`planlineage.pipeline.extract`
    with the Spark engine.

    `conf`: the Spark configuration the job is submitted with; only what names tables is read
    (spark.sql.catalogImplementation, spark.sql.hive.metastore.uris / hive.metastore.uris,
    spark.sql.warehouse.dir, spark.sql.catalog.*, spark.openlineage.dataset.disabledTrimmers /
    extraTrimmers). With `columns`, each target whose every write Spark's analyzer resolved gets
    column lineage. `parser`: a started SparkParser to use (else one is started for the script).
    Raises ExtractError (bad script), ProvisionError, PlannerError.
    """
    from planlineage.pipeline import extract as extract_with
    from planlineage.spark.engine import ENGINE

    return extract_with(
        script,
        identity=identity,
        planner=parser,
        timeout=timeout,
        columns=columns,
        engine=ENGINE,
        version=spark_version,
        conf=conf,
    )


__all__ = ["extract"]
