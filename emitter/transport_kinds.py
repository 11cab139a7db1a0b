"""The transports a setting may name and where each posts: names only, no import.

Kept apart from :mod:`planlineage.emitter.transports` (whose package loads the transport base
types) so that reading the settings, which every lifecycle command does, loads nothing else.
"""

#: kind -> (module, class) of the built-in transports, imported when first asked for: the file
#: and console ones pull in openlineage-python (~0.3 s), which the submission path must not pay for.
BUILTIN: dict[str, tuple[str, str]] = {
    "gravitino": ("planlineage.emitter.transports.gravitino", "GravitinoTransport"),
    "http": ("planlineage.emitter.transports.http", "HttpTransport"),
    "file": ("planlineage.emitter.transports.file", "FileTransport"),
    "console": ("planlineage.emitter.transports.console", "ConsoleTransport"),
}
#: Every transport a setting may name, the one list of them.
TRANSPORT_KINDS: tuple[str, ...] = tuple(BUILTIN)

#: The one definition of the endpoints (paths under the address) events are posted to.
GRAVITINO_ENDPOINT = "api/lineage"  # Apache Gravitino's LineageOperations
HTTP_ENDPOINT = "api/v1/lineage"  # OpenLineage's HTTP transport default (Marquez)
#: Transports that post over HTTP to ``lineage.address`` (the ones a cluster listener can use too).
HTTP_KINDS = ("gravitino", "http")
