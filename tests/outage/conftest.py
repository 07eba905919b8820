"""Outage fixtures: a PostgreSQL cluster and a Redis of the test's own, always torn down."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol, TypeVar

import pytest

from tests.outage.servers import PostgresCluster, RedisServer


class _Server(Protocol):
    def start(self) -> object: ...
    def destroy(self) -> object: ...


S = TypeVar("S", bound=_Server)


def _running(server: S) -> Iterator[S]:
    # Destroyed even when it fails to start: a half-started server holds a port and a dir.
    try:
        server.start()
        yield server
    finally:
        server.destroy()


@pytest.fixture
def pg_cluster() -> Iterator[PostgresCluster]:
    yield from _running(PostgresCluster())


@pytest.fixture
def own_redis() -> Iterator[RedisServer]:
    yield from _running(RedisServer())
