"""A retry sends again: ``POST /v1/jobs/{id}/retry`` must cost what a new accept costs,
one request of the tenant's sending rate and one unit of the channel's quota, or a
tenant re-sends a failed job for free for ever."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from homing.models import Plan
from homing.services import Services
from homing.settings import Settings
from tests.admission_helpers import admission_settings, send_email, usage
from tests.conftest import TenantClient, disable_providers, make_tenant, stored_provider


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return admission_settings(database_url, tmp_path, secret_key)


async def _failed_job(services: Services, client: TenantClient) -> str:
    """A job that failed at once: its provider is disabled after the accept."""
    await stored_provider(services, client.tenant_id)
    accepted = await send_email(client)
    assert accepted.status_code == 202, accepted.text
    job_id: str = accepted.json()["id"]
    await disable_providers(services, client.tenant_id)
    await _deliver(services)
    return job_id


async def _deliver(services: Services) -> None:
    await services.worker().run(once=True)


async def test_retries_count_toward_the_sending_rate(
    services: Services, api: httpx.AsyncClient
) -> None:
    client = await make_tenant(services, api, "looper", Plan.FREE, rate_limit_per_minute=3)
    job_id = await _failed_job(services, client)  # request 1 of 3
    for remaining in (1, 0):  # requests 2 and 3
        retried = await client.post(f"/v1/jobs/{job_id}/retry")
        assert retried.status_code == 202, retried.text
        assert retried.headers["RateLimit-Remaining"] == str(remaining)
        await _deliver(services)
    refused = await client.post(f"/v1/jobs/{job_id}/retry")
    assert refused.status_code == 429, refused.text
    assert refused.json()["error"]["code"] == "rate_limited"
    assert "Retry-After" in refused.headers
    found, _ = await services.jobs.get(client.tenant_id, job_id)
    assert found.status.value == "FAILED", "a refused retry leaves the job as it was"


async def test_a_retry_uses_one_unit_of_quota_and_is_refused_when_over(
    services: Services, api: httpx.AsyncClient
) -> None:
    client = await make_tenant(
        services,
        api,
        "spender",
        Plan.FREE,
        rate_limit_per_minute=100,
        quota_overrides={"email+webhook": 2},
    )
    job_id = await _failed_job(services, client)
    assert (await usage(client))["used"]["email"] == 1
    retried = await client.post(f"/v1/jobs/{job_id}/retry")
    assert retried.status_code == 202, retried.text
    assert (await usage(client))["used"]["email"] == 2
    await _deliver(services)
    over = await client.post(f"/v1/jobs/{job_id}/retry")
    assert over.status_code == 403, over.text
    assert over.json()["error"]["code"] == "quota_exceeded"
    assert (await usage(client))["used"]["email"] == 2
    found, _ = await services.jobs.get(client.tenant_id, job_id)
    assert found.status.value == "FAILED", "the refused retry re-queued nothing"
    assert await services.worker().run(once=True) == 0
