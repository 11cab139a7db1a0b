"""Apache Gravitino's ``POST {address}/api/lineage`` (the status codes below are those of Gravitino's lineage REST API).

* ``201`` (any 2xx) — queued by Gravitino: delivered.
* ``429`` (sink queue over 90 % full), ``5xx``, timeouts, refused connections — retry later.
* ``400`` (malformed or invalid event), ``401``, ``403``, ``406`` — rejected with the server's
  ``message`` field, kept aside, not retried forever.

``Accept: application/json, application/vnd.gravitino.v1+json``: Gravitino's ``VersioningFilter``
(``/api/*``) replaces an ``Accept`` without a ``vnd.gravitino.vN+json`` type by
``application/vnd.gravitino.v1+json``; on main since #12384 Jersey sees that rewrite, and
``LineageOperations`` only ``@Produces("application/json")``, so every plain OpenLineage client
gets 406 (issue #13191).  A request whose ``Accept`` already names v1 passes the filter untouched
and still lists ``application/json`` for the resource: accepted by every server line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from planlineage.emitter.transports.base import GRAVITINO_ENDPOINT, Config
from planlineage.emitter.transports.http import HttpConfig, HttpTransport, _float
from planlineage.errors import TransportConfigError

ENDPOINT = GRAVITINO_ENDPOINT
ACCEPT = "application/json, application/vnd.gravitino.v1+json"


@dataclass(repr=False)
class GravitinoConfig(HttpConfig):
    endpoint: str = ENDPOINT
    token: str | None = field(default=None, repr=False)
    accept: str = ACCEPT

    @classmethod
    def from_dict(cls, options: Mapping[str, Any]) -> GravitinoConfig:
        address = options.get("address") or options.get("url")
        if not address:
            raise TransportConfigError("the gravitino transport needs lineage.address")
        return cls(
            url=str(address),
            token=options.get("token") or None,
            connect_timeout=_float(options, "connect_timeout", 2.0),
            timeout=_float(options, "timeout", 5.0),
        )


class GravitinoTransport(HttpTransport):
    kind: ClassVar[str] = "gravitino"
    config_class: ClassVar[type[Config]] = GravitinoConfig
    backend: ClassVar[str] = "Gravitino"
