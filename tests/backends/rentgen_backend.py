"""A real OpenLineage backend on loopback: Data.Rentgen 0.7.2 over a real Kafka broker and PostgreSQL.

Data.Rentgen needs Python >= 3.12 while planlineage runs on 3.11, so it lives in a venv of its own,
made by :func:`rentgen_python` from a Python 3.12 (``PLANLINEAGE_TEST_PYTHON312``, else pyenv's, else
``python3.12`` on the PATH) and installed with ``pip --require-hashes`` from the pinned
``tests/backends/data-rentgen-requirements.txt`` (how to regenerate it is in its header). The venv is
cached under ``$PLANLINEAGE_TEST_BACKENDS_CACHE`` (the tox envs point it into their work dir; default
``~/.cache/planlineage-test-backends``), one per requirements digest, built once under a file lock.

Fixtures (tests/backends/conftest.py), all session-scoped and started on first use:

``kafka``
    a single-node KRaft broker (:mod:`kafka_broker`); ``kafka.bootstrap`` is ``"127.0.0.1:<port>"``.
``rentgen_postgres``
    a throwaway PostgreSQL (:mod:`databases`) holding Data.Rentgen's database.
``rentgen``
    a started :class:`DataRentgen`: migrations, partitions, the consumer (reading ``rentgen.topic``,
    ``input.runs``, from the earliest offset), the REST server and http2kafka. What to give a producer:
    ``rentgen.bootstrap`` and ``rentgen.topic`` (Kafka), ``rentgen.http2kafka_url`` and
    :meth:`DataRentgen.personal_token` (OpenLineage's HTTP transport: ``OPENLINEAGE_URL`` +
    ``OPENLINEAGE_API_KEY``; the endpoint is ``api/v1/lineage``'s stand-in ``v1/openlineage``).
    :meth:`DataRentgen.publish` writes raw events to the topic (through the venv's aiokafka), and
    :meth:`DataRentgen.malformed` reads what the consumer rejected.
``rentgen_api``
    a :class:`RentgenClient` on the REST API, logged in through the dummy auth provider. Each getter
    returns the page's ``items``; the ``wait_*`` methods poll (bounded, ``timeout`` seconds) until the
    consumer has stored what they look for, and fail saying what was last seen and what the consumer
    rejected. The database is shared by the session: look things up by names unique to your test.

A test that needs none of this (no Python 3.12, no JDK) fails rather than skips: CI has both.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from databases import PASSWORD, SUPERUSER, PostgresServer, free_port

REQUIREMENTS = Path(__file__).with_name("data-rentgen-requirements.txt")
CACHE_ENV = "PLANLINEAGE_TEST_BACKENDS_CACHE"
PYTHON312_ENV = "PLANLINEAGE_TEST_PYTHON312"
TOPIC = "input.runs"
MALFORMED_TOPIC = "input.runs__malformed"
# Fakes, as the dummy auth provider takes any login: nothing here protects anything.
ACCESS_TOKEN_KEY = "FAKE-rentgen-access-key-5d1"
PERSONAL_TOKEN_KEY = "FAKE-rentgen-personal-key-8c4"
USER = "planlineage-tests"
START_TIMEOUT = 120.0


def _cache_dir() -> Path:
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else Path.home() / ".cache" / "planlineage-test-backends"


def python312() -> Path:
    """A Python 3.12 interpreter: the variable, then pyenv's newest 3.12, then the PATH."""
    configured = os.environ.get(PYTHON312_ENV)
    if configured:
        return Path(configured)
    root = os.environ.get("PYENV_ROOT") or _pyenv_root()
    if root:
        found = sorted(glob.glob(f"{root}/versions/3.12.*/bin/python3.12"), key=_version_key)
        if found:
            return Path(found[-1])
    on_path = shutil.which("python3.12")
    if on_path:
        return Path(on_path)
    raise RuntimeError(
        f"Data.Rentgen needs Python 3.12 and none was found: install it with pyenv or set {PYTHON312_ENV}"
    )


def _pyenv_root() -> str | None:
    pyenv = shutil.which("pyenv") or next(
        (p for p in (Path.home() / ".pyenv/bin/pyenv", Path("/root/.pyenv/bin/pyenv")) if p.exists()), None
    )
    if pyenv is None:
        return None
    done = subprocess.run([str(pyenv), "root"], capture_output=True, text=True, timeout=30)
    return done.stdout.strip() or None


