"""A hostile tenant (or vendor) against the chat channel: huge texts, bogus chat ids,
a Slack webhook URL into the network, a bot token leaking through an answer, and one
tenant's broadcast in the way of another tenant's messages. Hostile vendor answers
(huge bodies, a retry_after of 10**12) are pinned on the adapters in
``tests/providers/test_telegram.py`` and ``test_slack.py`` and bounded here end to end.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from homing.clock import ManualClock
from homing.errors import EndpointRefused
from homing.models import Plan
from homing.providers.endpoints import EndpointPolicy
from homing.providers.webhook.ssrf import IPNetwork
from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.adversary.endpoints_helpers import NetworkRecorder
from tests.chat_helpers import (
    BOT_TOKEN,
    bot_token,
    register_slack,
    register_telegram,
    send_chat,
)
from tests.conftest import TenantClient, make_tenant
from tests.fixtures import Sandbox


class _NoSandbox:
    def serves(self, scheme: str | None, host: str, port: int | None) -> bool:
        return False


def _policy(*networks: IPNetwork) -> EndpointPolicy:
    return EndpointPolicy(tuple(networks), _NoSandbox())


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://10.0.0.1/services/T/B/x", "not_official"),
        ("https://169.254.169.254/services/T/B/x", "not_official"),
        ("https://[fd00::1]/services/T/B/x", "not_official"),
        ("http://hooks.slack.com/services/T/B/x", "https_required"),
        ("https://hooks.slack.com:8443/services/T/B/x", "port"),
        ("https://hooks.slack.com.evil.example/services/T/B/x", "not_official"),
        ("https://api.telegram.org/services/T/B/x", "other_vendor"),
        ("https://u:p@hooks.slack.com/services/T/B/x", "credentials"),
        ("https://hooks.slack.com/", "malformed"),
        ("https://hooks.slack.com/services/T/B/x#frag", "malformed"),
        ("https://0x0a000001/services/T/B/x", "host"),
        ("not a url", "scheme"),
    ],
)
def test_a_slack_webhook_url_outside_slack_is_refused_by_the_classifier(
    url: str, reason: str
) -> None:
    with pytest.raises(EndpointRefused) as raised:
        _policy().check_account("slack", {"webhook_url": url}, {})
    assert raised.value.details["reason"] == reason
    assert "10.0.0.1" not in raised.value.message


def test_a_private_slack_url_stays_refused_outside_the_allowed_networks() -> None:
    import ipaddress

    policy = _policy(ipaddress.ip_network("10.0.0.0/8"))
    policy.check_account("slack", {"webhook_url": "http://10.1.2.3/services/T/B/x"}, {})
    with pytest.raises(EndpointRefused):
        policy.check_account("slack", {"webhook_url": "http://169.254.169.254/services/x"}, {})


def test_the_official_slack_host_passes() -> None:
    _policy().check_account("slack", {"webhook_url": "https://hooks.slack.com/services/T/B/x"}, {})


async def test_a_slack_url_into_the_network_is_refused_at_registration_without_a_connection(
    tenant: TenantClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    net = NetworkRecorder({"internal.example": "10.0.0.1"}).install(monkeypatch)
    for url in ("http://internal.example/services/T/B/x", "https://10.0.0.1/services/T/B/x"):
        response = await tenant.post(
            "/v1/providers",
            json={"channel": "chat", "provider": "slack", "credentials": {"webhook_url": url}},
        )
        assert response.status_code == 422, response.text
        assert response.json()["error"]["code"] == "endpoint_refused"
    assert net.outside == []


async def test_a_telegram_base_url_into_the_network_is_refused(
    tenant: TenantClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    net = NetworkRecorder({}).install(monkeypatch)
    response = await tenant.post(
        "/v1/providers",
        json={
            "channel": "chat",
            "provider": "telegram",
            "credentials": {"bot_token": BOT_TOKEN},
            "config": {"base_url": "http://169.254.169.254/telegram"},
        },
    )
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "endpoint_refused"
    assert net.outside == []


async def test_a_text_past_telegrams_limit_is_refused(
    tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register_telegram(tenant, sandbox)
    assert await send_chat(tenant, text="x" * 4096)
    for text in ("x" * 4097, "x" * 5_000_000, "", "nul\x00byte"):
        response = await tenant.post("/v1/notifications/chat", json={"to": "1", "text": text})
        # Past the body limit the request is refused before it is read (413).
        assert response.status_code in (413, 422), (len(text), response.text)
        assert response.status_code == 422 or len(text) > 1_000_000


@pytest.mark.parametrize(
    "to",
    [
        "12ab",
        "-",
        "@ab",
        "1" * 21,
        "../getMe",
        "1/sendMessage",
        "@" + "a" * 40,
        " 123",
        "123\n",
        "١٢٣",  # Arabic-Indic digits: not an ASCII id
        "9" * 101,
    ],
)
async def test_a_bogus_telegram_chat_id_is_refused(
    tenant: TenantClient, sandbox: SandboxServer, to: str
) -> None:
    await register_telegram(tenant, sandbox)
    response = await tenant.post("/v1/notifications/chat", json={"to": to, "text": "hi"})
    assert response.status_code == 422, response.text


async def test_a_bogus_slack_channel_and_html_are_refused(
    tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register_slack(tenant, sandbox)
    for body in ({"to": "#a b", "text": "x"}, {"to": "#ok", "text": "x", "format": "html"}):
        response = await tenant.post("/v1/notifications/chat", json=body)
        assert response.status_code == 422, response.text


async def test_chat_without_a_chat_provider_is_refused(tenant: TenantClient) -> None:
    response = await tenant.post("/v1/notifications/chat", json={"to": "1", "text": "x"})
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "no_provider"


async def test_the_bot_token_leaks_through_no_answer_or_record(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    secret = BOT_TOKEN.split(":")[1]
    await sb.fault("telegram", status=500, scope="check", count=1)
    refused = await tenant.post(
        "/v1/providers",
        json={
            "channel": "chat",
            "provider": "telegram",
            "credentials": {"bot_token": BOT_TOKEN},
            "config": {"base_url": sandbox.provider_base_url("telegram")},
        },
    )
    assert refused.status_code == 422 and secret not in refused.text
    account = await register_telegram(tenant, sandbox)
    assert secret not in str(account)
    await sb.fault("telegram", status=502, count=1)
    await sb.fault("telegram", mode="timeout", count=1)
    job_id = await send_chat(tenant)
    with caplog.at_level("DEBUG"):
        for _ in range(2):
            await services.worker().run(once=True)
            clock.advance(120)
    seen = [(await tenant.get(f"/v1/jobs/{job_id}")).text]
    seen.append((await tenant.get("/v1/providers")).text)
    seen.append((await sb.http.get("/_sandbox/stats")).text)
    seen.append(str(await sb.messages("telegram")))
    seen.append(caplog.text)
    for text in seen:
        assert secret not in text


async def test_one_tenants_broadcast_does_not_starve_another_tenants_chat(
    services: Services, api: httpx.AsyncClient, sandbox: SandboxServer
) -> None:
    loud = await make_tenant(services, api, "loud", Plan.STARTUP)
    quiet = await make_tenant(services, api, "quiet", Plan.STARTUP)
    await register_telegram(loud, sandbox, bot_token(1))
    await register_telegram(quiet, sandbox, bot_token(2))
    for i in range(120):
        await send_chat(loud, to=str(10_000 + i), priority="LOW")
    answer = await send_chat(quiet, to="4242")
    await services.worker().run(once=True)
    body: dict[str, Any] = (await quiet.get(f"/v1/jobs/{answer}")).json()
    assert body["status"] == "COMPLETED"
