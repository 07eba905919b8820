"""Bounds a hostile tenant, provider or receiver cannot push past (issue #12, items 1,
5 and parts of 11): pathological text answers 4xx at once, no answer makes a job loop
or cost without limit, the classifier refuses every special-purpose range, passwords
are never previewed, day-long rate windows survive, and stored request hashes are
keyed. The real-process twin of the first is ``test_frozen_loop.py``."""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from sqlalchemy import select, update

from homing.clock import ManualClock
from homing.managers.accounts import credentials_preview
from homing.models import FailureClass
from homing.providers.base import ProviderFailure
from homing.providers.registry import email_provider
from homing.providers.webhook.ssrf import classify
from homing.ratelimit import memory_limiter
from homing.services import Services
from homing.settings import Settings
from homing.store.tables.core import jobs
from tests.conftest import TenantClient
from tests.fixtures import homing_defaults, settings_for
from tests.inbound.conftest import add_account
from tests.webhooks.receiver import Receiver, Reply

# A pattern that backtracks takes seconds on these (minutes at 30 letters); a linear
# check takes microseconds. "At once" is generous: well under what a backtrack costs.
AT_ONCE_SECONDS = 2.0
BACKTRACKING_HOST = "a" * 27 + "-"
MAX_DEFERRAL = 5


# No provider is allowed on loopback here, and retries keep Homing's own timing.
BOUNDS_SETTINGS = {
    **homing_defaults(
        "provider_allowed_networks", "retry_base_seconds", "provider_timeout_seconds"
    ),
    "webhook_allowed_networks": "127.0.0.0/8",
}


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(
        database_url,
        tmp_path,
        SecretStr(secret_key),
        max_deferral_seconds=MAX_DEFERRAL,
        webhook_timeout_seconds=5,
        **BOUNDS_SETTINGS,
    )


async def _timed_post(tenant: TenantClient, path: str, body: Any) -> tuple[httpx.Response, float]:
    started = time.perf_counter()
    response = await tenant.post(path, json=body)
    return response, time.perf_counter() - started


# --- item 1: every text field reachable over the API answers 4xx at once -----------

HOOK = {"payload": {"n": 1}}
PATHOLOGICAL = {
    "webhook url host": ("url", f"https://{BACKTRACKING_HOST}/hook"),
    "webhook url, long labels": ("url", "https://" + ".".join(["a" * 70] * 25) + "/h"),
    "header name": ("headers", {"X-" + "a" * 100_000: "v"}),
    "header name, a bad byte at the end": ("headers", {"X-" + "a" * 99 + "\n": "v"}),
    "header value": ("headers", {"X-Note": "a" * 100_000 + "\n"}),
    "event_type": ("event_type", "a" * 500_000 + "!"),
}


@pytest.mark.parametrize("field", list(PATHOLOGICAL), ids=list(PATHOLOGICAL))
async def test_pathological_webhook_fields_answer_4xx_at_once(
    tenant: TenantClient, field: str
) -> None:
    name, value = PATHOLOGICAL[field]
    body = {"url": "https://hooks.example.com/h", **HOOK, name: value}
    response, elapsed = await _timed_post(tenant, "/v1/notifications/webhook", body)
    assert 400 <= response.status_code < 500, response.text[:300]
    assert elapsed < AT_ONCE_SECONDS, f"{field} took {elapsed:.1f}s"
    assert len(response.content) < 20_000, "the answer does not echo the input whole"


@pytest.mark.parametrize(
    "domain",
    ["a" * 252 + "-", ("a-" * 31 + "a.") * 3 + "a" * 50 + "1", "a." * 126 + "-", "x" * 10_000],
)
async def test_pathological_domain_names_answer_4xx_at_once(
    services: Services, tenant: TenantClient, domain: str
) -> None:
    account = await add_account(services, tenant.tenant_id, "mailgun")
    body = {"domain": domain, "provider_account_id": account.id}
    response, elapsed = await _timed_post(tenant, "/v1/domains", body)
    assert response.status_code == 422, response.text[:300]
    assert elapsed < AT_ONCE_SECONDS


async def test_a_quadratic_429_body_is_classified_at_once(receiver: Receiver) -> None:
    # Mailgun's 429 names its reset in the text: "... try again after <date>".
    message = "try again after a" + " " * 50_000 + "b"
    receiver.default = Reply(
        429, {"Content-Type": "application/json"}, json.dumps({"message": message}).encode()
    )
    async with httpx.AsyncClient(trust_env=False) as http:
        adapter = email_provider(
            "mailgun",
            {"api_key": "key-0123456789abcdef", "domain": "mg.example.com"},
            {"base_url": receiver.url},
            http,
        )
        started = time.perf_counter()
        with pytest.raises(ProviderFailure) as failure:
            await adapter.check_credentials()
        elapsed = time.perf_counter() - started
    assert failure.value.failure_class is FailureClass.THROTTLED
    assert elapsed < AT_ONCE_SECONDS, f"classifying the 429 took {elapsed:.1f}s"


