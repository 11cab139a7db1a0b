"""What one identity rule returns, and the helper every rule uses for required options.

Rules only say *what* happened ("connector 'kafka' needs option 'topic'; no dataset"); the caller
prefixes the table and redacts, so that the warning format and the secret handling live in one
place (`identity.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass
class RuleResult:
    datasets: list[tuple[str, str]] = field(default_factory=list)  # (namespace, name)
    warnings: list[str] = field(default_factory=list)
    # True for connectors that by design have no physical dataset (datagen, print, blackhole).
    by_design_none: bool = False
    # Further TABLE symlinks (namespace, name) for every dataset: a catalog table's metastore name.
    symlinks: list[tuple[str, str]] = field(default_factory=list)


class MissingOption(Exception):
    def __init__(self, connector: str, option: str, context: str = ""):
        self.connector, self.option = connector, option
        super().__init__(f"connector '{connector}' needs option '{option}'{context}; no dataset")


def require(options: Mapping[str, str], connector: str, key: str, context: str = "") -> str:
    """The option's value; an absent or empty value is missing (Flink would reject it too)."""
    value = options.get(key)
    if value is None or str(value) == "":
        raise MissingOption(connector, key, context)
    return str(value)
