"""An SMTP host that never greets (or greets, then stalls) cannot hold
``POST /v1/providers`` open.

Real process over real TCP: ``homing run`` checks a tenant's SMTP credentials
against a loopback server that accepts the connection and says nothing, ever. The
check must end at the call deadline with a clear 422 while the API keeps serving
everyone else, and a tenant-set SMTP timeout that could outlast the deadline
(``inf``, ``nan``, negative, huge) is refused before any connection is made.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.adversary.deadline_helpers import SilentSmtp, create_tenant, homing_run
from tests.processes import eventually

DEADLINE_SECONDS = 5.0


def _env() -> dict[str, str]:
    return {
        "HOMING_PROVIDER_DEADLINE_SECONDS": str(DEADLINE_SECONDS),
        # The provider endpoint guard lets loopback SMTP through with this.
        "HOMING_PROVIDER_ALLOWED_NETWORKS": "127.0.0.0/8",
    }


def _smtp(server: SilentSmtp, config: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "channel": "email",
        "provider": "smtp",
        "credentials": {"host": "127.0.0.1", "port": server.port, "starttls": False},
        "config": config or {},
    }


async def _answers_quickly(api: httpx.AsyncClient, path: str, headers: dict[str, str]) -> None:
    started = time.monotonic()
    response = await api.get(path, headers=headers)
    assert response.status_code == 200, response.text
    assert time.monotonic() - started < 2.0


@pytest.mark.parametrize(
    "greeting",
    [pytest.param(b"", id="no-greeting"), pytest.param(b"220 stall ESMTP\r\n", id="stall-after")],
)
async def test_a_silent_smtp_server_gets_a_422_at_the_deadline(
    tmp_path: Path, greeting: bytes
) -> None:
    async with SilentSmtp(greeting) as server, homing_run(tmp_path, _env()) as api:
        hostile = await create_tenant(api, "silent")
        other = await create_tenant(api, "bystander")
        started = time.monotonic()
        check = asyncio.create_task(api.post("/v1/providers", json=_smtp(server), headers=hostile))

        async def connected() -> bool:
            return server.open_now > 0

        await eventually(connected, timeout=DEADLINE_SECONDS, what="the credential check")
        # While the check waits for a greeting, everyone else is served.
        await _answers_quickly(api, "/healthz", {})
        await _answers_quickly(api, "/v1/providers", other)
        assert not check.done()

        response = await asyncio.wait_for(check, timeout=DEADLINE_SECONDS + 10)
        elapsed = time.monotonic() - started
        assert response.status_code == 422, response.text
        error = response.json()["error"]
        assert error["code"] == "provider_timeout"
        assert "deadline" in error["message"]
        assert elapsed < DEADLINE_SECONDS + 3

        async def hung_up() -> bool:
            return server.open_now == 0

        await eventually(hung_up, timeout=5, what="Homing to close the connection")
        listed = await api.get("/v1/providers", headers=hostile)
        assert listed.json() == {"data": [], "next_cursor": None}


async def test_a_tenant_set_smtp_timeout_cannot_outlast_the_deadline(tmp_path: Path) -> None:
    async with SilentSmtp() as server, homing_run(tmp_path, _env()) as api:
        hostile = await create_tenant(api, "forever")
        for timeout in ("inf", "Infinity", "nan", -1, 0, 1e9, DEADLINE_SECONDS + 1, True):
            started = time.monotonic()
            response = await asyncio.wait_for(
                api.post(
                    "/v1/providers", json=_smtp(server, {"timeout": timeout}), headers=hostile
                ),
                timeout=DEADLINE_SECONDS + 10,
            )
            assert response.status_code == 422, (timeout, response.text)
            error = response.json()["error"]
            assert error["code"] == "invalid_request", (timeout, error)
            assert "timeout" in error["message"], (timeout, error)
            assert time.monotonic() - started < 2.0, timeout
        assert server.connections == 0
