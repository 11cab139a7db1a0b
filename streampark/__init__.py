"""`planlineage watch`: report the Flink SQL and Spark SQL jobs StreamPark submits, read from its database.

StreamPark as released never calls `planlineage submit` / `state`; this sidecar reads its
database (read only) and drives the same lifecycle.  What it relies on about StreamPark is in docs/streampark.md.
"""

# Defaults shared by the watcher and the CLI (here, so that building the parser imports nothing).
DEFAULT_INTERVAL = 5.0  # seconds between polls; StreamPark's own watcher refreshes every 5 s
DEFAULT_LOST_GRACE = 300.0  # LOST is often a network blip or a console restart (§5.1)
DEFAULT_TIMEOUT = 120.0  # --once: longest wait for the poll's compiles and deliveries
