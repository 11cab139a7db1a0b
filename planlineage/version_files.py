"""An engine's versions as data: one TOML file per minor version in the engine's versions package
(``flink-versions/1.20.toml``, ``spark-versions/3.5.toml``), read the same way for every engine."""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from importlib import resources
from typing import TypeVar

V = TypeVar("V")


def described(package: str, describe: Callable[[str, dict], V]) -> dict[str, V]:
    """Every ``<minor>.toml`` of ``package``, each made into a version by ``describe(minor, data)``,
    keyed by minor version, oldest first."""
    found = {}
    for entry in resources.files(package).iterdir():
        if entry.name.endswith(".toml"):
            minor = entry.name[: -len(".toml")]
            found[minor] = describe(minor, tomllib.loads(entry.read_text(encoding="utf-8")))
    return dict(sorted(found.items(), key=lambda item: tuple(int(p) for p in item[0].split("."))))
