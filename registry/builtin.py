"""The built-in identity rules: exactly the table of docs/naming.md, nothing guessed.

A connector missing from this table gets no dataset and a warning (identity.py): a plausible
generic rule would produce strings no other producer emits, i.e. silent duplicate nodes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from . import cdc, filesystem, jdbc, kafka
from .rule_result import RuleResult

Rule = Callable[[Mapping[str, str], str], RuleResult]


def _no_physical_dataset(options: Mapping[str, str], connector: str) -> RuleResult:
    # Generated or discarded rows: the table takes part in the job but stands for no data at rest.
    return RuleResult(by_design_none=True)


BUILTIN_RULES: dict[str, Rule] = {
    "kafka": kafka.rule,
    "upsert-kafka": kafka.rule,
    "jdbc": jdbc.rule,
    **{name: cdc.rule for name in cdc.CONNECTORS},
    "filesystem": filesystem.rule,
    "hudi": filesystem.rule,
    "datagen": _no_physical_dataset,
    "print": _no_physical_dataset,
    "blackhole": _no_physical_dataset,
}
