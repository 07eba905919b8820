"""CPU per accepted email inside the API process, without the network (PostgreSQL + Redis).

    python -m bench.accept_cpu [--requests N] [--clients C] [--template] [--record]

Builds the services and the ASGI app in this process and drives
``POST /v1/notifications/email`` through the app itself from C concurrent tasks (an
Idempotency-Key each, full admission: rate limit and monthly quota raised so that they
admit everything but are still checked). Reports requests/s and this process's CPU
time per request: everything the API does for an accept (admission, validation, the
group-commit transaction, the response) but not HTTP parsing or sockets, so the figure
moves with Homing's code rather than with the machine's network stack or a client
sharing the cores. PostgreSQL and Redis do their share in their own processes.

``--template`` sends the same email by a published template (subject, HTML with a
style block to inline, text derived from it) with per-request data instead: the render
runs in the render pool's worker processes, so their CPU is not in the per-request
figure, and requests/s is the number to compare (docs/templates.md).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import orjson

from bench.common import (
    append_section,
    delete_redis_keys,
    drop_postgres,
    fresh_postgres,
    services_for,
    store_resend,
)
from bench.load import MESSAGE
from homing.api.app import create_app
from homing.models import Plan

REDIS_URL = os.environ.get("HOMING_BENCH_REDIS_URL", "redis://127.0.0.1:6379/13")
PATH = "/v1/notifications/email"
TEMPLATED = {
    "to": MESSAGE["to"],
    "from": MESSAGE["from"],
    "template": "welcome",
    "data": {"name": "Ada", "url": "https://example.com/start"},
}
WELCOME = {
    "email": {
        "subject": "Hi {{ name }}",
        "html": "<style>p { color: #333 }</style>"
        '<p>Hello {{ name }}, <a href="{{ url }}">start here</a>.</p>',
    }
}


async def _publish_welcome(services: Any, tenant_id: str) -> None:
    templates = services.templates
    await templates.create(tenant_id, "welcome", None, None)
    version = await templates.add_version(tenant_id, "welcome", None, WELCOME, None)
    await templates.publish(tenant_id, "welcome", version.id)


def _scope(key: str, body: bytes) -> dict[str, Any]:
    headers = [
        (b"host", b"homing.bench"),
        (b"authorization", f"Bearer {key}".encode()),
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"idempotency-key", uuid.uuid4().hex.encode()),
    ]
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": PATH,
        "raw_path": PATH.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }


async def measure(requests: int, clients: int, templated: bool = False) -> str:
    name = f"homing_bench_accept_{os.getpid()}"
    url = await fresh_postgres(name)
    prefix = f"homing-bench-{uuid.uuid4().hex[:12]}"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            services = await services_for(
                url,
                Path(tmp),
                redis_url=REDIS_URL,
                redis_key_prefix=prefix,
                allowed_hosts="homing.bench",  # the Host of _scope (the host guard)
            )
            try:
                tenant, key = await services.tenant_admin.create(
                    "bench", Plan.STARTUP, rate_limit_per_minute=10**6, quotas={"email": 10**9}
                )
                await store_resend(services, tenant.id)  # a send with no provider is a 422
                if templated:
                    await _publish_welcome(services, tenant.id)
                app = create_app(services)
                body = orjson.dumps(TEMPLATED if templated else MESSAGE)
                statuses: dict[int, int] = {}

                async def one() -> None:
                    sent = False

                    async def receive() -> dict[str, Any]:
                        nonlocal sent
                        if not sent:
                            sent = True
                            return {"type": "http.request", "body": body, "more_body": False}
                        await asyncio.Event().wait()  # never disconnects
                        raise AssertionError

                    async def send(message: dict[str, Any]) -> None:
                        if message["type"] == "http.response.start":
                            statuses[message["status"]] = statuses.get(message["status"], 0) + 1

                    await app(_scope(key, body), receive, send)  # type: ignore[arg-type]

                async def lane(count: int) -> None:
                    for _ in range(count):
                        await one()

                per_lane = max(1, requests // clients)
                await asyncio.gather(*(lane(10) for _ in range(clients)))  # warm-up
                statuses.clear()
                wall, cpu = time.perf_counter(), time.process_time()
                await asyncio.gather(*(lane(per_lane) for _ in range(clients)))
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            finally:
                await services.aclose()
    finally:
        await drop_postgres(name)
        await delete_redis_keys(REDIS_URL, prefix)
    done = per_lane * clients
    if statuses != {202: done}:
        raise RuntimeError(f"not every request was accepted: {statuses}")
    kind = " by template" if templated else ""
    return (
        f"accept_cpu postgres{kind} ({clients} concurrent, Redis rate windows): {done:,} accepted, "
        f"{done / wall:,.0f}/s in one process, {cpu / done * 1000:.2f} ms CPU each "
        f"(API process only, no HTTP)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=8000)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--template", action="store_true", help="send by a published template")
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    run = measure(args.requests, args.clients, args.template)
    try:  # the loop homing's processes run on
        import uvloop

        line = uvloop.run(run)
    except ImportError:
        line = asyncio.run(run)
    print(line, flush=True)
    if args.record:
        append_section("accept_cpu", "python -m bench.accept_cpu --record", [line])


if __name__ == "__main__":
    main()
