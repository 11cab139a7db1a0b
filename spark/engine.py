"""The Spark engine (:class:`planlineage.engine.Engine`): its names, versions and facts, and its
stages, whose work is in this package (:mod:`planlineage.spark.stages` composes them).

Imported by the engine picker on every path that asks an engine anything: nothing here imports
more than the version default until a stage runs.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported on the paths of `submit` and the warm `extract`
if TYPE_CHECKING:
    from planlineage.engine import ExtractJob


class SparkEngine:
    name = "spark"
    display_name = "Spark"
    version_field = "spark_version"
    version_examples = "e.g. 3.5 4.0"

    takes_jars = False
    many_scripts = False
    warm_planner = False
    pooled_compiler = False  # each compile starts Spark's own JVM (it still takes a pool place)
    coexists_with_listener = False
    job_id_facet = False
    # openlineage-spark's SQL_JOB always hangs off its application's run (Data.Rentgen's consumer
    # fails on one without a parent): a Spark job with one target is a parent and one child too.
    single_target_has_parent = True
    #: The jobType facet's integration, as openlineage-spark writes it.
    integration = "SPARK"

    @property
    def default_minor(self) -> str:
        from planlineage.spark.versions import DEFAULT_MINOR  # read when asked: `submit` never asks

        return DEFAULT_MINOR

    def job_type(self, is_parent: bool) -> str:
        # openlineage-spark's: the application around several SQL executions
        # (SparkApplicationExecutionContext) and one SQL execution (SparkSQLExecutionContext).
        return "APPLICATION" if is_parent else "SQL_JOB"

    def versions(self):
        from planlineage.spark_versions import supported

        return supported()

    def provision(self, requested, *, force=False, progress=None):
        from planlineage.spark.provision import ensure

        return ensure(requested, force=force, progress=progress)

    def installed(self) -> dict[str, dict]:
        from planlineage.spark.provision import list_installed

        return list_installed()

    def check_version(self, requested) -> None:
        """Nothing before provisioning: an unsupported Spark version is said when it is provisioned."""

    def secret_options(self, sql: str) -> dict[str, str]:
        from planlineage.pipeline import script_options
        from planlineage.spark.stages import spark_options

        options = script_options(sql)  # TBLPROPERTIES ('k' = 'v')
        options.update(spark_options(sql))  # OPTIONS (password 'x'): no '=' for the other reader to see
        return options

    def split(self, script: str):
        from planlineage import script as sql_script

        return sql_script.split(script)

    def compile(self, statements, script: str, job: ExtractJob):
        from planlineage.spark.stages import compile_script

        return compile_script(statements, script, job)

    def lineage(self, compiled, job: ExtractJob):
        from planlineage.spark.stages import lineage_from

        return lineage_from(compiled, job)


ENGINE = SparkEngine()
