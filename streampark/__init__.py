"""`planlineage watch`: report the Flink SQL and Spark SQL jobs StreamPark submits, read from its database.

StreamPark as released never calls `planlineage submit` / `state`; this sidecar reads its
database (read only) and drives the same lifecycle, through what every platform watcher shares
(:mod:`planlineage.watch`).  What it relies on about StreamPark is in docs/streampark.md.
"""

PLATFORM = "StreamPark"
FLAG = "--streampark-db"
URL_ENV = "PLANLINEAGE_STREAMPARK_DB"
PASSWORD_ENV = "PLANLINEAGE_STREAMPARK_PASSWORD"
