"""Outage fixtures: a PostgreSQL cluster and a Redis of the test's own, always torn down."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.outage.servers import PostgresCluster, RedisServer


@pytest.fixture
def pg_cluster() -> Iterator[PostgresCluster]:
    cluster = PostgresCluster()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.destroy()


@pytest.fixture
def own_redis() -> Iterator[RedisServer]:
    server = RedisServer()
    try:
        server.start()
        yield server
    finally:
        server.destroy()
