"""The Flink engine (:class:`planlineage.engine.Engine`): its names, versions and facts, and its
stages, whose work is in this package (:mod:`planlineage.planner.stages` composes them).

Imported by the engine picker on every path that asks an engine anything, `submit` included:
nothing here imports more than the version default until a stage runs.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported on the paths of `submit` and the warm `extract`
if TYPE_CHECKING:
    from planlineage.engine import ExtractJob


class FlinkEngine:
    name = "flink"
    display_name = "Flink"
    version_field = "flink_version"
    version_examples = "e.g. 1.20 2.3"

    takes_jars = True
    many_scripts = True
    warm_planner = True
    pooled_compiler = True
    coexists_with_listener = True
    job_id_facet = True
    single_target_has_parent = False
    #: The jobType facet's integration, as openlineage-flink writes it.
    integration = "FLINK"

    @property
    def default_minor(self) -> str:
        from planlineage.planner.versions import DEFAULT_MINOR  # read when asked: `submit` never asks

        return DEFAULT_MINOR

    def job_type(self, is_parent: bool) -> str:
        # Every job of a Flink submission, the parent of a statement set's jobs included, as
        # openlineage-flink's 2.x listener writes it (OpenLineageJobExtractor.FLINK_JOB_TYPE).
        return "JOB"

    def versions(self):
        from planlineage.flink_versions import supported

        return supported()

    def provision(self, requested, *, force=False, progress=None):
        from planlineage.planner.provision import ensure

        return ensure(requested, force=force, progress=progress)

    def installed(self) -> dict[str, dict]:
        from planlineage.planner.provision import list_installed

        return list_installed()

    def check_version(self, requested) -> None:
        from planlineage.planner.provision import resolve_version, without_compiled_plan

        if not without_compiled_plan(requested):  # an older Flink is read from the text, not refused
            resolve_version(requested)

    def secret_options(self, sql: str) -> dict[str, str]:
        from planlineage.pipeline import script_options

        return script_options(sql)

    def split(self, script: str):
        from planlineage import script as sql_script

        statements = sql_script.split(script)
        sql_script.check_nesting(statements)
        return statements

    def compile(self, statements, script: str, job: ExtractJob):
        from planlineage.planner.stages import compile_script

        return compile_script(statements, script, job)

    def lineage(self, compiled, job: ExtractJob):
        from planlineage.planner.stages import lineage_of

        return lineage_of(compiled, job)


ENGINE = FlinkEngine()
