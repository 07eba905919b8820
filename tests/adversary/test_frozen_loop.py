"""One request cannot freeze the API (issue #12, item 1), against a real ``homing run``.

The webhook host check used to backtrack exponentially: a host of 30 letters and a
trailing ``-`` held the event loop for minutes, so ``/healthz`` (and every other
tenant) went unanswered. Now the bad URLs get their 422 at once, and ``/healthz``
keeps answering within a second throughout.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx

from tests.processes import HomingProcess, cli_tenant, eventually, free_port

BAD_HOST = "a" * 30 + "-"
HEALTH_DEADLINE_SECONDS = 1.0
WATCH_SECONDS = 3.0


async def _healthy(client: httpx.AsyncClient) -> bool:
    try:
        return (await client.get("/healthz")).status_code == 200
    except httpx.TransportError:
        return False


async def _watch_health(client: httpx.AsyncClient, until: float) -> list[float]:
    """Ask /healthz over and over until ``until``; each answer's time (a slower one
    raises ReadTimeout, failing the test)."""
    answered = []
    while time.monotonic() < until:
        started = time.monotonic()
        response = await client.get("/healthz", timeout=HEALTH_DEADLINE_SECONDS)
        assert response.status_code == 200, response.text
        answered.append(time.monotonic() - started)
        await asyncio.sleep(0.1)  # pacing the probe, not synchronisation
    return answered


async def test_a_backtracking_webhook_host_does_not_freeze_the_api(tmp_path: Path) -> None:
    env = {"HOMING_DATA_DIR": str(tmp_path / "data"), "HOMING_POLL_INTERVAL_SECONDS": "0.2"}
    key = cli_tenant(env, tmp_path)["api_key"]
    port = free_port()
    server = HomingProcess(["run", "--port", str(port)], env, tmp_path / "run.log").start()
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            await eventually(lambda: _healthy(client), what="homing run to listen")
            watch = asyncio.create_task(_watch_health(client, time.monotonic() + WATCH_SECONDS))
            body = {"url": f"https://{BAD_HOST}/hook", "payload": {"n": 1}}
            auth = {"Authorization": f"Bearer {key}"}
            started = time.monotonic()
            answers = await asyncio.gather(
                *(
                    client.post("/v1/notifications/webhook", json=body, headers=auth)
                    for _ in range(3)
                )
            )
            elapsed = time.monotonic() - started
            health = await watch
    finally:
        code = server.stop()
    for answer in answers:
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"]["code"] == "url_refused"
    assert elapsed < 5, f"the refusals took {elapsed:.1f}s"
    assert health and max(health) < HEALTH_DEADLINE_SECONDS
    assert code == 0, server.output()
