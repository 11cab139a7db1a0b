"""Who holds a lease: the node (``PLANLINEAGE_NODE``, default the host name) and the process.

A holder id is ``<node>:<pid>:<random>``; ``planlineage store status`` groups leases by the node
part, so operators see which machine holds what.  Two nodes on one host (tests, blue/green on one
machine) set ``PLANLINEAGE_NODE`` to tell them apart.
"""

from __future__ import annotations

import os
import socket
import uuid


def node_name() -> str:
    configured = (os.environ.get("PLANLINEAGE_NODE") or "").strip()
    return configured or socket.gethostname() or "localhost"


def new_holder() -> str:
    return f"{node_name()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def node_of(holder: str | None) -> str:
    return (holder or "").rsplit(":", 2)[0] if holder and holder.count(":") >= 2 else (holder or "")
