"""What every platform's ``planlineage watch --check`` says the same way: the report, the
connection and the schema found, the grants the account lacks (with the statements to run) and
where lineage goes.  Each platform's check (:mod:`planlineage.streampark.check`,
:mod:`planlineage.dinky.check`) adds what it knows of its own tables and jobs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from planlineage.errors import SourceError
from planlineage.settings import Settings
from planlineage.watch.connection import Source
from planlineage.watch.url import Target


@dataclass
class Report:
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def grant_statements(target: Target, tables: list[str]) -> list[str]:
    user = target.user or "<user>"
    if target.dialect == "postgresql":
        schema = target.schema or "public"
        return [
            f"GRANT USAGE ON SCHEMA {schema} TO {user};",
            f"GRANT SELECT ON {', '.join(f'{schema}.{t}' for t in tables)} TO {user};",
        ]
    return [f"GRANT SELECT ON `{target.database}`.`{t}` TO '{user}'@'%';" for t in tables]


def opened(target: Target, detect: Callable[[Source], Any], report: Report) -> tuple[Source, Any] | None:
    """A connection and the schema ``detect`` finds through it, both said in ``report``; None
    (the problem in ``report``, nothing left open) when either fails.  The caller closes it."""
    report.lines.append(f"{target.platform} database: {target.masked()}")
    source = Source(target)
    try:
        source.connect()
        schema = detect(source)
    except SourceError as error:
        source.close()
        report.problems.append(str(error))
        return None
    report.lines.append(f"schema: {schema.describe()}")
    return source, schema


def say_grants(report: Report, target: Target, missing: list[str], recommended: list[str], why: str) -> None:
    """The grants the account lacks (a problem), else those recommended (``why``), with the
    statements to run."""
    if missing:
        report.problems.append(f"the account cannot read {', '.join(missing)}")
        report.lines.append(f"missing grants (run as an administrator of the {target.platform} database):")
        report.lines.extend(f"  {s}" for s in grant_statements(target, missing + recommended))
    elif recommended:
        report.lines.append(f"recommended grants ({', '.join(recommended)}: {why}):")
        report.lines.extend(f"  {s}" for s in grant_statements(target, recommended))
    else:
        report.lines.append("grants: every table the watcher reads is readable")


def say_lineage(settings: Settings, report: Report) -> None:
    """Where planlineage reports to, or the problem that it reports nowhere."""
    config = settings.config()
    if config.configured:
        report.lines.append(f"lineage: {config.target()}")
    else:
        report.problems.append(config.why_off())
