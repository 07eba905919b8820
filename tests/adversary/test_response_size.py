"""An endpoint answers with an endless body (issue 12, item 4).

A loopback server answers a credential check, a send and a webhook with a 300 MB body,
generated as it is sent and stopped as soon as the client hangs up. A real ``homing
run`` process must read at most a small cap of each, close, and classify the answer
from its status: its resident memory stays far below the body's size, and each
server sees the client leave long before the body ends.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx

from tests.adversary.endpoints_helpers import LoopbackServer, answer, read_head
from tests.processes import HomingProcess, cli_tenant, eventually, free_port

HUGE = 300 * 1024 * 1024
CHUNK = b"x" * (256 * 1024)
MEMORY_BOUND = 150 * 1024 * 1024  # far below one copy of the body


class EndlessBodies:
    """Routes by path; every answer but the good credential check is HUGE bytes long."""

    def __init__(self) -> None:
        self.sent: dict[str, int] = {}

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await read_head(reader)
        path = head.split(b" ", 2)[1].decode()
        if path.startswith("/good/v3/scopes"):
            writer.write(answer("200 OK", b'{"scopes": ["mail.send"]}'))
            await writer.drain()
            return
        status = "401 Unauthorized" if "/huge/" in path else "500 Internal Server Error"
        status = "200 OK" if path.startswith("/hook") else status
        writer.write(
            f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {HUGE}\r\n\r\n".encode()
        )
        self.sent[path] = 0
        while self.sent[path] < HUGE:
            writer.write(CHUNK)
            await writer.drain()  # raises once the client has gone
            self.sent[path] += len(CHUNK)


def _memory(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} for {pid}")


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        "HOMING_DATA_DIR": str(tmp_path / "data"),
        "HOMING_POLL_INTERVAL_SECONDS": "0.05",
        "HOMING_MAX_ATTEMPTS": "1",
        "HOMING_PROVIDER_TIMEOUT_SECONDS": "20",
        "HOMING_PROVIDER_ALLOWED_NETWORKS": "127.0.0.0/8",
        "HOMING_WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8",
        "HOMING_LOG_LEVEL": "warning",
    }


def _provider(base_url: str) -> dict[str, Any]:
    credentials = {"api_key": "SG.huge_123456"}
    return {"channel": "email", "provider": "sendgrid", "credentials": credentials,
            "config": {"base_url": base_url}}  # fmt: skip


async def _healthy(client: httpx.AsyncClient) -> bool:
    try:
        return (await client.get("/healthz")).status_code == 200
    except httpx.TransportError:
        return False


async def _finished(client: httpx.AsyncClient, job_id: str) -> dict[str, Any] | None:
    job: dict[str, Any] = (await client.get(f"/v1/jobs/{job_id}")).json()
    return job if job["status"] in ("COMPLETED", "FAILED") else None


async def test_an_endless_response_body_is_read_up_to_a_cap(tmp_path: Path) -> None:
    env = _env(tmp_path)
    tenant = cli_tenant(env, tmp_path)
    port = free_port()
    homing = HomingProcess(["run", "--port", str(port)], env, tmp_path / "run.log").start()
    assert homing.proc is not None
    bodies = EndlessBodies()
    try:
        async with (
            LoopbackServer(bodies) as server,
            httpx.AsyncClient(
                base_url=f"http://127.0.0.1:{port}",
                headers={"Authorization": f"Bearer {tenant['api_key']}"},
                timeout=60,
            ) as client,
        ):
            await eventually(lambda: _healthy(client), what="homing run to listen")
            baseline = _memory(homing.proc.pid, "VmRSS")

            refused = await client.post("/v1/providers", json=_provider(f"{server.url}/huge"))
            assert refused.status_code == 422, refused.text
            assert refused.json()["error"]["code"] == "invalid_credentials", refused.text
            assert len(refused.content) < 2048

            good = await client.post("/v1/providers", json=_provider(f"{server.url}/good"))
            assert good.status_code == 201, good.text
            email = {"to": "ada@example.com", "from": "a@acme.example", "subject": "s",
                     "text": "t"}  # fmt: skip
            sent = (await client.post("/v1/notifications/email", json=email)).json()
            hook = {"url": f"{server.url}/hook", "payload": {"n": 1}}
            posted = (await client.post("/v1/notifications/webhook", json=hook)).json()

            failed = await eventually(lambda: _finished(client, sent["id"]), 60, "the send")
            assert failed["status"] == "FAILED", failed
            assert [a["status_code"] for a in failed["attempts"]] == [500], failed
            assert len(json.dumps(failed)) < 8192
            delivered = await eventually(lambda: _finished(client, posted["id"]), 60, "hook")
            assert delivered["status"] == "COMPLETED", delivered
            assert await _healthy(client)
            peak = _memory(homing.proc.pid, "VmHWM")
    finally:
        assert homing.stop() == 0, homing.output()
    assert peak - baseline < MEMORY_BOUND, f"RSS grew by {(peak - baseline) >> 20} MiB"
    assert set(bodies.sent) == {"/huge/v3/scopes", "/good/v3/mail/send", "/hook"}
    for path, size in bodies.sent.items():
        assert size < HUGE // 4, f"{path}: the client read {size >> 20} MiB"
