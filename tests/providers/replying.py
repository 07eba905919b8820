"""An adapter test's HTTP client: every request recorded and answered with one reply.

Adapter tests pin the request an adapter makes and its reading of each answer, so the
client is an ``httpx.MockTransport`` (end-to-end tests use the sandbox over real HTTP).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

# What the provider answers: a response, or a transport error raised instead.
Reply = httpx.Response | Exception


@asynccontextmanager
async def replying(reply: Reply) -> AsyncIterator[tuple[httpx.AsyncClient, list[httpx.Request]]]:
    """A client answering every request with ``reply`` (or raising it), and the requests."""
    requests: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        if isinstance(reply, Exception):
            raise reply
        return reply

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        yield http, requests
