"""API fixtures: the ``tenant`` here can send (an email and an SMS provider stored), as
the accept routes refuse a send no provider could deliver (tests/api/test_undeliverable.py
uses a tenant without)."""

from __future__ import annotations

import httpx
import pytest

from homing.services import Services
from tests.conftest import TenantClient, make_tenant


@pytest.fixture
async def tenant(services: Services, api: httpx.AsyncClient) -> TenantClient:
    return await make_tenant(services, api, "acme", provider=True)