def _version_key(path: str) -> tuple[int, ...]:
    version = Path(path).parent.parent.name
    return tuple(int(part) for part in version.split(".") if part.isdigit())


def rentgen_python() -> Path:
    """The Python of the cached Data.Rentgen venv, built on first use (about 30 s with a warm pip cache)."""
    digest = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()[:16]
    folder = _cache_dir() / f"data-rentgen-{digest}"
    python = folder / "bin" / "python"
    complete = folder / ".complete"
    if complete.exists():
        return python
    folder.parent.mkdir(parents=True, exist_ok=True)
    with (folder.parent / f"{folder.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if complete.exists():
            return python
        # A venv left by an interrupted build is not trusted: it is made again from scratch.
        shutil.rmtree(folder, ignore_errors=True)
        subprocess.run([str(python312()), "-m", "venv", str(folder)], check=True, timeout=300)
        installed = subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-input",
             "--require-hashes", "--only-binary", ":all:", "-r", str(REQUIREMENTS)],
            capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        if installed.returncode != 0:
            raise RuntimeError(f"Data.Rentgen's pinned requirements did not install: {installed.stderr[-3000:]}")
        complete.write_text(digest)
    return python


# Run inside the venv: its aiokafka creates topics and publishes/reads events for the tests.
_KAFKA_SCRIPT = r"""
import asyncio, json, sys
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

async def main(action, bootstrap, topic):
    if action == "create":
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
        await admin.start()
        try:
            existing = set(await admin.list_topics())
            wanted = [NewTopic(name, 1, 1) for name in topic.split(",") if name not in existing]
            if wanted:
                await admin.create_topics(wanted)
        finally:
            await admin.close()
    elif action == "publish":
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
        await producer.start()
        try:
            for line in sys.stdin:
                if line.strip():
                    event = json.loads(line)
                    key = f"run:{event['job']['namespace']}/{event['job']['name']}".encode()
                    await producer.send_and_wait(topic, line.strip().encode(), key=key)
        finally:
            await producer.stop()
    elif action == "read":
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest")
        await consumer.start()
        try:
            batches = await consumer.getmany(timeout_ms=3000)
            for records in batches.values():
                for record in records:
                    print(record.value.decode(errors="replace"))
        finally:
            await consumer.stop()

asyncio.run(main(*sys.argv[1:4]))
"""


