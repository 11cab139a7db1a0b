"""The platforms of the user's scenario against the real backend: StreamPark's and Dinky's databases
written as their consoles write them (tests/streampark/console.py, tests/dinky/dinky_console.py,
on the StreamPark tests' throwaway PostgreSQL), and ``planlineage watch --once`` run as an operator
runs it, in its own process, configured ONLY through OpenLineage's own configuration: the
``OPENLINEAGE_*`` variables given, or an ``openlineage.yml`` in its working directory; never a
planlineage ``lineage.*`` setting.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from console import Console as StreamParkConsole
from dinky_console import Console as DinkyConsole
from servers import WATCH_PASSWORD, PostgresServer

#: The Flink of the scenario: conformance's (its jars are pinned there), provisioned by the flink22 env.
FLINK = os.environ.get("PLANLINEAGE_TEST_FLINK", "2.2")
#: The Spark of the scenario: the spark35 env provisions it.
SPARK = os.environ.get("PLANLINEAGE_TEST_SPARK", "3.5")

#: What `watch` must not see of the outside: no planlineage setting, no OpenLineage configuration
#: but the one a test gives.
_OWN_PREFIXES = ("PLANLINEAGE_", "OPENLINEAGE")
_KEPT = ("PLANLINEAGE_FLINK_CACHE", "PLANLINEAGE_SPARK_CACHE")


class StreamParkDatabase:
    """A StreamPark (dev schema, Spark tables included) database and its console."""

    def __init__(self, server: PostgresServer):
        self.database = server.create_database()
        self.console = StreamParkConsole(server, self.database, "dev")
        self.console.load_schema(spark=True)
        server.grant_select(self.database)
        self.url = server.url(self.database)
        self.flag = "--streampark-db"


class DinkyDatabase:
    """A Dinky 1.3 database and its console."""

    def __init__(self, server: PostgresServer):
        self.database = server.create_database()
        self.console = DinkyConsole(server, self.database, "1.3")
        self.console.load_schema()
        server.grant_select(self.database)
        self.url = server.url(self.database)
        self.flag = "--dinky-db"


class OpenLineageWatch:
    """``planlineage watch --once`` with a private home and only OpenLineage's configuration."""

    def __init__(self, folder: Path, planner_dir: str, openlineage: dict[str, str]):
        self.folder = folder
        self.home = folder / "home"
        folder.mkdir(parents=True, exist_ok=True)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(_OWN_PREFIXES) or k in _KEPT}
        self.env.update(
            PLANLINEAGE_HOME=str(self.home),
            PLANLINEAGE_PLANNER_DIR=planner_dir,
            PLANLINEAGE_COMPILE_FLUSH_SECONDS="3",
            PLANLINEAGE_COMPILE_IDLE_SECONDS="0.5",
            PLANLINEAGE_STREAMPARK_PASSWORD=WATCH_PASSWORD,
            PLANLINEAGE_DINKY_PASSWORD=WATCH_PASSWORD,
        )
        self.env.update(openlineage)
        self.outputs: list[str] = []

    def write_openlineage_yml(self, text: str) -> Path:
        """OpenLineage's configuration file in the watcher's working directory (``./openlineage.yml``)."""
        path = self.folder / "openlineage.yml"
        path.write_text(text, encoding="utf-8")
        return path

    def once(self, platform: StreamParkDatabase | DinkyDatabase, *args: str, timeout: float = 300) -> str:
        """One poll of the platform's database, compiles and deliveries awaited; its stderr."""
        done = subprocess.run(
            [sys.executable, "-P", "-m", "planlineage", "watch", "--once", platform.flag, platform.url,
             "--timeout", "240", *args],
            capture_output=True, text=True, env=self.env, cwd=self.folder, timeout=timeout,
        )  # fmt: skip
        self.outputs += [done.stdout, done.stderr]
        print(f"watch --once {platform.flag}: {done.stderr}", file=sys.stderr)  # shown by pytest on a failure
        assert done.returncode == 0, f"watch --once failed ({done.returncode}): {done.stderr[-3000:]}"
        return done.stderr

    def settings_list(self) -> str:
        done = subprocess.run(
            [sys.executable, "-P", "-m", "planlineage", "settings", "list"],
            capture_output=True, text=True, env=self.env, cwd=self.folder, timeout=60,
        )  # fmt: skip
        return done.stdout + done.stderr

    def everything_written(self) -> str:
        """All output and every file of the home: to search for what must not be there."""
        parts = list(self.outputs)
        for path in self.home.rglob("*"):
            if path.is_file():
                parts.append(path.read_bytes().decode("utf-8", errors="replace"))
        return "\n".join(parts)
