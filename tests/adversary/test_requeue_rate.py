"""Every way of re-queueing pays the tenant's sending rate, once (issue #22, item 4).

The rate was taken only by the ``/v1`` edge, so a console retry or redrive re-sent
failed jobs as often as the owner clicked. Over a real ``homing run``: a console retry
and a console, API or admin bulk redrive each take one request of the tenant's rate
(a bulk redrive of many jobs still one); once the rate is full the next is refused
with ``rate_limited`` (an operator's redrive counts that tenant's jobs as refused) and
nothing is re-queued or charged; and an API retry, whose rate the edge took already,
is not charged again by the manager.
"""

from __future__ import annotations

from pathlib import Path

import httpx

from homing.domain.dead_letters import DeadLetterFilter
from homing.models import JobStatus, Plan, Role
from homing.services import Services
from tests.adversary.suspension_helpers import (
    ADMIN,
    console_sign_in,
    failed_job,
    failed_send,
    homing_run,
    tenant_rows,
    until_failed,
)
from tests.console_helpers import add_user

LIMITED = 'data-code="rate_limited"'


async def _tenant(
    client: httpx.AsyncClient, services: Services, rate: int, failed: int
) -> tuple[str, dict[str, str], list[str]]:
    """A tenant with no provider (its jobs fail at once) and ``failed`` FAILED jobs,
    one request of its ``rate`` each."""
    tenant, key = await services.tenants.create(
        "requeuer", Plan.STARTUP, rate_limit_per_minute=rate
    )
    auth = {"Authorization": f"Bearer {key}"}
    jobs = [await failed_job(client, services, tenant.id, auth) for _ in range(failed)]
    return tenant.id, auth, jobs


async def _remaining_after_a_send(
    client: httpx.AsyncClient, services: Services, tenant_id: str, auth: dict[str, str]
) -> str:
    """What the rate has left after one more send (whose job has failed when this
    returns, so nothing moves meanwhile). The send has a provider to be accepted with:
    one that the accepting process only remembered (for up to 5 s) made this test pass
    on a quick machine and fail on a loaded one."""
    sent = await failed_send(client, services, tenant_id, auth)
    return str(sent.headers["RateLimit-Remaining"])


async def _status(services: Services, tenant_id: str, job_id: str) -> JobStatus:
    job, _ = await services.jobs.get(tenant_id, job_id)
    return job.status


async def _letter_ids(services: Services, tenant_id: str) -> dict[str, str]:
    """Job id → its dead letter's id."""
    found = DeadLetterFilter(tenant_id=tenant_id)
    letters, _ = await services.dead_letter_store.page(found, limit=50, cursor=None)
    return {letter.job_id: letter.id for letter in letters}


async def _owner(client: httpx.AsyncClient, services: Services, tenant_id: str) -> str:
    await add_user(services, "owner@requeuer.test", tenant_id, Role.OWNER)
    return await console_sign_in(client, "owner@requeuer.test")


async def test_a_console_retry_takes_the_rate_and_is_refused_past_it(tmp_path: Path) -> None:
    async with homing_run(tmp_path) as (client, services):
        tenant_id, _, (job_id,) = await _tenant(client, services, rate=3, failed=1)
        csrf = await _owner(client, services, tenant_id)
        retry = f"/t/{tenant_id}/messages/{job_id}/retry"
        for _ in range(2):  # requests 2 and 3 of 3
            answer = await client.post(retry, data={"csrf": csrf})
            assert answer.status_code == 303, answer.text[:300]
            await until_failed(services, tenant_id, job_id)
        before = await tenant_rows(services, tenant_id)
        refused = await client.post(retry, data={"csrf": csrf})
        assert refused.status_code == 429, refused.text[:300]
        assert LIMITED in refused.text
        assert await _status(services, tenant_id, job_id) is JobStatus.FAILED
        assert await tenant_rows(services, tenant_id) == before, "no quota, no re-queue"


async def test_a_console_bulk_redrive_takes_the_rate_once(tmp_path: Path) -> None:
    async with homing_run(tmp_path) as (client, services):
        tenant_id, auth, jobs = await _tenant(client, services, rate=4, failed=2)
        csrf = await _owner(client, services, tenant_id)
        redrive = f"/t/{tenant_id}/dead-letters/redrive"
        answer = await client.post(redrive, data={"csrf": csrf})
        assert answer.status_code == 303, answer.text[:300]
        for job_id in jobs:
            await until_failed(services, tenant_id, job_id)
        # 2 sends + 1 redrive of two jobs + this send: the window of 4 is full.
        assert await _remaining_after_a_send(client, services, tenant_id, auth) == "0"
        refused = await client.post(redrive, data={"csrf": csrf})
        assert refused.status_code == 429, refused.text[:300]
        assert LIMITED in refused.text


async def test_api_retry_pays_once_and_api_redrive_pays_once(tmp_path: Path) -> None:
    async with homing_run(tmp_path) as (client, services):
        tenant_id, auth, (first, second) = await _tenant(client, services, rate=5, failed=2)
        retried = await client.post(f"/v1/jobs/{first}/retry", headers=auth)
        assert retried.status_code == 202, retried.text
        assert retried.headers["RateLimit-Remaining"] == "2", "the edge took it; no one else"
        await until_failed(services, tenant_id, first)
        letters = await _letter_ids(services, tenant_id)
        body = {"ids": [letters[second]]}
        redriven = await client.post("/v1/dead-letters/redrive", json=body, headers=auth)
        assert redriven.status_code == 200, redriven.text
        assert redriven.json()["redriven"] == 1
        await until_failed(services, tenant_id, second)
        assert await _remaining_after_a_send(client, services, tenant_id, auth) == "0"
        before = await tenant_rows(services, tenant_id)
        refused = await client.post("/v1/dead-letters/redrive", json={"all": True}, headers=auth)
        assert refused.status_code == 429, refused.text
        assert refused.json()["error"]["code"] == "rate_limited"
        assert await tenant_rows(services, tenant_id) == before


async def test_an_admin_redrive_pays_each_tenants_rate_once(tmp_path: Path) -> None:
    async with homing_run(tmp_path) as (client, services):
        tenant_id, auth, (first, second, third) = await _tenant(client, services, rate=5, failed=3)
        letters = await _letter_ids(services, tenant_id)
        two = {"ids": [letters[first], letters[second]]}
        redriven = await client.post("/admin/v1/dead-letters/redrive", json=two, headers=ADMIN)
        assert redriven.status_code == 200, redriven.text
        assert redriven.json()["redriven"] == 2
        for job_id in (first, second):
            await until_failed(services, tenant_id, job_id)
        # 3 sends + 1 redrive of two jobs + this send: the window of 5 is full.
        assert await _remaining_after_a_send(client, services, tenant_id, auth) == "0"
        one = {"ids": [letters[third]]}
        refused = await client.post("/admin/v1/dead-letters/redrive", json=one, headers=ADMIN)
        assert refused.status_code == 200, refused.text
        assert refused.json() == {"matched": 1, "redriven": 0, "refused": 1, "uncertain": 0}
        assert await _status(services, tenant_id, third) is JobStatus.FAILED
