"""A sandbox for the vendors' own SDKs: on a loopback port, with every other address
refused in this process (``tests.netguard``), so no SDK can reach its real vendor."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from homing.sandbox import SandboxServer
from tests.netguard import loopback_only


@pytest.fixture
async def guarded_sandbox(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[SandboxServer]:
    """The sandbox on 127.0.0.1; any name or address outside loopback is refused."""
    loopback_only(monkeypatch)
    async with SandboxServer(port=0, smtp_port=None) as server:
        yield server