class DataRentgen:
    """Data.Rentgen's consumer, REST server and http2kafka, started by :func:`data_rentgen`."""

    def __init__(self, python: Path, folder: Path, bootstrap: str, database_url: str):
        self.python = python
        self.folder = folder
        self.bootstrap = bootstrap
        self.topic = TOPIC
        self.database_url = database_url
        self.api_port = free_port()
        self.http2kafka_port = free_port()
        self.consumer_port = free_port()
        self.processes: dict[str, subprocess.Popen] = {}

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    @property
    def http2kafka_url(self) -> str:
        return f"http://127.0.0.1:{self.http2kafka_port}"

    def environment(self) -> dict[str, str]:
        settings = {
            "DATABASE__URL": self.database_url,
            "KAFKA__BOOTSTRAP_SERVERS": json.dumps([self.bootstrap]),
            "CONSUMER__TOPICS_LIST": json.dumps([TOPIC]),
            "CONSUMER__GROUP_ID": "data-rentgen",
            # Its default is latest: events published before the consumer joined would be skipped.
            "CONSUMER__AUTO_OFFSET_RESET": "earliest",
            "PRODUCER__MAIN_TOPIC": TOPIC,
            "PRODUCER__MALFORMED_TOPIC": MALFORMED_TOPIC,
            "AUTH__PROVIDER": "data_rentgen.server.providers.auth.dummy_provider.DummyAuthProvider",
            "AUTH__ACCESS_TOKEN__SECRET_KEY": ACCESS_TOKEN_KEY,
            "AUTH__PERSONAL_TOKENS__ENABLED": "true",
            "AUTH__PERSONAL_TOKENS__SECRET_KEY": PERSONAL_TOKEN_KEY,
            # Its UI is not published on PyPI; without this the server refuses to start.
            "SERVER__STATIC_FILES__ENABLED": "false",
        }
        base = {k: v for k, v in os.environ.items() if not k.startswith(("DATA_RENTGEN__", "OPENLINEAGE"))}
        base.pop("PYTHONPATH", None)
        return {**base, **{f"DATA_RENTGEN__{key}": value for key, value in settings.items()}}

    def _run(self, *args: str, timeout: float = 300) -> None:
        done = subprocess.run(
            [str(self.python), *args], env=self.environment(), cwd=self.folder,
            capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip
        assert done.returncode == 0, f"Data.Rentgen's {' '.join(args)} failed: {done.stderr[-3000:]}"

    def _kafka(self, action: str, topic: str, stdin: str = "", timeout: float = 120) -> str:
        done = subprocess.run(
            [str(self.python), "-c", _KAFKA_SCRIPT, action, self.bootstrap, topic],
            input=stdin, capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip
        assert done.returncode == 0, f"Kafka {action} on {topic} failed: {done.stderr[-3000:]}"
        return done.stdout

    def _spawn(self, name: str, module: str, port: int) -> None:
        log = (self.folder / f"{name}.log").open("wb")
        self.processes[name] = subprocess.Popen(
            [str(self.python), "-m", module, "--host", "127.0.0.1", "--port", str(port)],
            env=self.environment(), cwd=self.folder, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        log.close()

    def log(self, name: str) -> str:
        path = self.folder / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def _wait_ping(self, name: str, url: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            process = self.processes[name]
            assert process.poll() is None, f"Data.Rentgen's {name} stopped: {self.log(name)[-3000:]}"
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/monitoring/ping", timeout=2).is_success:
                    return
            assert time.monotonic() < deadline, f"Data.Rentgen's {name} did not answer within {timeout:.0f} s"
            time.sleep(0.5)

    def start(self) -> DataRentgen:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._run("-m", "data_rentgen.db.migrations", "upgrade", "head")
        self._run("-m", "data_rentgen.db.scripts.create_partitions")
        # A consumer subscribed to a topic that does not exist yet only sees it at its next metadata
        # refresh (minutes): the topics exist before it starts.
        self._kafka("create", f"{TOPIC},{MALFORMED_TOPIC}")
        self._spawn("consumer", "data_rentgen.consumer", self.consumer_port)
        self._spawn("server", "data_rentgen.server", self.api_port)
        self._spawn("http2kafka", "data_rentgen.http2kafka", self.http2kafka_port)
        self._wait_ping("server", self.api_url, START_TIMEOUT)
        self._wait_ping("http2kafka", self.http2kafka_url, START_TIMEOUT)
        self._wait_ping("consumer", f"http://127.0.0.1:{self.consumer_port}", START_TIMEOUT)
        return self

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.terminate()
        for process in self.processes.values():
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=15)

    def publish(self, events: list[dict[str, Any]], topic: str = TOPIC) -> None:
        """Write OpenLineage events to a topic as a producer's Kafka transport does (one JSON value each)."""
        self._kafka("publish", topic, "".join(json.dumps(event) + "\n" for event in events))

    def malformed(self) -> list[str]:
        """What the consumer rejected so far (its malformed topic), raw."""
        return [line for line in self._kafka("read", MALFORMED_TOPIC).splitlines() if line.strip()]

    def personal_token(self, name: str = "planlineage") -> str:
        """A personal token for http2kafka (``OPENLINEAGE_API_KEY``), made through the REST API."""
        client = RentgenClient(self)
        response = client.http.post("/v1/personal-tokens", json={"name": f"{name}-{time.time_ns()}"})
        response.raise_for_status()
        return response.json()["content"]


@contextlib.contextmanager
def data_rentgen(folder: Path, bootstrap: str, postgres: PostgresServer) -> Iterator[DataRentgen]:
    """Data.Rentgen started on a fresh database of ``postgres`` and the broker ``bootstrap``; stopped after."""
    postgres.create_database("data_rentgen")
    # asyncpg's URL must carry the password even where the server would trust the connection.
    url = f"postgresql+asyncpg://{SUPERUSER}:{PASSWORD}@127.0.0.1:{postgres.port}/data_rentgen"
    backend = DataRentgen(rentgen_python(), folder, bootstrap, url)
    try:
        yield backend.start()
    finally:
        backend.stop()


class RentgenClient:
    """Data.Rentgen's REST API, logged in with the dummy auth provider (any login is accepted)."""

    def __init__(self, backend: DataRentgen, timeout: float = 90.0):
        self.backend = backend
        self.timeout = timeout
        self.http = httpx.Client(base_url=backend.api_url, timeout=30)
        token = self.http.post("/v1/auth/token", data={"username": USER, "password": "any"})
        token.raise_for_status()
        self.http.headers["Authorization"] = f"Bearer {token.json()['access_token']}"

    def close(self) -> None:
        self.http.close()

    def get(self, path: str, **params: Any) -> Any:
        response = self.http.get(path, params={k: v for k, v in params.items() if v is not None})
        assert response.status_code == 200, f"GET {path} {params}: {response.status_code} {response.text[:2000]}"
        return response.json()

    @staticmethod
    def since() -> str:
        """A ``since`` that takes in everything a test session made."""
        return (datetime.now(UTC) - timedelta(days=2)).isoformat()

    def datasets(self, search: str | None = None) -> list[dict]:
        return self.get("/v1/datasets", search_query=search, page_size=50)["items"]

    def jobs(self, search: str | None = None) -> list[dict]:
        return self.get("/v1/jobs", search_query=search, page_size=50)["items"]

    def runs(self, job_id: str | int | None = None, run_id: str | None = None) -> list[dict]:
        return self.get("/v1/runs", job_id=job_id, run_id=run_id, since=self.since(), page_size=50)["items"]

    def child_runs(self, parent_run_id: str) -> list[dict]:
        until = (datetime.now(UTC) + timedelta(days=1)).isoformat()
        found = self.get("/v1/runs", parent_run_id=parent_run_id, since=self.since(), until=until, page_size=50)
        return found["items"]

    def operations(self, run_id: str) -> list[dict]:
        return self.get("/v1/operations", run_id=run_id, since=self.since(), page_size=50)["items"]

    def job_lineage(self, job_id: str | int, direction: str = "BOTH", depth: int = 1) -> dict:
        return self.get("/v1/jobs/lineage", start_node_id=job_id, since=self.since(), direction=direction, depth=depth)

    def dataset_lineage(self, dataset_id: str | int, direction: str = "UPSTREAM", depth: int = 1) -> dict:
        return self.get(
            "/v1/datasets/lineage", start_node_id=dataset_id, since=self.since(), direction=direction,
            depth=depth, granularity="DATASET", include_column_lineage="true",
        )  # fmt: skip

    # --- bounded waits for what the consumer stores asynchronously ---

    def wait(self, what: str, fetch: Callable[[], Any], done: Callable[[Any], bool], timeout: float | None = None):
        """``fetch()`` again until ``done`` holds for its answer; that answer. Fails after ``timeout`` s."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            seen = fetch()
            if done(seen):
                return seen
            if time.monotonic() > deadline:
                rejected = self.backend.malformed()
                raise AssertionError(
                    f"Data.Rentgen did not store {what} within {timeout or self.timeout:.0f} s; last seen: "
                    f"{json.dumps(seen, default=str)[:3000]}; rejected by its consumer: {rejected[-5:]}; "
                    f"consumer log: {self.backend.log('consumer')[-2000:]}"
                )
            time.sleep(1)

    def wait_dataset(self, namespace: str, name: str) -> dict:
        """The stored dataset ``(namespace, name)``, its location's name being the namespace's authority."""

        def matching(items: list[dict]) -> list[dict]:
            return [item for item in items if dataset_identity(item) == (namespace, name)]

        return matching(self.wait(f"dataset {namespace} {name}", lambda: self.datasets(), matching))[0]

    def wait_job(self, name: str, job_type: str | None = None) -> dict:
        def matching(items: list[dict]) -> list[dict]:
            return [
                item for item in items
                if item["data"]["name"] == name and (job_type is None or item["data"]["type"] == job_type)
            ]  # fmt: skip

        return matching(self.wait(f"job {name}", lambda: self.jobs(name if len(name) >= 3 else None), matching))[0]

    def wait_run(self, run_id: str, status: str | None = None) -> dict:
        def matching(items: list[dict]) -> list[dict]:
            return [item for item in items if status is None or item["data"]["status"] == status]

        found = self.wait(f"run {run_id} ({status or 'any status'})", lambda: self.runs(run_id=run_id), matching)
        return matching(found)[0]


def dataset_identity(item: dict) -> tuple[str, str]:
    """A stored dataset's OpenLineage (namespace, name): its location ``type://name`` and its name."""
    data = item.get("data", item)
    location = data["location"]
    return f"{location['type']}://{location['name']}", data["name"]


if __name__ == "__main__":  # `python tests/backends/rentgen_backend.py` builds the venv ahead of time
    print(rentgen_python(), file=sys.stderr)
