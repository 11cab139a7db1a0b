"""Session fixtures of the real-backend tests: a Kafka broker, a PostgreSQL and Data.Rentgen on
loopback. What each gives is documented in :mod:`rentgen_backend`."""

from __future__ import annotations

import databases
import kafka_broker
import pytest
import rentgen_backend


@pytest.fixture(scope="session")
def kafka(tmp_path_factory):
    """A single-node KRaft broker; ``kafka.bootstrap`` is its address."""
    with kafka_broker.kafka_broker(tmp_path_factory.mktemp("kafka")) as broker:
        yield broker


@pytest.fixture(scope="session")
def rentgen_postgres():
    """A throwaway PostgreSQL for Data.Rentgen's database."""
    with databases.postgres_server() as server:
        yield server


@pytest.fixture(scope="session")
def rentgen(tmp_path_factory, kafka, rentgen_postgres):
    """Data.Rentgen's consumer, REST server and http2kafka, started (a :class:`rentgen_backend.DataRentgen`)."""
    with rentgen_backend.data_rentgen(
        tmp_path_factory.mktemp("data-rentgen"), kafka.bootstrap, rentgen_postgres
    ) as backend:
        yield backend


@pytest.fixture(scope="session")
def rentgen_api(rentgen):
    """Its REST API, logged in (a :class:`rentgen_backend.RentgenClient`)."""
    client = rentgen_backend.RentgenClient(rentgen)
    yield client
    client.close()
