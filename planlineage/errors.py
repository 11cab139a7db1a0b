"""The errors planlineage reports to a user, and the one table of the exit codes its commands end with.

Every error a command can end with derives from :class:`PlanlineageError`, whose message says
what was wrong and what to do, and whose class says whose problem it is, hence the exit code:

* :class:`InputError` (exit 2): what the user gave cannot be processed — a script that does not
  compile, a missing jar, a rules file, a setting or a store URL that cannot be used. Running
  again with the same input fails again.
* :class:`EnvironmentProblem` (exit 3): the machine lacks something — no Java, a Flink version
  that cannot be provisioned, a planner that died or did not answer, a warm planner that cannot
  be reached. The same input may succeed elsewhere.
* :class:`StoreError` (exit 2): the state store cannot be used (docs/commands.md: a store that
  cannot be reached is named, exit 2).

``planlineage.cli.main.failed`` turns any of them into one line on stderr and its exit code; no
command handles them itself. The classes keep their historical builtin bases (``ValueError``,
``RuntimeError``) so callers that catch those keep working. Standard library only: the
lifecycle's ``submit`` imports this module and must stay light (``enum`` is loaded by
``argparse`` already).

Exceptions that never reach a user as such (caught where they are raised and turned into one of
these, or into a warning) stay beside their code; ``tests/test_layout.py`` lists them.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Every exit code of every command (``MEANINGS`` says each one in a line; docs/commands.md's
    table is tested against both). A number a command gives a meaning of its own is an alias
    with that meaning's name (``ExitCode.SPLITS == 1``)."""

    OK = 0
    SPLITS = 1
    BLIND_SPOTS = 1
    NOT_SET = 1
    CONNECTION_CLOSED = 1
    INPUT = 2
    STORE = 2
    ENVIRONMENT = 3
    INTERRUPTED = 130
    TERMINATED = 143  # 128 + SIGTERM, as a shell reports a process the signal ended


#: One line per name of :class:`ExitCode`, as docs/commands.md's exit-code table says it.
MEANINGS: dict[str, str] = {
    "OK": "done, warnings included (`doctor`: no split, or no blind spot, found); the lifecycle commands "
    "(`submit`, `state`, `flush`, `outbox`, `spark-conf`, `flink-conf`) always, whatever happens to lineage",
    "SPLITS": "`doctor` found splits: one physical table under two names",
    "BLIND_SPOTS": "`doctor --jobmanager`: the JobManager runs jobs nothing reported lineage for",
    "NOT_SET": "`settings get`: the setting has no value",
    "CONNECTION_CLOSED": "a connection of the command's own (not stdout) was closed by its other end",
    "INPUT": "what you gave cannot be processed: a script that does not compile or holds no statement, an "
    "unknown setting or option, an unreadable input (`doctor --jobmanager`: or JobManager), a file that cannot "
    "be written, a port in use, nothing configured where the command needs a backend; `watch --check` found a "
    "problem",
    "STORE": "the state store cannot be used (cannot be reached, or its schema is newer than this planlineage); "
    "the message names it",
    "ENVIRONMENT": "the machine lacks something: no Java, no JDK to provision with, a Flink version that cannot "
    "be provisioned, a planner that died or did not answer; `extract --send`: the backend did not take every "
    "event in time (they wait in the outbox)",
    "INTERRUPTED": "stopped by Ctrl-C (SIGINT)",
    "TERMINATED": "`extract` stopped by SIGTERM (the planner JVM it started is stopped with it)",
}


class PlanlineageError(Exception):
    """An error meant for the user: its message is printed as is, its class chooses the exit code."""

    exit_code: ExitCode = ExitCode.ENVIRONMENT


class InputError(PlanlineageError):
    """The input cannot be processed (bad SQL, bad options, bad rules file)."""

    exit_code = ExitCode.INPUT


class EnvironmentProblem(PlanlineageError):
    """The machine lacks something (a Flink version cannot be provisioned, no Java)."""

    exit_code = ExitCode.ENVIRONMENT


# -- the script ----------------------------------------------------------------------------------


class ExtractError(InputError):
    """The script cannot be compiled. The message names the statement, its line and the reason."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line


class ScriptError(InputError, ValueError):
    """The script cannot be split (an unterminated string or comment)."""

    def __init__(self, message: str, line: int):
        super().__init__(f"line {line}: {message}")
        self.line = line


class ScriptTooLarge(InputError, ValueError):
    """The script is over the size cap; the message says by how much and which setting raises it."""

    def __init__(self, size: int | None, limit: int, key: str, env: str):
        measured = f" {size:,} bytes," if size is not None else ""  # None: a pipe, not read to its end
        super().__init__(
            f"the script is{measured} over the limit of {limit:,} bytes ({key}, environment {env}): it is "
            "not compiled and has no lineage; raise the limit to analyse it"
        )
        self.size = size
        self.limit = limit


class ConfigError(InputError, ValueError):
    """A configuration that cannot be used; the message names the file and the problem."""


class FlinkHomeError(InputError, ValueError):
    """The given Flink home is not a folder with a lib/ folder."""


# -- settings, the store, transports -------------------------------------------------------------


class SettingError(InputError, ValueError):
    """An unknown key or an invalid value (message is secret-free)."""


class SealError(InputError, ValueError):
    """A sealed value that cannot be opened here (message secret-free, says what to do)."""


class WrongKey(SealError):
    """Sealed with a key this node does not hold: copy the key from the node that set it."""


class Damaged(SealError):
    """The sealed text was altered or cut: no key opens it; set the value again."""


class StoreError(PlanlineageError):
    """The state store cannot be used (message is one secret-free line)."""

    exit_code = ExitCode.STORE


class StoreUrlError(InputError, ValueError):
    """A store URL that cannot be used (message is secret-free and says what to write instead)."""


class TransportConfigError(InputError, ValueError):
    """A transport cannot be built from the given configuration (message is secret-free)."""


class WeakToken(InputError, ValueError):
    """The lineage.ui-token set is too short to guard the lineage; the message says what to do."""


# -- the planner ---------------------------------------------------------------------------------


class ProvisionError(EnvironmentProblem, RuntimeError):
    """A Flink version could not be provisioned; the message says what to do."""


class PlannerError(EnvironmentProblem, RuntimeError):
    """The planner process could not be started or stopped answering."""


class PlannerTimeout(PlannerError):
    """The planner did not answer within the time given; it was stopped."""


class WarmPlannerError(EnvironmentProblem, RuntimeError):
    """A warm planner could not be started or reached."""


# -- what others reported (doctor, graph, ui) ----------------------------------------------------


class UnreadableInput(InputError):
    """An input that cannot be read as OpenLineage events; the message says what to do."""


class JobManagerError(UnreadableInput):
    """The JobManager could not be asked, or what answered is not one; the message says what to do."""


# -- the platforms the watchers poll (watch, gateway) --------------------------------------------


class PlatformUrlError(InputError, ValueError):
    """A platform database's address that cannot be used (the message never holds the password)."""


class SourceError(EnvironmentProblem):
    """What a watcher polls (a platform's database, a JobManager's REST API) cannot be read right
    now (one secret-free line): the watch loop says it once and backs off."""


class DriverMissing(SourceError):
    """The database driver of the dialect is not installed; the message says what to install."""


class PlatformSchemaError(SourceError):
    """The database does not look like the platform's (StreamPark's, Dinky's), or the account sees
    too little of it; the message names what is missing."""
