"""The webhook page's recent deliveries: the tenant's webhook jobs, newest first, with
endpoint host, event, status, attempts and the last answer, each linking to its
message page, paginated; another tenant's deliveries never shown."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from homing.models import Role
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient, deliver, job, make_tenant
from tests.console_helpers import add_user, browser, sign_in
from tests.fixtures import settings_for
from tests.webhooks.conftest import send_webhook
from tests.webhooks.receiver import Receiver


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(
        database_url, tmp_path, SecretStr(secret_key), webhook_allowed_networks="127.0.0.0/8"
    )


def _row(html: str, job_id: str) -> str:
    found = re.search(r'<tr>\s*<td><a href="/t/[^"]+/messages/' + job_id + r'".*?</tr>', html, re.S)
    assert found, html
    return found.group(0)


async def test_deliveries_are_listed_newest_first_with_their_last_answer(
    services: Services, tenant: TenantClient, api: httpx.AsyncClient, receiver: Receiver
) -> None:
    first = await send_webhook(tenant, f"{receiver.url}/hooks", event_type="order.paid")
    await deliver(services)
    second = await send_webhook(tenant, f"{receiver.url}/hooks", event_type="order.shipped")
    other = await make_tenant(services, api, "other")
    theirs = await send_webhook(other, f"{receiver.url}/theirs")
    await add_user(services, "vic@example.com", tenant.tenant_id, Role.VIEWER)
    async with browser(services) as client:
        await sign_in(client, "vic@example.com")
        page = await client.get(f"/t/{tenant.tenant_id}/webhooks")
    assert page.status_code == 200
    done, waiting = _row(page.text, first), _row(page.text, second)
    assert page.text.index(waiting) < page.text.index(done)
    assert "<code>127.0.0.1</code>" in done and "order.paid" in done
    assert (await job(tenant, first))["status"].lower() in done and "HTTP 200" in done
    assert "order.shipped" in waiting and "pending" in waiting
    assert theirs not in page.text


async def test_deliveries_page_by_cursor(services: Services, tenant: TenantClient) -> None:
    sent = [await send_webhook(tenant, f"http://127.0.0.1:9/hooks/{n}") for n in range(27)]
    await add_user(services, "vic@example.com", tenant.tenant_id, Role.VIEWER)
    async with browser(services) as client:
        await sign_in(client, "vic@example.com")
        first = await client.get(f"/t/{tenant.tenant_id}/webhooks")
        older = re.search(r'<a href="([^"]+)">Older deliveries</a>', first.text)
        assert older and sent[-1] in first.text and sent[1] not in first.text
        second = await client.get(older.group(1))
        bad = await client.get(f"/t/{tenant.tenant_id}/webhooks", params={"cursor": "x" * 37})
    assert sent[0] in second.text and sent[1] in second.text and sent[-1] not in second.text
    assert bad.status_code == 422
