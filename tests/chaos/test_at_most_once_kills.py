"""An ``at_most_once`` message whose worker dies after the vendor took it is not resent.

A real ``homing worker`` calls the sandbox, which records each message and then never
answers (``accept_then_hang``); the worker is SIGKILLed and another one started. The
lease runs out and the second worker claims the jobs again, one attempt further, with
no outcome recorded for the first claim: that call may have reached the vendor.

- SendGrid takes no idempotency key, so the job is not sent again: it ends FAILED
  ``uncertain``, and ``GET /v1/jobs/{id}`` shows the lost call as ``unknown``;
- Resend takes the job's ``Idempotency-Key``, so calling again is a replay: the sandbox
  (as Resend does) answers with the first result and records no second message, and
  the job completes, its history showing the lost call and then the success.

Both databases: the fence is decided from the claim's own columns, on either.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient, job, make_tenant
from tests.e2e.conftest import Sandbox, register, send
from tests.processes import HomingProcess, eventually, process_env

TERMINAL = {"COMPLETED", "FAILED"}


async def _terminal(tenant: TenantClient, job_id: str) -> dict[str, Any] | None:
    body = await job(tenant, job_id)
    return body if body["status"] in TERMINAL else None


async def _taken(sb: Sandbox, providers: tuple[str, ...]) -> bool:
    taken = Counter(m["provider"] for m in await sb.messages())
    return all(taken[p] >= 1 for p in providers)


async def test_a_worker_killed_after_the_vendor_took_an_at_most_once_message_never_resends_it(
    services: Services,
    api: httpx.AsyncClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    settings: Settings,
    secret_key: str,
    tmp_path: Path,
) -> None:
    plain = await make_tenant(services, api, "plain")
    replaying = await make_tenant(services, api, "replaying")
    await register(plain, sandbox, "sendgrid", 1)
    await register(replaying, sandbox, "resend", 1)
    for provider in ("sendgrid", "resend"):
        await sb.fault(provider, mode="accept_then_hang", count=1)
    once = {"delivery": "at_most_once"}
    sent = await send(plain, subject="sent once", **once)
    replayed = await send(replaying, subject="replayed", **once)
    env = process_env(
        settings,
        secret_key,
        HOMING_LEASE_SECONDS="3",
        HOMING_PROVIDER_TIMEOUT_SECONDS="120",
        HOMING_PROVIDER_DEADLINE_SECONDS="120",
    )
    first = HomingProcess(["worker"], env, tmp_path / "worker1.log").start()
    try:
        await eventually(
            lambda: _taken(sb, ("sendgrid", "resend")),
            timeout=60,
            what="the vendors to take both messages",
        )
    finally:
        first.kill()  # after the vendors took them, before any answer
    second = HomingProcess(["worker"], env, tmp_path / "worker2.log").start()
    try:
        failed = await eventually(lambda: _terminal(plain, sent), timeout=60, what="the end")
        done = await eventually(lambda: _terminal(replaying, replayed), timeout=60, what="replay")
    finally:
        assert second.stop() == 0, second.output()[-3000:]
    messages = Counter((m["provider"], m["job_id"]) for m in await sb.messages())
    assert messages == Counter({("sendgrid", sent): 1, ("resend", replayed): 1})
    assert (failed["status"], failed["error_class"]) == ("FAILED", "uncertain"), failed
    assert [(a["number"], a["provider"], a["outcome"]) for a in failed["attempts"]] == [
        (1, "sendgrid", "unknown")
    ]
    assert done["status"] == "COMPLETED", done
    assert [(a["number"], a["outcome"]) for a in done["attempts"]] == [
        (1, "unknown"),
        (2, "success"),
    ]
    keys = Counter(m["idempotency_key"] for m in await sb.messages("resend"))
    assert keys == Counter({f"homing-{replayed}": 1})
