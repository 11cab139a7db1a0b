"""The one place that picks an engine by name (``--engine``, a compile job's ``engine``, a
document's version field). Everything else asks the engine (:class:`planlineage.engine.Engine`)
what it needs, never compares its name.

Each engine lives in its own package and is loaded by module path the first time it is asked
for: the picker imports no engine's code, and an engine's facts module imports none of its
heavy parts (the JVM's client, the walk, the naming) until a stage runs, so that `submit` and
the warm `extract` client stay lean. A third engine is one more line here (see
docs/architecture.md, "Engines").
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported on the paths of `submit` and the warm `extract`
if TYPE_CHECKING:
    from planlineage.engine import Engine

#: Engine name -> the module whose ``ENGINE`` implements it; the first is the default.
_MODULES = {
    "flink": "planlineage.planner.engine",
    "spark": "planlineage.spark.engine",
}
#: The names `--engine` accepts.
NAMES: tuple[str, ...] = tuple(_MODULES)
#: The engine of a job or script that names none.
DEFAULT = NAMES[0]


def get(name: str | None = None) -> Engine:
    """The engine called ``name`` (None: the default); a ValueError naming the known ones otherwise."""
    module = _MODULES.get(name or DEFAULT)
    if module is None:
        raise ValueError(f"unknown engine {name!r}: one of {', '.join(NAMES)}")
    return importlib.import_module(module).ENGINE


def every() -> list[Engine]:
    """Every engine, the default first."""
    return [get(name) for name in NAMES]


def of_document(lineage) -> Engine:
    """The engine that produced a lineage document (a JobLineage, or its stored form as a dict):
    the one whose version field it sets."""
    for engine in every():
        field = engine.version_field
        if lineage.get(field) if isinstance(lineage, dict) else getattr(lineage, field, None):
            return engine
    return get(DEFAULT)  # a document of a script that compiled nothing names no version
