"""Fixtures of the Dinky watcher tests: the StreamPark watcher tests' real PostgreSQL and MariaDB
servers, Gravitino-compatible server and ``planlineage watch`` runner (tests/streampark/conftest.py,
loaded here under its own name), with Dinky's console stand-in and ``--dinky-db``."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from dinky_console import Console

_spec = importlib.util.spec_from_file_location(
    "streampark_fixtures", Path(__file__).resolve().parents[1] / "streampark" / "conftest.py"
)
_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fixtures)
pg_server, maria_server, server, gravitino, worker_dir, streampark = (
    _fixtures.pg_server, _fixtures.maria_server, _fixtures.server, _fixtures.gravitino, _fixtures.worker_dir,
    _fixtures.streampark,
)  # fmt: skip


class Dinky:
    """One Dinky database: the console writing it, the URL the watcher reads it with."""

    def __init__(self, server, generation: str, grant: bool):
        self.server = server
        self.database = server.create_database()
        self.console = Console(server, self.database, generation)
        self.console.load_schema()
        if grant:
            server.grant_select(self.database)
        self.url = server.url(self.database)

    def close(self) -> None:
        self.console.close()


@pytest.fixture
def dinky(server):
    made = []

    def make(generation: str = "1.3", grant: bool = True) -> Dinky:
        made.append(Dinky(server, generation, grant))
        return made[-1]

    yield make
    for db in made:
        db.close()


@pytest.fixture
def watch(tmp_path, gravitino, worker_dir):
    runner = _fixtures.Watch(tmp_path / "home", tmp_path, gravitino, worker_dir)
    runner.flag = "--dinky-db"
    yield runner
    _fixtures._kill_workers(runner.home)
