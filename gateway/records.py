"""What the proxy hands to the lineage side: a job a session's statement submitted.

The proxy (:mod:`planlineage.gateway.proxy`, :mod:`planlineage.gateway.recorder`) sees the REST
calls; the lineage side (:mod:`planlineage.gateway.submissions`) compiles and reports.  This record
is the whole contract between them, so either side can change without the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class JobSubmitted:
    """A statement of a gateway session started a Flink job (its id was in an operation's result)."""

    gateway: str  # the SQL Gateway's base URL as the proxy forwards to it (no credentials)
    session: str  # the session handle
    operation: str  # the operation handle of the statement that submitted the job
    job_id: str  # the Flink JobID (32 hex digits)
    # The session's statements in the order the gateway ran them, up to and including the one that
    # submitted the job (configure-session statements included, each as sent).
    statements: tuple[str, ...]
    # The session's properties as opened (POST /sessions `properties`), before any SET statement.
    properties: dict[str, str] = field(default_factory=dict)
    submitted_at: float = 0.0  # epoch seconds when the proxy saw the job id
    flink_version: str | None = None  # the gateway's Flink version (GET /v1/info), when known
