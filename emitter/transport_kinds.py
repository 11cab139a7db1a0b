"""The transports planlineage builds itself and where each posts: names only, no import.

Kept apart from :mod:`planlineage.emitter.transports` (whose package loads the transport base
types) so that reading the settings, which every lifecycle command does, loads nothing else.

The list is not closed: any other kind (``kafka``, a dotted class path, ...) is built by
openlineage-python's own transport factory (:mod:`planlineage.emitter.transports.openlineage`).
"""

import re

#: kind -> (module, class) of the built-in transports, imported when first asked for: the file
#: and console ones pull in openlineage-python (~0.3 s), which the submission path must not pay for.
BUILTIN: dict[str, tuple[str, str]] = {
    "gravitino": ("planlineage.emitter.transports.gravitino", "GravitinoTransport"),
    "http": ("planlineage.emitter.transports.http", "HttpTransport"),
    "file": ("planlineage.emitter.transports.file", "FileTransport"),
    "console": ("planlineage.emitter.transports.console", "ConsoleTransport"),
}
#: The transports planlineage builds itself (its own options: lineage.address, lineage.file, ...).
TRANSPORT_KINDS: tuple[str, ...] = tuple(BUILTIN)

#: The one definition of the endpoints (paths under the address) events are posted to.
GRAVITINO_ENDPOINT = "api/lineage"  # Apache Gravitino's LineageOperations
HTTP_ENDPOINT = "api/v1/lineage"  # OpenLineage's HTTP transport default (Marquez)
#: Transports that post over HTTP to ``lineage.address`` (the ones a cluster listener can use too).
HTTP_KINDS = ("gravitino", "http")

#: An options key saying "build this with openlineage-python's factory" (its options are the
#: library's own: ``auth``, ``compression``, ``config``, ...), even for a kind planlineage builds
#: itself (``http``, ``file``, ``console``): what OpenLineage's configuration names is built as
#: the library builds it.
FACTORY_KEY = "factory"
FACTORY = "openlineage"

_NAME = re.compile(r"[a-z0-9][a-z0-9_\-]*")
_CLASS_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+")


def check_kind(kind: str) -> str:
    """A transport kind as written: a name (lower-cased) or a dotted class path (kept as is, as
    openlineage-python imports it); ValueError otherwise."""
    kind = (kind or "").strip()
    if "." in kind:
        if not _CLASS_PATH.fullmatch(kind):
            raise ValueError(f"{kind!r} is not a dotted class path (package.module.TransportClass)")
        return kind
    kind = kind.lower()
    if not _NAME.fullmatch(kind):
        raise ValueError(
            f"{kind!r} is not a transport: give a name ({', '.join(TRANSPORT_KINDS)}, kafka, ...) "
            "or the dotted path of an openlineage-python Transport class"
        )
    return kind
