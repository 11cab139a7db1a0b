"""The jobs a Flink JobManager knows, read from its REST API (``GET /jobs/overview``), for
``planlineage doctor --jobmanager URL``.

The JobManager keeps no SQL and no lineage: what it gives is each job's id (``jid``, 32 hex
digits), its name (``pipeline.name``, else Flink's default such as ``insert-into_…``), its state
and its start and end times (milliseconds since the epoch; ``end-time`` is -1 while it runs).
That is what a reported run is matched on (:mod:`planlineage.doctor.blind_spots`).

A URL may carry credentials (``https://user:password@host``, a JobManager behind an
authenticating proxy): they are sent as HTTP Basic authentication, never shown; every message
names the JobManager by :func:`shown` (the URL without them). Standard library only.
"""

from __future__ import annotations

import base64
import json
import ssl
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass

from planlineage.errors import JobManagerError

#: Flink's JobStatus values that are globally terminal: the job will not run again.
ENDED_STATES = frozenset({"FINISHED", "FAILED", "CANCELED"})
#: How long one request may take: a JobManager answers /jobs/overview from memory.
TIMEOUT_SECONDS = 10.0
#: The largest answer read (an overview of thousands of jobs is a few MB).
_MAX_BYTES = 64 << 20
_LOOPBACK = ("localhost", "127.0.0.1", "::1")
_WHERE = "give the JobManager's REST address (rest.address and rest.port, 8081 by default), e.g. http://jobmanager:8081"


@dataclass(frozen=True)
class FlinkJob:
    job_id: str  # 32 lower-case hex digits
    name: str
    state: str
    start_ms: int  # -1 when the JobManager gives none
    end_ms: int  # -1 while the job has not ended

    @property
    def ended(self) -> bool:
        return self.state in ENDED_STATES


def shown(url: str) -> str:
    """The URL as it may be printed: without user, password or a secret query parameter."""
    from planlineage.registry.secrets import redact_url

    parts = urllib.parse.urlsplit(url.strip())
    netloc = parts.netloc.rpartition("@")[2]
    return redact_url(urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, parts.query, "")))


def _base_and_auth(url: str) -> tuple[str, str | None]:
    """The base URL without credentials, and the Basic authorization header value they make."""
    text = url.strip()
    if "://" not in text:
        text = "http://" + text  # `host:8081`, as Flink's own settings write the address
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise JobManagerError(f"{shown(url)} is not an http(s) address; {_WHERE}")
    auth = None
    if parts.username is not None:
        user = urllib.parse.unquote(parts.username)
        password = urllib.parse.unquote(parts.password or "")
        auth = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    netloc = parts.netloc.rpartition("@")[2]
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", "")), auth


def _opener(base: str) -> urllib.request.OpenerDirector:
    # A proxy from the environment is for the outside world; a JobManager on this machine is not behind it.
    host = urllib.parse.urlsplit(base).hostname or ""
    if host in _LOOPBACK or host.startswith("127."):
        return urllib.request.build_opener(urllib.request.ProxyHandler({}))
    return urllib.request.build_opener()


def _get(base: str, auth: str | None, path: str, timeout: float) -> tuple[int, bytes]:
    """``(status, body)`` of ``GET base+path``; raises JobManagerError when nothing answers."""
    request = urllib.request.Request(base + path, headers={"Accept": "application/json"})
    if auth:
        request.add_header("Authorization", auth)
    try:
        with _opener(base).open(request, timeout=timeout) as response:
            return response.status, response.read(_MAX_BYTES)
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.read(_MAX_BYTES)
    except TimeoutError:
        raise _timed_out(base, timeout) from None
    except ssl.SSLError as error:
        raise JobManagerError(
            f"cannot talk TLS to {shown(base)} ({error.reason or error}); use http:// if its REST "
            "endpoint has no TLS (security.ssl.rest.enabled is off), or trust its certificate"
        ) from None
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        if isinstance(reason, TimeoutError):  # a connect that timed out comes wrapped
            raise _timed_out(base, timeout) from None
        why = getattr(reason, "strerror", None) or str(reason)
        raise JobManagerError(
            f"cannot reach the JobManager at {shown(base)} ({why}); check that the cluster is up and "
            f"the address is right: {_WHERE}"
        ) from None


def _timed_out(base: str, timeout: float) -> JobManagerError:
    return JobManagerError(
        f"the JobManager at {shown(base)} did not answer within {timeout:g} s; check that it is running "
        f"and that this machine can reach it, or {_WHERE}"
    )


def _json(body: bytes):
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def _not_a_jobmanager(base: str, auth: str | None, status: int, body: bytes, timeout: float) -> JobManagerError:
    if status in (401, 403):
        return JobManagerError(
            f"{shown(base)} refused access to /jobs/overview (HTTP {status}); put the credentials its proxy "
            "wants in the URL (https://user:password@host:port): they are sent, never printed"
        )
    what = f"HTTP {status}" if status != 200 else "JSON without a list of jobs" if _json(body) else "not JSON"
    hint = ""
    try:  # the SQL Gateway (port 8083 by default) is the address most often given instead
        gateway_status, gateway_body = _get(base, auth, "/api_versions", timeout)
        versions = _json(gateway_body) if gateway_status == 200 else None
        if isinstance(versions, dict) and "versions" in versions:
            hint = " It is a Flink SQL Gateway: give the JobManager of the cluster it submits to instead."
    except JobManagerError:
        pass
    return JobManagerError(
        f"{shown(base)} answered /jobs/overview with {what}: not a Flink JobManager's REST API; {_WHERE}.{hint}"
    )


def list_jobs(url: str, timeout: float = TIMEOUT_SECONDS) -> list[FlinkJob]:
    """Every job the JobManager at ``url`` lists (running and the ended ones it still keeps).
    Raises JobManagerError, saying what was wrong and what to do."""
    base, auth = _base_and_auth(url)
    status, body = _get(base, auth, "/jobs/overview", timeout)
    answer = _json(body) if status == 200 else None
    if not isinstance(answer, dict) or not isinstance(answer.get("jobs"), list):
        raise _not_a_jobmanager(base, auth, status, body, timeout)
    jobs = []
    for entry in answer["jobs"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("jid"), str):
            continue  # not a job: nothing to match it on
        jobs.append(
            FlinkJob(
                job_id=entry["jid"].strip().lower(),
                name=str(entry.get("name") or ""),
                state=str(entry.get("state") or "").upper(),
                start_ms=_millis(entry.get("start-time")),
                end_ms=_millis(entry.get("end-time")),
            )
        )
    return jobs


def _millis(value) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else -1
