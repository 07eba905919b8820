"""Latency probes: accept one job, find when the sandbox received it."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime

import httpx

from homing.channels import Channel
from homing.domain.accepting import NewJob
from homing.models import Priority, Queue
from homing.services import Services

PAYLOAD = {"to": "probe@example.com", "from": "b@example.com", "subject": "probe", "text": "x"}


async def accept(services: Services, tenant_id: str) -> tuple[str, float]:
    """Accept one job now and wake the workers; returns (job id, accept start time)."""
    started = time.time()
    job = NewJob(
        tenant_id=tenant_id,
        channel=Channel.EMAIL,
        queue=Queue.EMAIL,
        priority=Priority.NORMAL,
        payload=PAYLOAD,
    )
    accepted = await services.jobs.accept(job)
    services.wakeup.notify()
    return accepted.job.id, started


async def received_at(sandbox_url: str, job_id: str, timeout: float = 60.0) -> float:
    """When the sandbox recorded ``job_id`` (its own clock), polling until it has."""
    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient(base_url=sandbox_url) as client:
        while time.monotonic() < deadline:
            response = await client.get("/_sandbox/messages", params={"job_id": job_id})
            found = response.json()
            if found:
                return datetime.fromisoformat(found[0]["received_at"]).timestamp()
            await asyncio.sleep(0.005)
    raise TimeoutError(f"job {job_id} never reached the sandbox")


async def one_by_one(
    services: Services, tenant_id: str, sandbox_url: str, count: int
) -> list[float]:
    """Send ``count`` jobs one after the other; each one's accept → receipt seconds."""
    waits = []
    for _ in range(count):
        job_id, started = await accept(services, tenant_id)
        waits.append(await received_at(sandbox_url, job_id) - started)
    return waits
