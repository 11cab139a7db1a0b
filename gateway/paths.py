"""Which SQL Gateway REST calls the recorder reads, told by method and path alone.

The gateway's REST API is versioned by a path prefix (``/v1`` … ``/v4``); a path without one is
the latest version.  Only a handful of calls tell what a session runs; every other call passes
the proxy untouched and unread.  Classifying is one regular expression per request, so the
proxy can decide on the request path, before reading any body, whether to keep a copy of it.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import NamedTuple


class Call(Enum):
    OPEN_SESSION = "open-session"  # POST /sessions: body `properties`, answer `sessionHandle`
    CLOSE_SESSION = "close-session"  # DELETE /sessions/{sh}
    CONFIGURE_SESSION = "configure-session"  # POST /sessions/{sh}/configure-session: body `statement`
    STATEMENT = "statement"  # POST /sessions/{sh}/statements: body `statement`, answer `operationHandle`
    SCRIPT = "script"  # POST /sessions/{sh}/scripts (v4): body `script`, answer `operationHandle`
    RESULT = "result"  # GET /sessions/{sh}/operations/{oh}/result/{token}: may hold the job id
    STATUS = "status"  # GET /sessions/{sh}/operations/{oh}/status: ERROR when the statement failed
    INFO = "info"  # GET /info: the gateway's Flink version
    # Any other call naming a session (heartbeat, get-session, complete-statement, an operation's
    # cancel or close): only that the session is still in use (its retention, see the recorder).
    SESSION_USED = "session-used"


class Classified(NamedTuple):
    call: Call
    version: int | None  # the REST API version the path names; None: unversioned (the latest)
    session: str | None = None
    operation: str | None = None


_VERSION = r"(?:/v(?P<version>\d{1,3}))?"
_HANDLE = r"[^/?#]+"
_SHAPES: dict[str, tuple[tuple[re.Pattern[str], Call], ...]] = {
    "POST": (
        (re.compile(rf"{_VERSION}/sessions/?"), Call.OPEN_SESSION),
        (re.compile(rf"{_VERSION}/sessions/(?P<session>{_HANDLE})/configure-session/?"), Call.CONFIGURE_SESSION),
        (re.compile(rf"{_VERSION}/sessions/(?P<session>{_HANDLE})/statements/?"), Call.STATEMENT),
        (re.compile(rf"{_VERSION}/sessions/(?P<session>{_HANDLE})/scripts/?"), Call.SCRIPT),
    ),
    "DELETE": ((re.compile(rf"{_VERSION}/sessions/(?P<session>{_HANDLE})/?"), Call.CLOSE_SESSION),),
    "GET": (
        (
            re.compile(
                rf"{_VERSION}/sessions/(?P<session>{_HANDLE})/operations/(?P<operation>{_HANDLE})/result/{_HANDLE}/?"
            ),
            Call.RESULT,
        ),
        (
            re.compile(rf"{_VERSION}/sessions/(?P<session>{_HANDLE})/operations/(?P<operation>{_HANDLE})/status/?"),
            Call.STATUS,
        ),
        (re.compile(rf"{_VERSION}/info/?"), Call.INFO),
    ),
}
#: The last shape tried, for every method: any other path under one session.
_SESSION_USED = re.compile(rf"{_VERSION}/sessions/(?P<session>{_HANDLE})(?:/.*)?")
#: Calls whose request body the recorder reads (the others' bodies are passed on unread).
READS_REQUEST_BODY = frozenset({Call.OPEN_SESSION, Call.CONFIGURE_SESSION, Call.STATEMENT, Call.SCRIPT})


def classify(method: str, target: str) -> Classified | None:
    """The call a request makes (``target``: the request line's path and query), or None for a
    call the recorder does not read."""
    path = target.split("?", 1)[0].split("#", 1)[0]
    for pattern, call in (*_SHAPES.get(method.upper(), ()), (_SESSION_USED, Call.SESSION_USED)):
        match = pattern.fullmatch(path)
        if match:
            groups = match.groupdict()
            version = groups.get("version")
            return Classified(call, int(version) if version else None, groups.get("session"), groups.get("operation"))
    return None
