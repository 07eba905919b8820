"""Shared by the admission tests: settings with an admin token and, on PostgreSQL, Redis."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path
from typing import Any

import httpx
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from homing.settings import Settings
from tests.conftest import REDIS_URL, TenantClient
from tests.fixtures import settings_for
from tests.processes import eventually, free_port

ADMIN_TOKEN = "admin-token-for-tests-0123456789"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}

EMAIL: dict[str, Any] = {
    "to": "ada@example.com",
    "from": "Acme <hello@acme.example>",
    "subject": "Welcome",
    "text": "Hello Ada",
}


def unique_prefix() -> str:
    """A Redis key prefix of one test's own, so parallel tests never share a window."""
    return f"homing-test-{uuid.uuid4().hex}"


def admission_settings(
    database_url: str, tmp_path: Path, secret_key: str, **overrides: Any
) -> Settings:
    """Test settings; PostgreSQL runs with Redis (as deployed), SQLite with memory."""
    values: dict[str, Any] = {"admin_token": ADMIN_TOKEN, "redis_key_prefix": unique_prefix()}
    if database_url.startswith("postgresql"):
        values["redis_url"] = REDIS_URL
    values.update(overrides)
    return settings_for(database_url, tmp_path, secret_key, **values)


async def send_email(client: TenantClient, **kw: Any) -> httpx.Response:
    body = {**EMAIL, **kw.pop("json", {})}
    return await client.post("/v1/notifications/email", json=body, **kw)


async def usage(client: TenantClient) -> dict[str, Any]:
    response = await client.get("/v1/usage")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


class ThrowawayRedis:
    """A redis-server of one test's own on a free loopback port, to stop at will."""

    def __init__(self, tmp_path: Path) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._dir = tmp_path
        self._proc: subprocess.Popen[bytes] | None = None

    async def start(self) -> ThrowawayRedis:
        self._proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self._dir)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        await eventually(self._answers, timeout=10, what="redis-server to answer")
        return self

    async def _answers(self) -> bool:
        client = aioredis.Redis.from_url(self.url)
        try:
            return bool(await client.ping())
        except (RedisError, OSError):
            return False
        finally:
            await client.aclose()

    def stop(self) -> None:
        """SIGKILL, as an outage would."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait(timeout=10)
