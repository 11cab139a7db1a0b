"""Which StreamPark Spark applications the watcher reports, and why so few.

planlineage compiles Flink SQL; it has no lineage of its own for Spark jobs yet.  A run event
without datasets would wipe the job's edges in the lineage graph, so the watcher sends nothing
for a Spark application.  Spark lineage comes from the OpenLineage Spark listener running inside
the application (``planlineage spark-conf`` adds it to the app's properties): the listener sends
the application's own START/COMPLETE events *with* datasets.  For those applications the watcher
follows and prints the StreamPark states, so the operator sees the same transitions for both
engines, and adds no event.

:func:`lineage_source` is the one place that decides this.  When planlineage learns to extract
Spark SQL lineage, it is the seam: answer ``"planlineage"`` there for the apps it can compile and
the watcher starts their runs like Flink SQL runs.
"""

from __future__ import annotations

import json

from planlineage.streampark.reads import App

LISTENER_CLASS = "io.openlineage.spark.agent.OpenLineageSparkListener"


def properties(text: str | None) -> dict[str, str]:
    """``t_spark_app.app_properties``: ``key=value`` lines (or a JSON object)."""
    if not text or not text.strip():
        return {}
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
            return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}
        except ValueError:
            return {}
    found = {}
    for line in stripped.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep:
            key, _, value = line.partition(" ")
        found[key.strip()] = value.strip()
    return found


def lineage_source(app: App) -> str | None:
    """Where a Spark app's lineage comes from: ``"listener"``, or None (not reported)."""
    listeners = properties(app.app_properties).get("spark.extraListeners", "")
    if LISTENER_CLASS in [name.strip() for name in listeners.split(",")]:
        return "listener"
    return None
