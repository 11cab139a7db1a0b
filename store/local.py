"""The node's own keys (today only ``lineage.store``), read from the node's settings file.

The file is ``$PLANLINEAGE_HOME/settings.json`` (:mod:`planlineage.settings` writes it,
atomically, 0600).  The store is chosen before any setting can be read from it, so this reads the
file directly, tolerantly: a missing or unreadable file names no store (the SQLite file then), and
:mod:`planlineage.settings` is the one that reports and moves aside a corrupt file.
"""

from __future__ import annotations

import json
from pathlib import Path

FILE_NAME = "settings.json"
LOCAL_KEYS = ("lineage.store",)


def load(home: Path) -> dict[str, str]:
    try:
        data = json.loads((home / FILE_NAME).read_bytes().decode("utf-8"))
        values = data["settings"]
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError):
        return {}
    if not isinstance(values, dict):
        return {}
    return {k: v for k, v in values.items() if k in LOCAL_KEYS and isinstance(v, str)}
