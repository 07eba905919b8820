"""Template data never becomes markup in a chat message of ``"format": "html"``: it is
autoescaped as it is in an email's HTML, while the template's own markup stays. The
real API and worker, the sandbox's Telegram over real HTTP."""

from __future__ import annotations

import pytest

from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.chat_helpers import register_telegram
from tests.conftest import TenantClient
from tests.e2e.conftest import Sandbox, deliver, job
from tests.e2e.test_templates import make_template, publish

pytestmark = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)


async def _sent(tenant: TenantClient, services: Services, data: dict[str, str]) -> str:
    response = await tenant.post(
        "/v1/notifications/chat", json={"to": "4242", "template": "alert", "data": data}
    )
    assert response.status_code == 202, response.text
    assert await deliver(services) == 1
    assert (await job(tenant, response.json()["id"]))["status"] == "COMPLETED"
    return response.json()["id"]  # type: ignore[no-any-return]


async def test_data_in_an_html_chat_part_arrives_escaped(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register_telegram(tenant, sandbox)
    await make_template(tenant, "alert")
    await publish(tenant, "alert", chat={"text": "<i>Hi</i> {{ name }}", "format": "html"})
    await _sent(tenant, services, {"name": '<b>x</b> & <a href="https://evil.example">y</a>'})
    [chat] = await sb.messages("telegram")
    assert chat["subject"] == "HTML"  # the parse mode
    assert chat["text"] == (
        "<i>Hi</i> &lt;b&gt;x&lt;/b&gt; &amp; "
        "&lt;a href=&#34;https://evil.example&#34;&gt;y&lt;/a&gt;"
    )


@pytest.mark.parametrize("fmt", ["plain", "markdown"])
async def test_data_in_other_chat_parts_is_left_as_it_is(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, fmt: str
) -> None:
    await register_telegram(tenant, sandbox)
    await make_template(tenant, "alert")
    await publish(tenant, "alert", chat={"text": "Hi {{ name }}", "format": fmt})
    await _sent(tenant, services, {"name": "<b>x</b>"})
    [chat] = await sb.messages("telegram")
    assert chat["text"] == "Hi <b>x</b>"
