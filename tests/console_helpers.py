"""Console test helpers: users, signed-in browsers (httpx clients over the app) and the
CSRF token a page carries.

``add_user`` stores, for ``PASSWORD``, one Argon2id hash the process computed once
(with the product's parameters, through ``homing.crypto.hash_password``) instead of a
new one per user: a hash is ~0.25 s of CPU on four lanes, and a test that adds a user
is about the console, not the hash (tests/unit/test_crypto.py is). Signing in still
verifies it with Argon2 as the product does; any other password is hashed afresh."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import cache

import httpx

from homing import crypto
from homing.api.app import create_app
from homing.domain.people import User
from homing.managers import people
from homing.managers.audit import CLI_ACTOR
from homing.models import Role
from homing.services import Services

PASSWORD = "correct horse battery staple"
_CSRF = re.compile(r'name="csrf" value="([0-9a-f]{64})"')


# The name the people manager hashes a new user's password by.
_HASHER = "hash_password"


@cache
def _hash_of_password() -> str:
    return crypto.hash_password(PASSWORD)


def _hash(password: str) -> str:
    return _hash_of_password() if password == PASSWORD else crypto.hash_password(password)


@contextmanager
def _password_hashed_once() -> Iterator[None]:
    """``homing.managers.people`` hashes ``PASSWORD`` with the process's one hash while
    the block runs (an add running beside another leaves the first to put it back)."""
    if getattr(people, _HASHER) is _hash:
        yield
        return
    setattr(people, _HASHER, _hash)
    try:
        yield
    finally:
        setattr(people, _HASHER, crypto.hash_password)


async def add_user(
    services: Services,
    email: str,
    tenant_id: str | None = None,
    role: Role = Role.OWNER,
    *,
    operator: bool = False,
) -> User:
    """A console user with ``PASSWORD``: a member of ``tenant_id`` or an operator."""
    with _password_hashed_once():
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
