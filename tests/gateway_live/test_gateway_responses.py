"""Every answer through ``planlineage gateway`` is the gateway's own: the same calls, made once
directly and once through the proxy, get the same status, content type and body (handles, job ids
and the like aside, which differ between any two sessions)."""

from __future__ import annotations

import json
import re

from gateway_clients import Exchange, RestSession
from gateway_jobs import ROWS

# What differs between two sessions doing the same: session and operation handles (UUIDs), job ids.
_VARYING = [(re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), b"<handle>")]
_VARYING.append((re.compile(rb"\b[0-9a-f]{32}\b"), b"<job id>"))


def normalised(exchange: Exchange) -> tuple:
    body = exchange.body
    for pattern, placeholder in _VARYING:
        body = pattern.sub(placeholder, body)
    path = exchange.path
    for pattern, placeholder in _VARYING:
        path = pattern.sub(placeholder, path.encode()).decode()
    return exchange.method, path, exchange.status, exchange.content_type, body


def conversation(base: str, tables) -> list[tuple]:
    """A client's calls over the API's versions, the good and the refused, normalised."""
    session = RestSession(base, properties={"execution.runtime-mode": "streaming"})
    session.call("GET", "/api_versions")
    session.call("GET", "/v1/info")
    session.call("GET", "/info")  # unversioned: the latest version
    session.open()
    session.configure("SET 'table.exec.resource.default-parallelism' = '1'")
    session.call("GET", f"/v2/sessions/{session.handle}")
    session.call("POST", f"/v2/sessions/{session.handle}/heartbeat")
    session.run(tables.source("src", "src", ROWS))
    session.run(tables.sink("snk", "snk"))
    bad = session.statement("SELEC 1")  # refused when run: its result is the gateway's error
    assert session.fetch(bad).status_code >= 400
    operation = session.statement("INSERT INTO snk SELECT id, word FROM src")
    session.result(operation)
    session.call("GET", f"/v2/sessions/{session.handle}/operations/{operation}/status")
    session.call("GET", f"/v1/sessions/{session.handle}/operations/{operation}/result/0")
    session.call("GET", f"/v3/sessions/{session.handle}/operations/{operation}/result/1?rowFormat=PLAIN_TEXT")
    session.call("DELETE", f"/v2/sessions/{session.handle}/operations/{operation}/close")
    session.call("GET", f"/v2/sessions/{session.handle}/operations/{operation}/status")  # closed: an error
    session.call("POST", "/v2/sessions/not-a-handle/statements", json={"statement": "SELECT 1"})
    session.call("POST", f"/v2/sessions/{session.handle}/statements", content=b"\x00\xff not json")
    session.call("GET", "/v9/info")
    session.call("GET", "/no/such/path")
    session.call("DELETE", f"/v2/sessions/{session.handle}")
    session.call("GET", f"/v2/sessions/{session.handle}")  # deleted: an error
    session.client.close()
    return [normalised(e) for e in session.exchanges if b'"resultType":"NOT_READY"' not in e.body]


def test_answers_through_the_proxy_are_the_gateways(live, proxy, tables):
    direct = conversation(live.gateway, tables)
    proxied = conversation(proxy.url, tables)
    assert len(direct) == len(proxied)
    for mine, theirs in zip(proxied, direct, strict=True):
        assert mine == theirs
    statuses = {status for _, _, status, _, _ in direct}
    assert statuses == {200, 400, 404, 500}, statuses  # the refused calls were refused, as by the gateway
    versions = json.loads(direct[0][4])["versions"]
    assert "V2" in versions
