"""Sending-domain calls of the HTTP adapters: the exact requests and the record mapping."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qsl

import httpx
import pytest

from homing.errors import InvalidRequest
from homing.models import DnsRecord, DomainStatus, FailureClass
from homing.providers.base import ProviderFailure
from homing.providers.domain_api import DomainProvider, DomainsUnsupported
from homing.providers.registry import domain_provider

Handler = Callable[[httpx.Request], httpx.Response]


@asynccontextmanager
async def adapter(
    name: str,
    replies: list[httpx.Response],
    credentials: dict[str, Any] | None = None,
    config: dict[str, Any] | None = None,
) -> AsyncIterator[tuple[DomainProvider, list[httpx.Request]]]:
    requests: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return replies[len(requests) - 1]

    creds = credentials or {"api_key": "key-0123456789", "domain": "mg.example.com"}
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        yield domain_provider(name, creds, config or {"base_url": "https://p.test"}, http), requests


async def test_sendgrid_authenticates_with_automatic_security_and_maps_the_cnames() -> None:
    created = {
        "id": 42,
        "valid": False,
        "dns": {
            "mail_cname": {
                "valid": False,
                "type": "cname",
                "host": "em1.acme.io",
                "data": "u1.wl.sendgrid.net",
            },
            "dkim1": {
                "valid": False,
                "type": "cname",
                "host": "s1._domainkey.acme.io",
                "data": "s1.x",
            },
        },
    }
    validated = {"id": 42, "valid": True, "validation_results": {"mail_cname": {"valid": True}}}
    replies = [httpx.Response(201, json=created), httpx.Response(200, json=validated)]
    async with adapter("sendgrid", replies) as (provider, requests):
        info = await provider.create_domain("acme.io")
        checked = await provider.verify_domain(info.provider_domain_id, info.records)
    assert (requests[0].method, requests[0].url.path) == ("POST", "/v3/whitelabel/domains")
    assert json.loads(requests[0].content) == {"domain": "acme.io", "automatic_security": True}
    assert requests[0].headers["authorization"] == "Bearer key-0123456789"
    assert requests[1].url.path == "/v3/whitelabel/domains/42/validate"
    assert info.status is DomainStatus.PENDING
    assert [(r.type, r.host, r.value, r.purpose) for r in info.records] == [
        ("CNAME", "em1.acme.io", "u1.wl.sendgrid.net", "mail_cname"),
        ("CNAME", "s1._domainkey.acme.io", "s1.x", "dkim1"),
    ]
    assert checked.status is DomainStatus.VERIFIED
    assert [r.valid for r in checked.records] == [True, False]


async def test_resend_verification_is_asynchronous_so_it_reads_the_domain_after() -> None:
    domain = {
        "id": "d-1",
        "status": "not_started",
        "records": [
            {
                "record": "DKIM",
                "name": "resend._domainkey",
                "type": "TXT",
                "value": "p=abc",
                "status": "not_started",
            },
        ],
    }
    replies = [
        httpx.Response(200, json=domain),
        httpx.Response(200, json={"object": "domain", "id": "d-1"}),
        httpx.Response(200, json={**domain, "status": "verified"}),
    ]
    async with adapter("resend", replies) as (provider, requests):
        info = await provider.create_domain("acme.io")
        checked = await provider.verify_domain("d-1", info.records)
    assert [(r.method, r.url.path) for r in requests] == [
        ("POST", "/domains"),
        ("POST", "/domains/d-1/verify"),
        ("GET", "/domains/d-1"),
    ]
    assert json.loads(requests[0].content) == {"name": "acme.io"}
    assert info.records == (
        DnsRecord(
            type="TXT",
            host="resend._domainkey",
            value="p=abc",
            purpose="dkim",
            priority=None,
            valid=False,
        ),
    )
    assert checked.status is DomainStatus.VERIFIED


POSTMARK_DOMAIN = {
    "ID": 36735,
    "Name": "acme.io",
    "DKIMVerified": False,
    "DKIMHost": "",
    "DKIMTextValue": "",
    "DKIMPendingHost": "20240101pm._domainkey.acme.io",
    "DKIMPendingTextValue": "k=rsa;p=MIGf",
    "ReturnPathDomain": "pm-bounces.acme.io",
    "ReturnPathDomainVerified": False,
    "ReturnPathDomainCNAMEValue": "pm.mtasv.net",
}


async def test_postmark_uses_the_account_token_and_reads_dkim_pending() -> None:
    verified = {
        **POSTMARK_DOMAIN,
        "DKIMVerified": True,
        "DKIMHost": "20240101pm._domainkey.acme.io",
        "DKIMTextValue": "k=rsa;p=MIGf",
        "DKIMPendingHost": "",
        "DKIMPendingTextValue": "",
    }
    replies = [
        httpx.Response(200, json=POSTMARK_DOMAIN),
        httpx.Response(200, json=verified),
        httpx.Response(200, json={**verified, "ReturnPathDomainVerified": True}),
    ]
    credentials = {"api_key": "server-token-01", "account_token": "account-token-01"}
    config = {"base_url": "https://p.test", "return_path_subdomain": "pm-bounces"}
    async with adapter("postmark", replies, credentials, config) as (provider, requests):
        info = await provider.create_domain("acme.io")
        checked = await provider.verify_domain("36735", info.records)
    assert json.loads(requests[0].content) == {
        "Name": "acme.io",
        "ReturnPathDomain": "pm-bounces.acme.io",
    }
    for request in requests:
        assert request.headers["x-postmark-account-token"] == "account-token-01"
        assert "x-postmark-server-token" not in request.headers
    assert [r.url.path for r in requests[1:]] == [
        "/domains/36735/verifyDkim",
        "/domains/36735/verifyReturnPath",
    ]
    assert [(r.type, r.host, r.value) for r in info.records] == [
        ("TXT", "20240101pm._domainkey.acme.io", "k=rsa;p=MIGf"),
        ("CNAME", "pm-bounces.acme.io", "pm.mtasv.net"),
    ]
    assert checked.status is DomainStatus.VERIFIED


async def test_postmark_domains_without_an_account_token_are_refused_before_any_call() -> None:
    async with adapter("postmark", [], {"api_key": "server-token-01"}) as (provider, requests):
        with pytest.raises(InvalidRequest, match="account_token"):
            await provider.create_domain("acme.io")
    assert requests == []


async def test_mailgun_registers_with_a_v4_form_and_maps_sending_and_receiving_records() -> None:
    body = {
        "domain": {"name": "acme.io", "state": "unverified"},
        "sending_dns_records": [
            {
                "record_type": "TXT",
                "name": "acme.io",
                "value": "v=spf1 include:mailgun.org ~all",
                "valid": "unknown",
            },
            {
                "record_type": "TXT",
                "name": "mx._domainkey.acme.io",
                "value": "k=rsa; p=X",
                "valid": "unknown",
            },
            {
                "record_type": "CNAME",
                "name": "email.acme.io",
                "value": "mailgun.org",
                "valid": "unknown",
            },
        ],
        "receiving_dns_records": [
            {"record_type": "MX", "priority": "10", "value": "mxa.mailgun.org", "valid": "unknown"},
        ],
    }
    active = {**body, "domain": {"name": "acme.io", "state": "active"}}
    replies = [httpx.Response(200, json=body), httpx.Response(200, json=active)]
    async with adapter("mailgun", replies) as (provider, requests):
        info = await provider.create_domain("acme.io")
        checked = await provider.verify_domain(info.provider_domain_id, info.records)
    assert (requests[0].method, requests[0].url.path) == ("POST", "/v4/domains")
    assert parse_qsl(requests[0].content.decode()) == [("name", "acme.io")]
    assert (requests[1].method, requests[1].url.path) == ("PUT", "/v4/domains/acme.io/verify")
    assert [(r.purpose, r.priority) for r in info.records] == [
        ("spf", None),
        ("dkim", None),
        ("tracking", None),
        ("mx", 10),
    ]
    assert info.records[3].host == "acme.io"
    assert (info.status, checked.status) == (DomainStatus.PENDING, DomainStatus.VERIFIED)


async def test_a_refusal_is_a_provider_failure_without_the_key() -> None:
    reply = httpx.Response(400, json={"errors": [{"message": "already exists", "field": "domain"}]})
    async with adapter("sendgrid", [reply]) as (provider, _):
        with pytest.raises(ProviderFailure) as info:
            await provider.create_domain("acme.io")
    assert info.value.failure_class is FailureClass.MESSAGE_PERMANENT
    assert "already exists" in info.value.detail and "key-0123456789" not in info.value.detail


async def test_smtp_has_no_domain_api() -> None:
    async with httpx.AsyncClient() as http:
        with pytest.raises(DomainsUnsupported):
            domain_provider("smtp", {}, {}, http)
