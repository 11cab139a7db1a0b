"""Every setting planlineage knows: its key, default, help and kind, and the settings file's name.

Data only, on the ground floor: :mod:`planlineage.settings` reads and writes these settings over a
store, and the store's own recovery (which salvages settings from a damaged store of version 1)
needs the list without reading any setting, so neither imports the other for it.
"""

from __future__ import annotations

from typing import NamedTuple

from planlineage.emitter.transport_kinds import HTTP_ENDPOINT, TRANSPORT_KINDS

SETTINGS_FILE = "settings.json"

#: Keys whose change may cure a refusal of access: events parked for it are requeued.
REQUEUE_KEYS = frozenset(
    {"lineage.address", "lineage.token", "lineage.endpoint", "lineage.transport", "lineage.transport-options"}
)


class Setting(NamedTuple):
    key: str
    default: str | None = None
    help: str = ""
    secret: bool = False
    choices: tuple[str, ...] = ()
    boolean: bool = False
    number: bool = False
    local: bool = False  # per node (the settings file), never in a shared store


SETTINGS: dict[str, Setting] = {
    s.key: s
    for s in (
        Setting("lineage.address", None, "lineage server, e.g. http://gravitino:8090"),
        Setting("lineage.token", None, "bearer token sent to the lineage server", secret=True),
        Setting("lineage.namespace", "planlineage", "OpenLineage job namespace"),
        Setting("lineage.flink-listener", "false", "inject the OpenLineage Flink listener", boolean=True),
        Setting(
            "lineage.flink-runs",
            "auto",
            "a Flink 2.x job's run: coexist (the OpenLineage listener's job and run id), own, or auto "
            "(coexist when the job's configuration names the listener)",
            choices=("auto", "coexist", "own"),
        ),
        Setting(
            "lineage.platform-job-names",
            "true",
            "watch: a platform's job is the OpenLineage job streampark.<app> / dinky.<task> (false: the bare name)",
            boolean=True,
        ),
        Setting("lineage.profile", None, "naming profile"),
        Setting("lineage.metalake", None, "Gravitino metalake (job namespace when none is set)"),
        Setting("lineage.rules", None, "path of a naming rules file"),
        Setting(
            "lineage.transport",
            "gravitino",
            f"where events go: {', '.join(TRANSPORT_KINDS)}, or a kind openlineage-python builds (kafka, a class path)",
        ),
        Setting(
            "lineage.transport-options",
            None,
            "JSON options of a kind openlineage-python builds (over OpenLineage's configuration of that kind)",
            secret=True,
        ),
        Setting("lineage.endpoint", None, f"endpoint path of the http transport ({HTTP_ENDPOINT})"),
        Setting("lineage.file", None, "file the file transport appends events to"),
        Setting("lineage.store", None, "state store URL of this node (postgresql://…); none: SQLite", local=True),
        Setting(
            "lineage.sql-max-bytes", "262144", "cap of the SQL facet (bytes; larger SQL is truncated)", number=True
        ),
        Setting(
            "lineage.script-max-bytes",
            "4194304",
            "scripts larger than this many bytes are not compiled (no lineage; a warning says so)",
            number=True,
        ),
        Setting(
            "lineage.compile-planners", None, "planner JVMs the compile service may run (max(1, cores-1))", number=True
        ),
        Setting("lineage.history-rate", "20", "watch --history: runs replayed per second at most", number=True),
        Setting("lineage.history-max-runs", "1000", "watch --history: runs replayed per invocation", number=True),
        Setting("lineage.history-threads", None, "watch --history: scripts compiled at once (cores)", number=True),
        Setting("lineage.retry-backoff", "2", "seconds before a refused event is sent again (doubles)", number=True),
        Setting("lineage.retry-attempts", "10", "attempts before a refused event is parked", number=True),
        Setting("lineage.retry-max-age", "86400", "seconds of refusals before an event is parked", number=True),
        Setting(
            "lineage.gateway-session-retention",
            "86400",
            "seconds `planlineage gateway` keeps a session no call used",
            number=True,
        ),
        Setting("lineage.ui-token", None, "token `planlineage ui` requires beyond loopback", secret=True, local=True),
    )
}
