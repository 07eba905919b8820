"""Every figure in one go: Homing beside a BullMQ peer, on loopback, pair by pair.

    python -m bench all [--quick] [--only CASE[,CASE…]] [--no-peer] [--record]
                        [--check [--retries N]] [--baseline BAND] [--tracing]

Cases: ingest (single and batch), deliver (no latency), bulk (deliveries through
Resend's batch endpoint, against the bare BullMQ worker), mixed (delivering while
ingesting 500 req/s), slow (sandbox latency 200 ms), memory (worker RSS with a large
backlog), sqlite (the same figures on SQLite). Each case runs Homing, then the peer
(``bench/peer``, Node.js + bullmq; ``npm ci`` on first use), on the same machine in
the same run; the table gives Homing's figure over the peer's. Progress goes to
stderr, the table to stdout; ``--record`` appends it to docs/benchmarks.md.
``--check`` compares every ratio with ``bench/baseline.json`` and exits 1 on a drop
beyond its band (``bench/regression.py``); ``--baseline BAND`` writes that file from
this run. ``--tracing`` runs every Homing process with tracing on, exporting to an
OTLP/HTTP collector on loopback (``bench/otlp_sink.py``), to measure what it costs.
Needs PostgreSQL and Redis on 127.0.0.1 (HOMING_BENCH_POSTGRES_URL,
HOMING_BENCH_REDIS_URL, HOMING_BENCH_PEER_REDIS_URL).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys

import asyncpg
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from bench import peers, regression
from bench.cases import CASES, FULL, QUICK, Runner
from bench.common import POSTGRES_URL, append_section, machine, say, today
from bench.otlp_sink import OtlpSink
from bench.peers import REDIS_URL as PEER_REDIS_URL
from bench.regression import BASELINE
from bench.report import UNRECORDED_ROWS, Row, notes, rows, table


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["all"])
    parser.add_argument("--quick", action="store_true", help="small counts, seconds per run")
    parser.add_argument("--only", default="", help=f"comma-separated cases: {', '.join(CASES)}")
    parser.add_argument("--no-peer", action="store_true", help="Homing's figures only")
    parser.add_argument("--record", action="store_true", help="append to docs/benchmarks.md")
    parser.add_argument(
        "--check", action="store_true", help=f"fail on a ratio below {BASELINE.name}'s band"
    )
    parser.add_argument(
        "--retries", type=int, default=2, help="with --check: re-measure a failing case"
    )
    parser.add_argument(
        "--baseline",
        type=float,
        metavar="BAND",
        help=f"write {BASELINE.name} from this run, allowing drops of BAND (0.3 = 30 %%)",
    )
    parser.add_argument(
        "--tracing",
        action="store_true",
        help="Homing with OpenTelemetry tracing on, exporting to a loopback collector",
    )
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


async def check(args: argparse.Namespace, runner: Runner, built: list[Row]) -> int:
    """0 when every ratio this run measured is within the baseline's band, after
    measuring a failing row's cases again (up to ``--retries`` times, the best counts)."""
    baseline = regression.load()
    scale = "quick" if args.quick else "full"
    if baseline["scale"] != scale:
        say(f"check: {BASELINE.name} was recorded at {baseline['scale']} scale, not {scale}")
        return 1
    runs = [regression.ratios(built)]
    verdicts = regression.judge(regression.best(runs), baseline)
    for _ in range(max(args.retries, 0)):
        failing = [verdict.key for verdict in verdicts if not verdict.ok]
        if not failing:
            break
        again = regression.cases_of(failing)
        say(f"check: {len(failing)} ratio(s) outside the band; measuring {', '.join(again)} again")
        rerun = Runner(runner.scale, peer=runner.peer)
        for case in again:
            await rerun.run(case)
        runs.append(regression.ratios(rows({figure.key: figure for figure in rerun.figures})))
        verdicts = regression.judge(regression.best(runs), baseline)
    print(
        f"\nRegression check against {BASELINE.name} (recorded {baseline['recorded']} at "
        f"{baseline['commit']}, band {float(baseline['band']):.0%}):"  # type: ignore[arg-type]
    )
    print("\n".join(verdict.line() for verdict in verdicts), flush=True)
    return 0 if all(verdict.ok for verdict in verdicts) else 1


async def main(args: argparse.Namespace) -> int:
    if not args.tracing:
        return await _main(args)
    with OtlpSink(keep=False) as sink:
        # Every Homing process the cases start inherits this (bench.common.homing_process).
        os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = sink.endpoint
        try:
            status = await _main(args)
        finally:
            del os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
        print(f"tracing on: {sink.requests:,} OTLP exports received", flush=True)
        if sink.requests == 0:
            say("tracing on, but no process exported a span")
            return 1
        return status


async def _main(args: argparse.Namespace) -> int:
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
    figures = {figure.key: figure for figure in runner.figures}
    built = rows(figures)
    lines = table(built + rows(figures, UNRECORDED_ROWS))
    lines += ["", *notes(runner.figures)]
    lines += [f"FAILED {failure}" for failure in runner.failures]
    found = await versions()
    print(f"Machine: {machine()}, {found}\n" + "\n".join(lines), flush=True)
    if args.record:
        command = " ".join(["python -m bench", *sys.argv[1:]])
        title = "all: Homing beside the BullMQ peer" + (" (quick)" if args.quick else "")
        append_section(title, command, lines, versions=found)
        say("appended to docs/benchmarks.md")
    if args.baseline is not None:
        scale = "quick" if args.quick else "full"
        regression.record(regression.ratios(built), args.baseline, scale, machine(), today())
        say(f"wrote {BASELINE}")
    status = 1 if runner.failures else 0
    if args.check:
        status = max(status, await check(args, runner, built))
    return status


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main(_parser().parse_args())))
