"""Chat pacing: one Telegram bot broadcasts while single CRITICAL messages arrive.

    python -m bench.chat_pacing [--messages 5000] [--chats 500] [--record]

One bot (one Telegram account of one tenant) broadcasts MESSAGES LOW messages to CHATS
chats (a tenth of them groups: negative ids), while a CRITICAL message to a chat
outside the broadcast (a bot answering a user) is accepted every PROBE_EVERY seconds.
The sandbox runs in its own process and enforces Telegram's rules (30 a second per
bot, one a second per chat, 20 a minute per group), answering 429 with
``retry_after`` and counting every 429 per rule. The run is made twice, on SQLite with
one in-process worker: with the vendor preset (Homing paces), then the same broadcast
with pacing off for the account (``rate_rules: []``), the baseline. Printed per run:
the broadcast's duration, the 429s the sandbox answered per rule, and the CRITICAL
messages' wait (accept → the sandbox's receipt). Target: no 429 with pacing, CRITICAL
p99 under one second.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from bench.common import (
    append_section,
    percentile,
    sandbox_process,
    say,
    services_for,
)
from homing.channels import Channel
from homing.domain.accepting import NewJob
from homing.domain.dead_letters import DeadLetterFilter
from homing.managers.accounts import NewProvider
from homing.models import Plan, Priority, Queue
from homing.services import Services

TOKEN = "700000001:AAHbenchbenchbenchbenchbenchbench"
PROBE_EVERY = 2.0
PROBE_CHAT_BASE = 900_000


def _job(tenant_id: str, to: str, text: str, priority: Priority) -> NewJob:
    payload = {"to": to, "text": text, "format": "plain", "kind": "telegram"}
    return NewJob(
        tenant_id=tenant_id,
        channel=Channel.CHAT,
        queue=Queue.CHAT,
        priority=priority,
        payload=payload,
    )


def _chat(n: int, chats: int) -> str:
    """Chat ``n`` of the broadcast: every tenth a group (negative id)."""
    index = n % chats
    return str(-(100_000 + index)) if index % 10 == 0 else str(100_000 + index)


async def _bot(services: Services, sandbox_url: str, paced: bool) -> str:
    tenant, _ = await services.tenants.create("bench-bot", Plan.STARTUP)
    config: dict[str, Any] = {"base_url": f"{sandbox_url}/telegram"}
    if not paced:
        config["rate_rules"] = []
    await services.accounts.register(
        NewProvider(
            tenant_id=tenant.id,
            channel=Channel.CHAT,
            provider="telegram",
            credentials={"bot_token": TOKEN},
            config=config,
            priority=1,
        )
    )
    return tenant.id


async def _broadcast(services: Services, tenant_id: str, messages: int, chats: int) -> None:
    jobs = [_job(tenant_id, _chat(n, chats), f"news {n}", Priority.LOW) for n in range(messages)]
    for start in range(0, messages, 1000):
        await services.batches.accept_many(jobs[start : start + 1000])


async def _stats(http: httpx.AsyncClient) -> dict[str, Any]:
    stats: dict[str, Any] = (await http.get("/_sandbox/stats")).json()
    return stats


async def dead_letters(services: Services, tenant_id: str, most: int) -> int:
    """How many of the tenant's jobs were dead-lettered (a job that drew 429 after 429
    gives up at the most calls one job may make: ``HOMING_MAX_PROVIDER_CALLS_PER_JOB``)."""
    found = DeadLetterFilter(tenant_id=tenant_id)
    matches = await services.dead_letter_store.matching(found, None, after=None, limit=most)
    return len(matches)


async def _probe(
    services: Services, tenant_id: str, http: httpx.AsyncClient, messages: int
) -> dict[str, float]:
    """Accept a CRITICAL message every PROBE_EVERY seconds until every message of the
    broadcast and the probes was delivered or dead-lettered; each probe's accept time by
    its text."""
    accepted: dict[str, float] = {}
    n = 0
    while (await _stats(http))["received"]["telegram"] + await dead_letters(
        services, tenant_id, messages + len(accepted)
    ) < messages + len(accepted):
        text = f"answer {n}"
        job = _job(tenant_id, str(PROBE_CHAT_BASE + n), text, Priority.CRITICAL)
        accepted[text] = time.time()
        await services.jobs.accept(job)
        services.wakeup.notify()
        n += 1
        await asyncio.sleep(PROBE_EVERY)
    return accepted


async def _waits(http: httpx.AsyncClient, accepted: dict[str, float]) -> list[float]:
    received = (await http.get("/_sandbox/messages", params={"provider": "telegram"})).json()
    at = {m["text"]: datetime.fromisoformat(m["received_at"]).timestamp() for m in received}
    return [at[text] - start for text, start in accepted.items() if text in at]


async def one_run(paced: bool, messages: int, chats: int, port: int, margin: float) -> str:
    """One broadcast with probes; its line for the report."""
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        url = f"sqlite+aiosqlite:///{workdir / 'bench.db'}"
        services = await services_for(url, workdir, pacing_margin_seconds=margin)
        try:
            async with (
                sandbox_process(port) as sandbox,
                httpx.AsyncClient(base_url=sandbox.url, timeout=30) as http,
            ):
                tenant_id = await _bot(services, sandbox.url, paced)
                await _broadcast(services, tenant_id, messages, chats)
                stop = asyncio.Event()
                started = time.perf_counter()
                worker = asyncio.create_task(services.worker().run(stop=stop))
                accepted = await _probe(services, tenant_id, http, messages)
                duration = time.perf_counter() - started
                await asyncio.sleep(3)  # the last probe's delivery
                stop.set()
                await worker
                stats = await _stats(http)
                waits = await _waits(http, accepted)
                lost = await dead_letters(services, tenant_id, messages + len(accepted))
        finally:
            await services.aclose()
    return _line(paced, messages, chats, duration, stats, waits, len(accepted), lost) + (
        f"; margin {margin:g} s" if paced else ""
    )


def _line(
    paced: bool,
    messages: int,
    chats: int,
    duration: float,
    stats: dict[str, Any],
    waits: list[float],
    probes: int,
    lost: int,
) -> str:
    refused = stats["rules"]["refused"]
    telegram = {k.split(".")[1]: v for k, v in refused.items() if k.startswith("telegram.")}
    total = sum(telegram.values())
    rules = ", ".join(f"{name} {count}" for name, count in telegram.items())
    if waits:
        p50, p99, worst = (percentile(waits, p) * 1000 for p in (50, 99, 100))
        critical = (
            f"CRITICAL ({len(waits)}/{probes}) p50 {p50:.0f} ms p99 {p99:.0f} ms max {worst:.0f} ms"
        )
    else:
        critical = f"CRITICAL: none of {probes} delivered"
    name = "preset pacing" if paced else "pacing off (baseline)"
    rate = messages / duration
    return (
        f"chat_pacing sqlite, {name}: {messages} LOW to {chats} chats in {duration:.1f} s "
        f"({rate:.1f} msg/s, {stats['requests']['telegram']} requests); sandbox 429s "
        f"{total} ({rules}); dead letters {lost}; {critical}"
    )


async def run(messages: int, chats: int, port: int, margin: float) -> list[str]:
    lines = []
    for paced in (True, False):
        say(f"broadcast of {messages} with pacing {'on' if paced else 'off'}")
        line = await one_run(paced, messages, chats, port, margin)
        say(line)
        lines.append(line)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--chats", type=int, default=500)
    parser.add_argument("--port", type=int, default=18047)
    parser.add_argument("--margin", type=float, default=0.5, help="HOMING_PACING_MARGIN_SECONDS")
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    lines = asyncio.run(run(args.messages, args.chats, args.port, args.margin))
    for line in lines:
        print(line, flush=True)
    if args.record:
        command = (
            f"python -m bench.chat_pacing --messages {args.messages} --chats {args.chats} "
            f"--margin {args.margin:g}"
        )
        append_section("chat_pacing", command + " --record", lines)


if __name__ == "__main__":
    main()
