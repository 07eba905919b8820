"""Run a Node.js receiver (``design.mjs``, ``notifykit.mjs``) as a real process."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import httpx

from tests.webhooks.receivers import Verdict

NODE = "/usr/bin/node"
HERE = Path(__file__).parent
START_SECONDS = 10


class NodeReceiver:
    """A started receiver: its URL, and what it received (from its ``/_log``)."""

    def __init__(self, kind: str, port: int) -> None:
        self.kind = kind
        self.url = f"http://127.0.0.1:{port}"

    async def log(self) -> list[Verdict]:
        async with httpx.AsyncClient(trust_env=False) as client:
            response = await client.get(f"{self.url}/_log")
        response.raise_for_status()
        return [
            Verdict(e["receiver"], e["status"], e["headers"], base64.b64decode(e["body"]))
            for e in response.json()
        ]


@contextlib.asynccontextmanager
async def node_receiver(kind: str, secret: str) -> AsyncIterator[NodeReceiver]:
    """Start ``<kind>.mjs`` holding ``secret``; stop it afterwards. Fails (never
    skips) when Node.js is missing: these receivers are the point of the test."""
    assert os.access(NODE, os.X_OK), f"{NODE} is needed to run the Node.js receivers"
    env = {"PATH": os.environ.get("PATH", ""), "WEBHOOK_SECRET": secret}
    process = await asyncio.create_subprocess_exec(
        NODE, str(HERE / f"{kind}.mjs"), env=env, stdout=asyncio.subprocess.PIPE
    )
    try:
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), START_SECONDS)
        assert line, f"the {kind} receiver exited before listening"
        yield NodeReceiver(kind, json.loads(line)["port"])
    finally:
        if process.returncode is None:
            process.terminate()
        await process.wait()
