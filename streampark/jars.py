"""The jars of a StreamPark SQL job, from the console's workspace.

Relative to the console's ``streampark.workspace.local``:

* the effective SQL row's ``dependency`` JSON ``{"pom": [...], "jar": [...]}``: a ``jar`` is the
  uploaded file ``uploads/<name>``; a ``pom`` is the direct artifact in the console's Maven
  repository ``mvnrepo/<group path>/<artifact>/<version>/<artifact>-<version>[-<classifier>].jar``
  (its transitive closure exists only inside StreamPark's resolver);
* ``team_resource`` (2.2+): ids of ``t_resource`` rows whose ``resource`` is the same JSON (their
  uploads live under ``uploads/<team_id>/``); a GROUP (type 4) lists further resource ids;
* yarn-application jobs: every jar the build copied to ``workspace/<appId>/lib/``.

A jar that cannot be found is a warning, never a failure: the job is compiled without it (a
table whose connector is missing goes through the planner's stand-in connector).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planlineage.streampark import reads
from planlineage.streampark.reads import App
from planlineage.streampark.schema import Schema
from planlineage.streampark.states import YARN_APPLICATION
from planlineage.watch.connection import Source

GROUP = 4


@dataclass
class Jars:
    paths: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def add(self, path: Path, what: str) -> None:
        if path.is_file():
            if str(path) not in self.paths:
                self.paths.append(str(path))
        else:
            self.warnings.append(f"{what} not found at {path}")


def _dependency(jars: Jars, workspace: Path, data: Any, uploads: Path) -> None:
    if not isinstance(data, dict):
        return
    for name in data.get("jar") or []:
        if isinstance(name, str) and name.strip():
            jars.add(uploads / Path(name).name, f"uploaded jar {name}")
    for pom in data.get("pom") or []:
        if not isinstance(pom, dict) or not pom.get("artifactId") or not pom.get("version"):
            continue
        group = str(pom.get("groupId") or "").replace(".", "/")
        artifact, version = str(pom["artifactId"]), str(pom["version"])
        classifier = f"-{pom['classifier']}" if pom.get("classifier") else ""
        path = workspace / "mvnrepo" / group / artifact / version / f"{artifact}-{version}{classifier}.jar"
        jars.add(path, f"Maven artifact {pom.get('groupId')}:{artifact}:{version}")


def _team_resources(
    jars: Jars, source: Source, schema: Schema, workspace: Path, ids: list[int], seen: set[int]
) -> None:
    todo = [i for i in ids if i not in seen]
    if not todo:
        return
    seen.update(todo)
    rows = reads.resources(source, schema, todo)
    for resource_id in todo:
        row = rows.get(resource_id)
        if row is None:
            jars.warnings.append(f"team resource {resource_id} not found")
            continue
        data = reads.json_or_none(row["resource"])
        if int(row["resource_type"] or 0) == GROUP:
            members = [int(i) for i in data or [] if str(i).isdigit()] if isinstance(data, list) else []
            _team_resources(jars, source, schema, workspace, members, seen)
        else:
            _dependency(jars, workspace, data, workspace / "uploads" / str(row["team_id"]))


def _has_dependencies(dependency: Any, resource_ids: Any) -> bool:
    """Whether the SQL row names a jar, a Maven artifact or a team resource."""
    listed = isinstance(dependency, dict) and bool(dependency.get("jar") or dependency.get("pom"))
    return listed or (isinstance(resource_ids, list) and bool(resource_ids))


def resolve(source: Source, schema: Schema, app: App, sql_row: dict[str, Any], workspace: str | None) -> Jars:
    """The jars of ``app``'s effective SQL row that exist under ``workspace``."""
    jars = Jars()
    dependency = reads.json_or_none(sql_row.get("dependency"))
    resource_ids = reads.json_or_none(sql_row.get("team_resource"))
    if workspace is None:
        # A yarn-application job's built lib/ holds only what its dependencies brought: without
        # any, the workspace would add nothing, so nothing is said.
        if _has_dependencies(dependency, resource_ids):
            jars.warnings.append(
                "the job has dependencies but the console's workspace is unknown: pass --streampark-workspace"
            )
        return jars
    root = Path(workspace)
    if not root.is_dir():
        jars.warnings.append(f"the StreamPark workspace {root} is not readable here")
        return jars
    _dependency(jars, root, dependency, root / "uploads")
    if isinstance(resource_ids, list):
        ids = [int(i) for i in resource_ids if str(i).strip().isdigit()]
        _team_resources(jars, source, schema, root, ids, set())
    if app.deploy_mode == YARN_APPLICATION:
        lib = root / "workspace" / str(app.id) / "lib"
        try:
            for path in sorted(lib.glob("*.jar")):
                jars.add(path, "built jar")
        except OSError as error:
            jars.warnings.append(f"cannot list {lib}: {error.strerror or error}")
    return jars
