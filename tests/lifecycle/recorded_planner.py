"""A provisioned Flink version whose compile server is ``fake_compile_server.py``: the lifecycle
tests' planner. Everything but the JVM is real: provisioning's readiness check, the compile
service's pool, ``Planner`` and its line protocol, the walk, the registry, the events.

``record(sql, case)`` makes the server answer the script ``sql`` with the CompiledPlan recorded
for ``case`` in tests/fixtures/plans/<minor>/ (so the datasets the tests see come from a real
plan through the real walk: a wrong recorded plan gives wrong datasets). ``hold()`` makes every
compile wait at its start until ``release()``: a test decides when a compile ends, no sleeps.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SERVER = Path(__file__).resolve().parent / "fake_compile_server.py"


def case_sql(case: str) -> str:
    """A fixture case's script as the recordings were compiled from (tests/fixtures/generate.py)."""
    shared = (FIXTURES / "sql" / "_tables.sql").read_text(encoding="utf-8")
    return shared + "\n" + (FIXTURES / "sql" / f"{case}.sql").read_text(encoding="utf-8")


class RecordedPlanner:
    """Flink ``minors`` provisioned in ``cache``, each answering its own version's recordings."""

    def __init__(self, cache: Path, minors: tuple[str, ...] = ("1.20",)):
        from planlineage.planner import provision

        self.cache = cache
        self.flinks = [provision.resolve_version(minor) for minor in minors]
        self.folder = cache / "recorded"
        self.java_home = cache / "no-jvm"
        for folder in (self.folder, self.java_home / "bin"):
            folder.mkdir(parents=True, exist_ok=True)
        # `java` must exist for the Planner to start its child; the fake never runs it.
        self._script(self.java_home / "bin" / "java", "echo 'the lifecycle tests start no JVM' >&2; exit 1")
        for flink in self.flinks:
            home = cache / flink.version
            (home / "lib").mkdir(parents=True, exist_ok=True)
            (home / "venv" / "bin").mkdir(parents=True, exist_ok=True)
            answers = self.folder / f"answers-{flink.minor}.json"
            self._script(
                home / "venv" / "bin" / "python",
                f"exec '{sys.executable}' -I '{SERVER}' --recorded '{self.folder}' --answers '{answers}' \"$@\"",
            )
            marker = {"fingerprint": provision._fingerprint(flink), "version": flink.version, "lib": str(home / "lib")}
            (home / "ready.json").write_text(json.dumps(marker))
            _write(answers, {})

    @staticmethod
    def _script(path: Path, body: str) -> None:
        path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
        path.chmod(0o755)

    def _put(self, sql: str, answer) -> None:
        """Records ``answer(minor)`` for ``sql`` on every version."""
        from fake_compile_server import key

        from planlineage import script
        from planlineage.planner.provisioned import Provisioned
        from planlineage.planner.request import build_request

        for flink in self.flinks:
            provisioned = Provisioned(flink, self.cache / flink.version)
            request, _, _ = build_request(script.split(sql), provisioned, [])
            path = self.folder / f"answers-{flink.minor}.json"
            answers = json.loads(path.read_text(encoding="utf-8"))
            answers[key(request["statements"])] = answer(flink.minor, len(request["statements"]))
            _write(path, answers)

    def record(self, sql: str, case: str, options: dict[str, dict[str, str]] | None = None) -> str:
        """The script ``sql`` compiles to the plan recorded for ``case``, the tables named in
        ``options`` (by their full identifier) with those options added; returns ``sql``."""

        def recorded(minor: str, _count: int) -> dict:
            found = json.loads((FIXTURES / "plans" / minor / f"{case}.json").read_text(encoding="utf-8"))
            for table, more in (options or {}).items():
                found["tables"][table]["options"].update(more)
                _plan_options(found["plan"], "`" + table.replace(".", "`.`") + "`", more)
            return {"ok": True, **{k: found[k] for k in ("plan", "tables", "stand_ins") if k in found}}

        self._put(sql, recorded)
        return sql

    def record_error(self, sql: str, message: str) -> str:
        """The script ``sql`` fails to compile at its last statement, as Flink says ``message``."""
        self._put(sql, lambda _minor, count: {"ok": False, "error": {"statement": count - 1, "message": message}})
        return sql

    def hold(self) -> None:
        (self.folder / "hold").touch()

    def release(self) -> None:
        (self.folder / "hold").unlink(missing_ok=True)

    def hold_large(self) -> None:
        """Hold only the compiles of large scripts (over 512 KiB) until :meth:`release_large`."""
        (self.folder / "hold-large").touch()

    def release_large(self) -> None:
        (self.folder / "hold-large").unlink(missing_ok=True)

    def compiling(self) -> list[int]:
        """Pids of the compile services whose compile has begun (held or not)."""
        return [int(p.name.split(".", 1)[1]) for p in self.folder.glob("compiling.*")]

    def jars(self) -> list[list[str]]:
        """The jars each compile was given, in order."""
        path = self.folder / "requests.jsonl"
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        return [json.loads(line)["jars"] for line in lines]

    def env(self) -> dict[str, str]:
        """What a process needs to compile with this planner (the cache, the no-JVM `java`)."""
        return {"PLANLINEAGE_FLINK_CACHE": str(self.cache), "JAVA_HOME": str(self.java_home)}


def _plan_options(node, identifier: str, more: dict[str, str]) -> None:
    """Adds ``more`` to the options the plan carries for the table ``identifier`` (backticked)."""
    if isinstance(node, dict):
        if node.get("identifier") == identifier and isinstance(node.get("resolvedTable"), dict):
            node["resolvedTable"].setdefault("options", {}).update(more)
        for value in node.values():
            _plan_options(value, identifier, more)
    elif isinstance(node, list):
        for value in node:
            _plan_options(value, identifier, more)


def _write(path: Path, data: dict) -> None:
    """Atomically: a compile reading the answers never sees half of them."""
    path.with_suffix(".tmp").write_text(json.dumps(data), encoding="utf-8")
    path.with_suffix(".tmp").replace(path)
