"""Every figure in one go: Homing beside a BullMQ peer, on loopback, pair by pair.

    python -m bench all [--quick] [--only CASE[,CASE…]] [--no-peer] [--record]

Cases: ingest (single and batch), deliver (no latency), mixed (delivering while
ingesting 500 req/s), slow (sandbox latency 200 ms), memory (worker RSS with a large
backlog), sqlite (the same figures on SQLite). Each case runs Homing, then the peer
(``bench/peer``, Node.js + bullmq; ``npm ci`` on first use), on the same machine in
the same run; the table gives Homing's figure over the peer's. Progress goes to
stderr, the table to stdout; ``--record`` appends it to docs/benchmarks.md.
Needs PostgreSQL and Redis on 127.0.0.1 (HOMING_BENCH_POSTGRES_URL,
HOMING_BENCH_REDIS_URL, HOMING_BENCH_PEER_REDIS_URL).
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys

import asyncpg
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from bench import peers
from bench.cases import CASES, FULL, QUICK, Runner
from bench.common import POSTGRES_URL, append_section, machine, say
from bench.peers import REDIS_URL as PEER_REDIS_URL
from bench.report import notes, rows, table


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["all"])
    parser.add_argument("--quick", action="store_true", help="small counts, seconds per run")
    parser.add_argument("--only", default="", help=f"comma-separated cases: {', '.join(CASES)}")
    parser.add_argument("--no-peer", action="store_true", help="Homing's figures only")
    parser.add_argument("--record", action="store_true", help="append to docs/benchmarks.md")
    return parser


def _cases(only: str) -> list[str]:
    chosen = [case.strip() for case in only.split(",") if case.strip()] or list(CASES)
    unknown = sorted(set(chosen) - set(CASES))
    if unknown:
        raise SystemExit(f"unknown case(s): {', '.join(unknown)}; choose from {', '.join(CASES)}")
    return chosen


async def versions() -> str:
    """Node, bullmq, PostgreSQL and Redis versions; ``?`` for what cannot be asked."""
    found = []
    if peers.unavailable() is None:
        node = subprocess.run(["node", "--version"], capture_output=True, text=True)
        found += [f"Node {node.stdout.strip().lstrip('v')}", f"bullmq {peers.version('bullmq')}"]
    try:
        conn = await asyncpg.connect(POSTGRES_URL.replace("postgresql+asyncpg://", "postgresql://"))
        try:
            found.append(f"PostgreSQL {await conn.fetchval('SHOW server_version')}")
        finally:
            await conn.close()
    except (OSError, asyncpg.PostgresError):
        found.append("PostgreSQL ?")
    client = aioredis.Redis.from_url(PEER_REDIS_URL)
    try:
        found.append(f"Redis {(await client.info('server'))['redis_version']}")
    except (OSError, RedisError):
        found.append("Redis ?")
    finally:
        await client.aclose()
    return ", ".join(found)


async def main(args: argparse.Namespace) -> int:
    cases = _cases(args.only)
    runner = Runner(QUICK if args.quick else FULL, peer=not args.no_peer)
    if runner.peer:
        try:
            await asyncio.to_thread(peers.prepare)
        except peers.PeerUnavailable as exc:
            say(f"the BullMQ peer cannot run ({exc}); Homing's figures only")
            runner.peer = False
            runner.failures.append(f"peer: {exc}")
    for case in cases:
        await runner.run(case)
    lines = table(rows({figure.key: figure for figure in runner.figures}))
    lines += ["", *notes(runner.figures)]
    lines += [f"FAILED {failure}" for failure in runner.failures]
    found = await versions()
    print(f"Machine: {machine()}, {found}\n" + "\n".join(lines), flush=True)
    if args.record:
        command = " ".join(["python -m bench", *sys.argv[1:]])
        title = "all: Homing beside the BullMQ peer" + (" (quick)" if args.quick else "")
        append_section(title, command, lines, versions=found)
        say("appended to docs/benchmarks.md")
    return 1 if runner.failures else 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main(_parser().parse_args())))
