"""The ingest case under two HTTP servers: uvicorn (httptools, uvloop) and granian.

    python -m bench.servers [--processes N] [--seconds S] [--clients C] [--rounds R]
                            [--record]

Issue #24's lever 4 asks which server serves Homing's API fastest. For each round, on
one fresh PostgreSQL database with one unlimited tenant and full admission (rate windows
in Redis, as deployed), it serves the same ASGI app (``homing.api.app.create_app``) from
N processes, first as ``homing api`` does (uvicorn with httptools on uvloop, the
processes sharing a port), then under granian (``--interface asgi --loop uvloop``, N
workers), and drives each with ``bench.load.ingest``: C clients on ``POST
/v1/notifications/email`` for S seconds after a warm-up, then on ``…/batch`` with 1,000
messages. Rounds alternate the order, so a machine that drifts moves both. granian is a
bench dependency only (requirements/test.txt); Homing does not ship it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from bench import load
from bench.common import bench_process, delete_redis_keys, free_port, print_and_record, say
from bench.homing_runs import REDIS_URL, Setup, api_env, setup
from bench.load import Load, until_healthy

SERVERS = ("uvicorn", "granian")
# What the loads count a batch request as: its messages.
BATCH = 1000


class App:
    """The API as an ASGI app whose lifespan builds Homing's services from the
    ``HOMING_*`` settings, as ``homing api`` does before it serves (granian's target)."""

    def __init__(self) -> None:
        self._inner: Any = None
        self._services: Any = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "lifespan":
            await self._inner(scope, receive, send)
            return
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await self._start()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self._services is not None:
                    await self._services.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _start(self) -> None:
        from homing.api.app import create_app
        from homing.services import build
        from homing.settings import Settings
        from homing.store.migrate import require_current

        self._services = await build(Settings())
        await require_current(self._services.db)
        self._inner = create_app(self._services)


app = App()


@dataclass(frozen=True, slots=True)
class Served:
    server: str
    single: Load
    batch: Load


@contextmanager
def _serving(s: Setup, server: str, port: int, processes: int, prefix: str) -> Iterator[str]:
    env = {**api_env(s, port, prefix), "HOMING_API_PROCESSES": str(processes)}
    if server == "uvicorn":
        argv = [sys.executable, "-m", "homing", "api", "--host", "127.0.0.1", "--port", str(port)]
    else:
        argv = [
            *(sys.executable, "-m", "granian", "--interface", "asgi", "--loop", "uvloop"),
            *("--host", "127.0.0.1", "--port", str(port), "--workers", str(processes)),
            *("--no-ws", "--log-level", "warning", "bench.servers:app"),
        ]
    with bench_process(argv, server, s.url, s.secret, s.workdir, **env):
        yield f"http://127.0.0.1:{port}"


async def serve(s: Setup, server: str, processes: int, clients: int, seconds: float) -> Served:
    port, prefix = free_port(), f"homing-bench-{uuid.uuid4().hex[:12]}"
    say(f"  {server}, {processes} processes: {clients} clients, {seconds:.0f} s a load")
    try:
        with _serving(s, server, port, processes, prefix) as base:
            await until_healthy(base)
            single, batch = await load.ingest(base, s.api_key, clients, seconds, BATCH)
    finally:
        await delete_redis_keys(REDIS_URL, prefix)
    return Served(server, single, batch)


def _line(served: Served) -> str:
    single = served.single.per_second
    batch = served.batch.per_second * BATCH
    refused = served.single.refused + served.batch.refused
    return (
        f"{served.server:<8} {single:>9,.0f} req/s {batch:>11,.0f} msg/s"
        f"   refused {refused}, statuses {dict(sorted(served.single.statuses.items()))}"
    )


async def main(args: argparse.Namespace) -> list[str]:
    lines = [f"{'server':<8} {'single':>15} {'batch':>17}"]
    async with setup("postgres") as s:
        for round_ in range(args.rounds):
            order = SERVERS if round_ % 2 == 0 else tuple(reversed(SERVERS))
            say(f"round {round_ + 1} of {args.rounds}")
            for server in order:
                served = await serve(s, server, args.processes, args.clients, args.seconds)
                lines.append(_line(served))
                say(f"  {lines[-1]}")
    return lines


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.servers", description=__doc__)
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--record", action="store_true", help="append to docs/benchmarks.md")
    return parser


if __name__ == "__main__":
    arguments = _parser().parse_args()
    table = asyncio.run(main(arguments))
    title = "servers: uvicorn and granian on the ingest case"
    print_and_record(table, record=arguments.record, module="bench.servers", title=title)
