"""``planlineage watch --dinky-db``: Apache Dinky's database (read only) -> the lifecycle.

Dinky never calls ``planlineage submit`` / ``state``; this sidecar reads its database (read only)
and drives the same lifecycle as the StreamPark watcher, through what every platform watcher
shares (:mod:`planlineage.watch`: the connection, URL forms, ledger and poll loop).  What it
relies on about Dinky is in docs/dinky.md.
"""

PLATFORM = "Dinky"
URL_ENV = "PLANLINEAGE_DINKY_DB"
PASSWORD_ENV = "PLANLINEAGE_DINKY_PASSWORD"
