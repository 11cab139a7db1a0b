"""A watched Flink app's run shared with openlineage-flink's listener (``listener_conf.coexist``).

When the job's configuration names the listener and ``lineage.flink-runs`` is ``coexist`` (or
``auto``), the watcher records the run under the listener's job; when the listener derives its run
id from the job (the detached listener), the run id too: ``listener_run_id`` of the Flink JobID
(``t_flink_app.job_id``) and the job's start time in milliseconds.

The start time StreamPark keeps is Flink's own only once its tracker has written the app: the
submit sets ``job_id`` and ``start_time = now`` (the console's clock) while the app is still
STARTING, then the tracker writes the state with ``/jobs/overview``'s ``start-time`` a few seconds
later.  So a run of such an app is started when the app leaves STARTING (:func:`waits`), never from
the console's time.  StreamPark on MySQL keeps ``start_time`` in whole seconds (``datetime``): the
run id cannot be derived there, the run is the listener's job with planlineage's own run id, and the
watcher says so once.

The configuration is what the job is given: the listener entries ``flink-conf`` adds, the app's
``options`` (a JSON map from the console's form) and ``dynamic_properties`` (``-Dkey=value``), then
the script's ``SET`` statements.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Any

from planlineage.listener_conf.coexist import SharedRun
from planlineage.streampark.reads import App
from planlineage.streampark.states import FLINK, state_name

if TYPE_CHECKING:
    from planlineage.config import Config

#: The listener's factory class, as a job's configuration names it: a job whose script, options and
#: flink-conf injection cannot name it is decided without reading anything more.
LISTENER_WORD = "OpenLineageJobStatusChangedListener"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Decision:
    """How a run of a watched Flink app is recorded: ``run`` None for planlineage's own job and
    run; ``warning`` a line to say once for the app (the run id could not be derived)."""

    run: SharedRun | None
    warning: str | None = None
    wait: bool = False  # the run id derives from Flink's start time, not written yet: start later


def platform_conf(row: dict[str, Any] | None) -> dict[str, str]:
    """The Flink options StreamPark gives the job: ``options`` (JSON) then ``dynamic_properties``
    (``-Dkey=value``, quoted values allowed), the later winning."""
    conf: dict[str, str] = {}
    if not row:
        return conf
    try:
        options = json.loads(row.get("options") or "{}")
    except ValueError:
        options = {}
    if isinstance(options, dict):
        conf.update({str(k): str(v) for k, v in options.items() if v is not None})
    text = row.get("dynamic_properties") or ""
    try:
        tokens = shlex.split(text)
    except ValueError:  # an unbalanced quote: the words as written
        tokens = text.split()
    for token in tokens:
        if token.startswith("-D") and "=" in token:
            key, _, value = token[2:].partition("=")
            conf[key.strip()] = value.strip()
    return conf


def start_millis(value: Any, zone: tzinfo, dialect: str) -> int | None:
    """``t_flink_app.start_time`` (the console's wall time) as epoch milliseconds, or None when it
    is missing or, on MySQL, holds no fraction (a ``datetime`` column keeps whole seconds)."""
    if not isinstance(value, datetime):
        return None
    if dialect != "postgresql" and not value.microsecond:
        return None
    aware = value.replace(tzinfo=zone) if value.tzinfo is None else value
    return (aware - _EPOCH) // timedelta(milliseconds=1)  # exact: no float in between


def may_coexist(config: Config, script_text: str, conf: dict[str, str]) -> bool:
    """False when the job cannot coexist with the listener: ``lineage.flink-runs`` is ``own``, or
    nothing the job is given names the listener and ``flink-conf`` adds it to no job."""
    chosen, injects = config.flink_runs, config.flink_listener
    named = LISTENER_WORD in script_text or any(LISTENER_WORD in v for v in conf.values())
    return chosen != "own" and (chosen == "coexist" or injects or named)


def held_mark(how: str, log_id: int | None) -> str:
    """The mark a start held for Flink's start time leaves in the app's snapshot row (its
    ``run_job_id``, kept between polls), read back by :func:`held`."""
    return f"held:{how}:{log_id or ''}"


def held(mark: str | None) -> tuple[str, int | None] | None:
    """``(how, operation-log row id)`` of a held start, or None when ``mark`` is not one."""
    kind, _, rest = (mark or "").partition(":")
    if kind != "held":
        return None
    how, _, row = rest.partition(":")
    return how, int(row) if row.isdigit() else None


def waits(app: App) -> bool:
    """True while the app's start time is still the console's (STARTING): a run whose id derives
    from it is started once the tracker has written Flink's."""
    return app.engine == FLINK and state_name(FLINK, app.state) == "STARTING"


def decide(
    app: App,
    script_text: str,
    config: Config | None,
    flink_version: str | None,
    row: dict[str, Any] | None,
    zone: tzinfo,
    dialect: str,
) -> Decision:
    """The listener's job and run for a run of ``app`` starting now (``row``: its
    ``t_flink_app`` start time, options and dynamic properties), or planlineage's own
    (``config``: the settings, read for a Flink app only)."""
    from planlineage.listener_conf import coexist

    given = platform_conf(row)
    if app.engine != FLINK or config is None or not may_coexist(config, script_text, given):
        return Decision(None)
    conf = coexist.job_conf(script_text, config, flink_version, given)
    millis = start_millis((row or {}).get("start_time"), zone, dialect)
    job_id = app.job_id if len(app.job_id or "") == 32 else None
    run = coexist.coexisting_run(conf, config, app.job_name, job_id, millis)
    if run is None or not coexist.derives_run_id(conf):
        return Decision(run)
    if waits(app):  # start_time is still the console's clock: never derived from it
        return Decision(run, wait=True)
    if run.run_id is not None:
        return Decision(run)
    if job_id is None:
        why = "it has no Flink JobID"
    elif millis is None and dialect != "postgresql":
        why = "StreamPark on MySQL keeps t_flink_app.start_time in whole seconds, the run id needs milliseconds"
    else:
        why = "t_flink_app.start_time is not set"
    return Decision(run, f"the listener's run id cannot be derived ({why}): planlineage's own run id is used")
