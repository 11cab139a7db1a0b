"""What an engine is: the interface Flink (``planner/``) and Spark (``spark/``) implement, and what
one extraction gives an engine.

An engine turns one SQL script of its dialect into a :class:`~planlineage.document.JobLineage`
through stages :func:`planlineage.pipeline.extract` composes the same way for every engine:

1. ``split``: the script into statements (the one splitter, :mod:`planlineage.script`, with the
   engine's own checks);
2. ``compile``: the statements into the plan the engine walks, in a child running the version
   ``provision`` built (Flink's CompiledPlan, Spark's parsed and analyzed logical plans), or the
   finished document when there is nothing left to walk (a failure read from the text, no sink);
3. ``lineage``: the walk of that plan, each table named through ``registry/`` and, when asked,
   the column lineage: the document.

Besides its stages an engine says the facts the rest of the code would otherwise decide by its
name (how its jobs are typed and laid out in events, how its SQL is redacted, what `extract`
may do with it). Engines are picked by name in one place only, :mod:`planlineage.engines`.

This module is read by type checkers and by the pipeline, never on the path of ``submit``. It
imports nothing of planlineage, so that any module may ask the picker (the document model too)
without an import cycle: the document, the statements and the identity configuration it speaks
of are named in the docstrings and typed where the engines implement them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


class EngineVersion(Protocol):
    """One supported version, as its data file describes it (``flink-versions/*.toml``,
    ``spark-versions/*.toml``)."""

    minor: str  # "1.20": what users type
    version: str  # "1.20.5": what is installed
    requirements: tuple[str, ...]  # the pip requirement lines its venv is built from


@dataclass
class ExtractJob:
    """What one extraction is given besides the script; each engine reads what applies to it."""

    version: str | None = None  # None: the engine's default version
    jars: list[str] = field(default_factory=list)  # connector, format, UDF or catalog jars (Flink)
    identity: Any = None  # a planlineage.registry.IdentityConfig (None: the default rules)
    conf: Mapping[str, str] = field(default_factory=dict)  # the job's engine configuration (Spark conf)
    compiler: Any = None  # a compiler the caller already runs (a Planner, a warm one, a SparkParser)
    timeout: float = 300.0
    columns: bool = False


class Engine(Protocol):
    """An engine: its names, its versions, its stages and the facts the rest of the code asks."""

    #: The value of ``--engine``, the ``processing_engine`` facet's name, the SQL facet's dialect.
    name: str
    #: How messages and the table output name it ("Flink").
    display_name: str
    #: The document field holding the version that produced it ("flink_version").
    version_field: str
    #: The examples of versions `install --help` shows.
    version_examples: str

    #: Whether `--jar` / `--flink-home` reach its compile (else they are ignored, with a note).
    takes_jars: bool
    #: Whether `extract` takes several scripts at once (a backfill with planners side by side).
    many_scripts: bool
    #: Whether a running warm planner may answer `extract` for it.
    warm_planner: bool
    #: Whether the compile service's pool place is its compiler (else it starts its own child).
    pooled_compiler: bool
    #: Whether its job may be reported under the job and run of openlineage-flink's listener.
    coexists_with_listener: bool
    #: Whether its job id has a run facet of its own (``flink_job``).
    job_id_facet: bool
    #: Whether a job with a single target still gets a parent run (openlineage-spark's APPLICATION).
    single_target_has_parent: bool
    #: The jobType facet's ``integration``.
    integration: str

    @property
    def default_minor(self) -> str:
        """The version used when none is asked for."""
        ...

    def job_type(self, is_parent: bool) -> str:
        """The jobType facet's ``jobType`` of a parent job or of a job (child or single)."""
        ...

    def versions(self) -> Mapping[str, EngineVersion]:
        """Every supported version, by minor version, oldest first: read from its data files."""
        ...

    def provision(
        self, requested: str | None, *, force: bool = False, progress: Callable[[str], None] | None = None
    ) -> Any:
        """The version's venv, built on first use (again with ``force``)."""
        ...

    def installed(self) -> dict[str, dict]:
        """What its cache holds, per minor version: version, state, path."""
        ...

    def check_version(self, requested: str | None) -> None:
        """Raises the error an unsupported ``requested`` gets, before anything is compiled."""
        ...

    def secret_options(self, sql: str) -> dict[str, str]:
        """Every option pair the SQL writes, as the engine's own reader sees them: what redaction masks."""
        ...

    def split(self, script: str) -> list[Any]:
        """The script's planlineage.script.Statement list (raises planlineage.errors.ScriptError
        with its line)."""
        ...

    def compile(self, statements: list[Any], script: str, job: ExtractJob) -> Any:
        """The plan to walk, or the finished JobLineage when nothing is left to walk."""
        ...

    def lineage(self, compiled: Any, job: ExtractJob) -> Any:
        """The JobLineage of a compiled plan: its walk, its tables named, with column lineage when
        ``job.columns``."""
        ...
