"""The errors planlineage reports to a user, and the exit code each one means.

Every error a command can end with derives from :class:`PlanlineageError`, whose message says
what was wrong and what to do, and whose class says whose problem it is:

* :class:`InputError` (exit 2): what the user gave cannot be processed — a script that does not
  compile, a missing jar, a rules file that cannot be used. Running again with the same input
  fails again.
* :class:`EnvironmentProblem` (exit 3): the machine lacks something — no Java, a Flink version
  that cannot be provisioned, a planner that died or did not answer, a warm planner that cannot
  be reached. The same input may succeed elsewhere.

``planlineage.cli.main.main`` turns any of them into one line on stderr and its exit code; no
command handles them itself. The classes keep their historical builtin bases (``ValueError``,
``RuntimeError``) so callers that catch those keep working. Standard library only: the
lifecycle's ``submit`` imports this module and must stay light.
"""

from __future__ import annotations

EXIT_INPUT = 2
EXIT_ENVIRONMENT = 3


class PlanlineageError(Exception):
    """An error meant for the user: its message is printed as is, its class chooses the exit code."""

    exit_code = EXIT_ENVIRONMENT


class InputError(PlanlineageError):
    """The input cannot be processed (bad SQL, bad options, bad rules file)."""

    exit_code = EXIT_INPUT


class EnvironmentProblem(PlanlineageError):
    """The machine lacks something (a Flink version cannot be provisioned, no Java)."""

    exit_code = EXIT_ENVIRONMENT


class ExtractError(InputError):
    """The script cannot be compiled. The message names the statement, its line and the reason."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line


class ConfigError(InputError, ValueError):
    """A configuration that cannot be used; the message names the file and the problem."""


class ProvisionError(EnvironmentProblem, RuntimeError):
    """A Flink version could not be provisioned; the message says what to do."""


class PlannerError(EnvironmentProblem, RuntimeError):
    """The planner process could not be started or stopped answering."""


class PlannerTimeout(PlannerError):
    """The planner did not answer within the time given; it was stopped."""


class WarmPlannerError(EnvironmentProblem, RuntimeError):
    """A warm planner could not be started or reached."""
