"""A tenant at one of its configuration bounds, in the console: the create form is
shown again with the refusal beside it (403, what was typed kept, never the generic
error page), nothing is stored, and no vendor is asked."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from homing.models import Role
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient, stored_provider
from tests.console.test_dead_ends import GENERIC, field_error, value_of
from tests.console_helpers import add_user, browser, sign_in
from tests.fixtures import settings_for


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(
        database_url,
        tmp_path,
        secret_key,
        max_api_keys_per_tenant=2,
        max_providers_per_tenant=1,
    )


async def test_a_key_past_the_bound_shows_the_form_again_with_the_bound(
    services: Services, tenant: TenantClient
) -> None:
    assert (await tenant.post("/v1/api-keys", json={"name": "ci"})).status_code == 201
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        refused = await client.post(
            f"/t/{tenant.tenant_id}/api-keys", data={"csrf": csrf, "name": "one more"}
        )
    assert refused.status_code == 403 and GENERIC not in refused.text
    said = field_error(refused.text, "name")
    assert said == "This tenant holds as many API keys as it may (2): revoke one to make room."
    assert value_of(refused.text, "name") == "one more"
    assert [k.name for k in await services.keys.live(tenant.tenant_id)] == ["default", "ci"]


async def test_a_provider_past_the_bound_is_refused_before_the_vendor_is_asked(
    services: Services, tenant: TenantClient
) -> None:
    await stored_provider(services, tenant.tenant_id)
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    # Nothing listens there: a credential check would be refused as unreachable (422).
    nowhere = "http://127.0.0.1:9"
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        refused = await client.post(
            f"/t/{tenant.tenant_id}/providers/new",
            data={
                "csrf": csrf,
                "vendor": "resend",
                "api_key": "re_bound_4f9a",
                "base_url": nowhere,
            },
        )
    assert refused.status_code == 403 and GENERIC not in refused.text
    alert = re.search(r'role="alert">(.*?)</p>', refused.text, re.S)
    assert alert is not None
    assert html.unescape(alert.group(1)) == (
        "This tenant holds as many provider accounts as it may (1): remove one to make room."
    )
    assert f'value="{nowhere}"' in refused.text and "re_bound_4f9a" not in refused.text
    assert len(await services.providers.all(tenant.tenant_id)) == 1
