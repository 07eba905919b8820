"""Console test helpers: users, signed-in browsers (httpx clients over the app) and the
CSRF token a page carries."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

from homing.api.app import create_app
from homing.domain.people import User
from homing.managers.audit import CLI_ACTOR
from homing.models import Role
from homing.services import Services

PASSWORD = "correct horse battery staple"
_CSRF = re.compile(r'name="csrf" value="([0-9a-f]{64})"')


async def add_user(
    services: Services,
    email: str,
    tenant_id: str | None = None,
    role: Role = Role.OWNER,
    *,
    operator: bool = False,
) -> User:
    """A console user with ``PASSWORD``: a member of ``tenant_id`` or an operator."""
    return await services.people.add_user(
        email, PASSWORD, actor=CLI_ACTOR, tenant_id=tenant_id, role=role, operator=operator
    )


def csrf_of(html: str) -> str:
    """The CSRF token of the first form of a page (asserted present)."""
    found = _CSRF.search(html)
    assert found, "no CSRF token on the page"
    return found.group(1)


@asynccontextmanager
async def browser(services: Services) -> AsyncIterator[httpx.AsyncClient]:
    """A client with cookies of its own, over an app of ``services``."""
    transport = httpx.ASGITransport(app=create_app(services))
    async with httpx.AsyncClient(transport=transport, base_url="http://homing.test") as client:
        yield client


async def sign_in(client: httpx.AsyncClient, email: str, password: str = PASSWORD) -> str:
    """Sign ``client`` in (asserting it worked); the CSRF token of its session."""
    response = await client.post("/sign-in", data={"email": email, "password": password})
    assert response.status_code == 303, response.text
    page = await client.get("/", follow_redirects=True)
    assert page.status_code == 200, page.text
    return csrf_of(page.text)
