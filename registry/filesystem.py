"""A filesystem location (the `path` option of `filesystem`, `hudi`) -> (namespace, name).

Ported from openlineage-java `client/java/.../utils/filesystem/` (FilesystemDatasetUtils.fromLocation
with the Local, ObjectStorage and Generic extractors), which openlineage-spark uses for every
Hadoop path and openlineage-flink for Iceberg table locations. The location is read the way Java
reads it, with `java.net.URI`: so the path is percent-decoded, query and fragment are dropped and
`..` is not normalised.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import quote

from .javauri import JavaURI, JavaURISyntaxError, parse_java_uri
from .rule_result import RuleResult, require


class LocationError(ValueError):
    """A location openlineage-java cannot name (it would throw): no dataset."""


# (scheme prefix, canonical scheme). Matching is by prefix, as in ObjectStorageDatasetExtractor:
# "s3" claims s3a/s3n, "abfs" claims abfss, "wasb" claims wasbs.
_OBJECT_STORES = (("s3", "s3"), ("gs", "gs"), ("abfs", "abfss"), ("wasb", "wasbs"))

# Characters java.net.URI accepts somewhere in a URI; anything else (a space, say) is quoted
# before parsing, the way Hadoop's Path quotes it on its way to a URI, and decoded back by getPath.
_URI_SAFE = "!#$&'()*+,-./:;=?@[]_~%"


def _parse(location: str) -> JavaURI:
    try:
        return parse_java_uri(location)
    except JavaURISyntaxError:
        pass
    try:
        return parse_java_uri(quote(location, safe=_URI_SAFE))
    except JavaURISyntaxError as exc:
        raise LocationError(f"path '{location}' is not a valid URI") from exc


def filesystem_identity(location: str) -> tuple[str, str]:
    uri = _parse(location)
    scheme = uri.scheme
    if scheme is None or scheme == "file":
        # Local: the host of file://host/path is dropped, a relative path stays relative.
        path = uri.path
        if path is None:
            raise LocationError(f"path '{location}' has no path part")
        return "file", path.rstrip("/") or "/"
    for prefix, canonical in _OBJECT_STORES:
        if scheme.startswith(prefix):
            if uri.authority is None:
                raise LocationError(f"path '{location}' names no bucket or container")
            name = (uri.path or "").lstrip("/").rstrip("/") or "/"
            return f"{canonical}://{uri.decoded_authority}", name
    # Generic (hdfs, dbfs, anything else): namespace scheme[://authority], name the full path.
    if uri.path is None:
        raise LocationError(f"path '{location}' has no path part")
    namespace = f"{scheme}://{uri.decoded_authority}/" if uri.authority is not None else f"{scheme}:/"
    namespace = namespace.rstrip("/").rstrip(":")
    return namespace, uri.path.rstrip("/") or "/"


#: A variable a platform substitutes before the job runs (`${path}`, Dinky's and StreamPark's
#: variables, Flink's `${...}` in YAML): left in a path, it names no storage.
_VARIABLE = re.compile(r"\$\{[^}]*\}")


def rule(options: Mapping[str, str], connector: str) -> RuleResult:
    """`filesystem` and `hudi`: the table's `path` option."""
    path = require(options, connector, "path")
    variable = _VARIABLE.search(path)
    if variable is not None:
        return RuleResult(
            warnings=[
                f"connector '{connector}': path '{path}' holds the variable {variable.group(0)}, which nothing "
                "substituted (define it where the platform defines its variables, or write the path); no dataset"
            ]
        )
    try:
        return RuleResult(datasets=[filesystem_identity(path)])
    except LocationError as exc:
        return RuleResult(warnings=[f"connector '{connector}': {exc}; no dataset"])