# --- item 5: no answer makes a job loop for free -----------------------------------


async def _send(tenant: TenantClient, url: str) -> str:
    response = await tenant.post("/v1/notifications/webhook", json={"url": url, **HOOK})
    assert response.status_code == 202, response.text
    job_id: str = response.json()["id"]
    return job_id


async def _job(tenant: TenantClient, job_id: str) -> dict[str, Any]:
    response = await tenant.get(f"/v1/jobs/{job_id}")
    body: dict[str, Any] = response.json()
    return body


async def _drain_until_failed(
    services: Services, tenant: TenantClient, clock: ManualClock, job_id: str, rounds: int
) -> dict[str, Any]:
    """Deliver, let a second pass, repeat; a drain that never ends fails the test."""
    for _ in range(rounds):
        # run(once=True) returns when nothing is claimable: a zero deferral never lets it.
        await asyncio.wait_for(services.worker().run(once=True), timeout=20)
        body = await _job(tenant, job_id)
        if body["status"] == "FAILED":
            return body
        clock.advance(1)
    return await _job(tenant, job_id)


@pytest.mark.parametrize(
    "retry_after", ["0", "-30", "Sat, 01 Jan 2000 00:00:00 GMT", "nan"], ids=str
)
async def test_a_zero_or_past_retry_after_ends_within_the_deferral_limit(
    services: Services,
    tenant: TenantClient,
    receiver: Receiver,
    clock: ManualClock,
    retry_after: str,
) -> None:
    receiver.default = Reply(429, {"Retry-After": retry_after})
    started = clock.now()
    job_id = await _send(tenant, f"{receiver.url}/hook")
    body = await _drain_until_failed(services, tenant, clock, job_id, rounds=3 * MAX_DEFERRAL)
    assert body["status"] == "FAILED", body
    assert body["error_class"] == "throttled"
    assert clock.now() - started <= MAX_DEFERRAL + 1
    # One call per second of deferral at most, and the one that found the limit.
    assert len(receiver.requests) <= MAX_DEFERRAL + 1


class TestProviderCallLimit:
    @pytest.fixture
    def settings(self, database_url: str, tmp_path: Path, secret_key: str) -> Settings:
        return settings_for(
            database_url,
            tmp_path,
            SecretStr(secret_key),
            max_deferral_seconds=86_400,
            max_provider_calls_per_job=4,
            **homing_defaults("lease_seconds"),
            **BOUNDS_SETTINGS,
        )

    async def test_a_job_is_dead_lettered_after_the_provider_call_limit(
        self, services: Services, tenant: TenantClient, receiver: Receiver, clock: ManualClock
    ) -> None:
        # Deferrals refund the attempt and a day of them is allowed: only the call
        # limit stops a receiver that answers 429 forever.
        receiver.default = Reply(429, {"Retry-After": "1"})
        job_id = await _send(tenant, f"{receiver.url}/hook")
        body = await _drain_until_failed(services, tenant, clock, job_id, rounds=12)
        assert body["status"] == "FAILED", body
        assert body["error_class"] == "call_limit"
        assert "4 provider calls" in body["error"]
        assert len(receiver.requests) == 4
        assert len(body["attempts"]) == 4


# --- item 11: the classifier ---------------------------------------------------------

SPECIAL_PURPOSE = [
    "192.0.0.8",  # IPv4 dummy address
    "192.0.0.9",  # the rest of 192.0.0.0/24: IETF protocol assignments
    "192.0.0.170",
    "192.0.0.255",
    "100.64.0.1",
    "100.127.255.255",
    "198.18.0.1",
    "198.19.255.255",
    "64:ff9b:1::1",  # local-use NAT64
    "64:ff9b:1:ffff::a00:1",
    "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
    "64:ff9b::c000:8",  # NAT64 of 192.0.0.8
    "2001::1",  # Teredo, in 2001::/23
    "2001:1::1",
    "2001:20::1",
    "2001:1ff:ffff::1",
    "2002:0a00:0001::1",  # 6to4 of 10.0.0.1
    "2002:c000:0008::1",  # 6to4 of 192.0.0.8
    "2002:7f00:0001::1",
    "::ffff:8.8.8.8",
    "::ffff:10.0.0.1",
    "224.0.0.1",
    "239.1.2.3",
    "ff0e::1",  # global-scope multicast: is_global says yes on some Pythons
    "ff05::2",
    "240.0.0.1",
    "5f00::1",  # SRv6 SIDs
    "3fff::1",  # documentation (2024)
    "100::1",  # discard-only
]


@pytest.mark.parametrize("address", SPECIAL_PURPOSE)
def test_special_purpose_addresses_are_not_public(address: str) -> None:
    assert classify(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize(
    "address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "64:ff9b::808:808", "2002:808:808::1"]
)
def test_public_addresses_stay_public(address: str) -> None:
    assert classify(ipaddress.ip_address(address)) is None


# --- item 11: previews show nothing of a password -----------------------------------

HUMAN_PASSWORD = "Acme_Winter2024"


def test_an_smtp_password_preview_shows_nothing_of_it() -> None:
    preview = credentials_preview(
        {"host": "smtp.example.com", "port": 587, "username": "ops", "password": HUMAN_PASSWORD}
    )
    shown = dict(part.split("=", 1) for part in preview.split(", "))["password"]
    assert not any(part in shown for part in ("Acme", "2024", "Ac", "24"))
    assert shown == credentials_preview({"password": "x" * 40}).split("=", 1)[1], "not its length"


def test_a_human_prefix_on_an_api_key_is_not_shown() -> None:
    preview = credentials_preview({"api_key": HUMAN_PASSWORD})
    assert "Acme" not in preview


async def test_a_postmark_basic_auth_preview_shows_nothing_of_the_password(
    services: Services, tenant: TenantClient
) -> None:
    account = await add_account(services, tenant.tenant_id, "postmark")
    response = await tenant.api.put(
        f"/v1/providers/{account.id}/inbound",
        headers=tenant.headers,
        json={"basic_auth": {"username": "postmark-hooks", "password": HUMAN_PASSWORD}},
    )
    assert response.status_code == 200, response.text
    shown = response.json()["preview"].split("password=", 1)[1]
    assert not any(part in shown for part in ("Acme", "2024", "Ac", "24"))


# --- item 11: in-memory rate windows last as long as their rules --------------------


async def test_a_day_long_memory_window_is_not_forgotten_after_an_hour() -> None:
    clock = ManualClock(1000.0)
    limiter = memory_limiter(clock=clock)
    assert (await limiter.hit("pace:day", 1, 86_400)).allowed
    clock.advance(2 * 3600)
    for i in range(10_000):  # enough traffic elsewhere to sweep idle windows
        await limiter.hit(f"other:{i}", 5, 60)
    assert not (await limiter.hit("pace:day", 1, 86_400)).allowed


async def test_memory_windows_are_bounded_in_number() -> None:
    limiter = memory_limiter(max_keys=100)
    for i in range(1_000):
        await limiter.hit(f"tenant:{i}", 1, 60)
    # The newest keys are held; the oldest were evicted, so memory stayed bounded.
    assert not (await limiter.hit("tenant:999", 1, 60)).allowed
    assert (await limiter.hit("tenant:0", 1, 60)).allowed


# --- item 11: stored idempotency hashes are keyed ------------------------------------

SECRET_HEADERS = {"X-Receiver-Token": "tok_live_do_not_leak"}


def _webhook_canonical(body: dict[str, Any]) -> bytes:
    """What a55ad6d hashed unkeyed: the validated body, sorted and compact."""
    full = {"event_type": None, "headers": {}, "ordering_key": None, "priority": None, **body}
    return json.dumps(full, sort_keys=True, separators=(",", ":")).encode()


async def _stored_hash(services: Services, job_id: str) -> str:
    async with services.db.transaction() as conn:
        query = select(jobs.c.request_hash).where(jobs.c.id == job_id)
        value: str = (await conn.execute(query)).scalar_one()
    return value


async def test_a_stored_request_hash_cannot_be_recomputed_without_the_server_key(
    services: Services, tenant: TenantClient, receiver: Receiver
) -> None:
    body = {"url": f"{receiver.url}/hook", "payload": {"n": 1}, "headers": SECRET_HEADERS}
    response = await tenant.post(
        "/v1/notifications/webhook", json=body, headers={"Idempotency-Key": "k1"}
    )
    assert response.status_code == 202, response.text
    stored = await _stored_hash(services, response.json()["id"])
    unkeyed = hashlib.sha256(_webhook_canonical(body)).hexdigest()
    assert stored != unkeyed, "a database reader could confirm a guess of the header"
    assert "do_not_leak" not in stored


async def test_a_job_stored_with_the_old_hash_still_replays(
    services: Services, tenant: TenantClient, receiver: Receiver
) -> None:
    body = {"url": f"{receiver.url}/hook", "payload": {"n": 1}, "headers": SECRET_HEADERS}
    key = {"Idempotency-Key": "before-the-upgrade"}
    first = await tenant.post("/v1/notifications/webhook", json=body, headers=key)
    job_id = first.json()["id"]
    legacy = hashlib.sha256(_webhook_canonical(body)).hexdigest()
    async with services.db.transaction() as conn:
        await conn.execute(update(jobs).where(jobs.c.id == job_id).values(request_hash=legacy))
    again = await tenant.post("/v1/notifications/webhook", json=body, headers=key)
    assert again.status_code == 202, again.text
    assert again.json()["id"] == job_id
    assert again.headers.get("Idempotent-Replayed") == "true"
    changed = {**body, "payload": {"n": 2}}
    conflict = await tenant.post("/v1/notifications/webhook", json=changed, headers=key)
    assert conflict.status_code == 422
    assert conflict.json()["error"]["code"] == "idempotency_conflict"
