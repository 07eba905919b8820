"""Where a Homing process's CPU goes while it runs a bench case, sampled by py-spy.

    python -m bench.where [--only deliver,slow,bulk,ingest,batch] [--seconds S]
                          [--rate HZ] [--env HOMING_NAME=VALUE …] [--record]

``bench.statements --profile`` counts calls deterministically, but cProfile's cost per
call inflates code made of many small calls (SQLAlchemy, asyncio) and hides the rest.
Here the real processes run as ``python -m bench all`` runs them (one ``homing worker``
draining a backlog through the sandbox: ``deliver`` without latency, ``slow`` with
200 ms, ``bulk`` through Resend's batch endpoint, ``--env`` changing its settings;
``homing api`` with 64 clients on single sends, ``ingest``, and on batches of 1,000,
``batch``), and py-spy samples them from outside (``--nonblocking``: the process is
never paused) at HZ for S seconds after a warm-up. For each case it prints the rate
reached, the cores each process kept busy meanwhile (the sampled one, PostgreSQL's, the
sandbox or the load's, from /proc), the parts its own time went to (the innermost
Python frame's package: ``homing/dispatch``,
``sqlalchemy``, ``aiohttp``…; a C extension's time falls to the Python frame that
called it), and inclusive shares: time with SQLAlchemy on the stack, and how much of it
was asyncpg's below it (the difference is what raw asyncpg could save at most).
PostgreSQL, Redis and the sandbox on 127.0.0.1 only; py-spy comes with
requirements/test.txt.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bench import load
from bench.cases import BULK_ENV, SLOW_MS
from bench.common import (
    cpu_seconds,
    delete_redis_keys,
    free_port,
    homing_process,
    postgres_pids,
    print_and_record,
    say,
    worker_process,
)
from bench.homing_runs import REDIS_URL, api_env, setup, slow_down
from bench.load import MESSAGE, SandboxCounter, closed_loop, post, session, until_healthy

CASES = ("deliver", "slow", "bulk", "ingest", "batch")
# Deliveries a second to expect, to queue enough jobs for the warm-up and the window.
_EXPECTED = {"deliver": 2500, "slow": 1200, "bulk": 3500}
WARMUP = 3.0
BATCH = 1000
# Inclusive groups: a sample counts when any frame of the stack is in the package.
SQLALCHEMY, ASYNCPG = "sqlalchemy", "asyncpg"


@dataclass
class Profile:
    """py-spy's samples of one case, and the rate the case reached meanwhile."""

    case: str
    rate: str
    samples: int = 0
    own: Counter[str] = field(default_factory=Counter)
    in_sqlalchemy: int = 0
    asyncpg_below: int = 0
    # Cores busy over the window by /proc: the sampled process(es), PostgreSQL, sandbox.
    cores: dict[str, float] = field(default_factory=dict)

    def add(self, frames: list[str], count: int) -> None:
        parts = [part_of(frame) for frame in frames]
        self.samples += count
        self.own[parts[-1]] += count
        if SQLALCHEMY in parts:
            self.in_sqlalchemy += count
            if ASYNCPG in parts[parts.index(SQLALCHEMY) :]:
                self.asyncpg_below += count

    def lines(self, top: int = 12) -> list[str]:
        busy = ", ".join(f"{name} {used:.2f}" for name, used in self.cores.items())
        total = sum(self.cores.values())
        lines = [
            f"{self.case}: {self.rate}; {self.samples:,} samples",
            f"  cores busy: {busy or '?'}; {total:.2f} of {os.cpu_count()} in all",
        ]
        if not self.samples:
            return lines
        parts = ", ".join(
            f"{name} {count / self.samples:.0%}" for name, count in self.own.most_common(top)
        )
        lines.append(f"  own time: {parts}")
        inside = self.in_sqlalchemy / self.samples
        below = self.asyncpg_below / self.samples
        lines.append(
            f"  with SQLAlchemy on the stack {inside:.0%}, asyncpg below it {below:.0%}: "
            f"SQLAlchemy's own {inside - below:.0%}"
        )
        return lines


def part_of(frame: str) -> str:
    """The part a py-spy frame (``function (/path/file.py:line)``) belongs to."""
    path = frame.rpartition(" (")[2].rstrip(")").rpartition(":")[0]
    if "/homing/" in path:
        inner = path.rpartition("/homing/")[2].split("/")
        return "homing/" + (inner[0] if len(inner) > 1 else inner[0].removesuffix(".py"))
    if "site-packages/" in path:
        return path.rpartition("site-packages/")[2].split("/")[0].removesuffix(".py")
    if "/asyncio/" in path:
        return "asyncio"
    if "/lib/python3" in path:
        return "stdlib"
    return "other"


def read_raw(profile: Profile, text: str) -> None:
    """Add py-spy's raw (collapsed) output to ``profile``: ``frame;frame;… count``."""
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = [f for f in stack.split(";") if not f.startswith(("process ", "thread "))]
        if frames:
            profile.add(frames, int(count))


async def sample(pid: int, seconds: float, hz: int, *, children: bool = False) -> str:
    """py-spy's raw samples of process ``pid`` (and its children) for ``seconds``."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "samples.txt"
        argv = [spy, "record", "--pid", str(pid), "--rate", str(hz)]
        argv += ["--duration", str(round(seconds)), "--format", "raw", "--full-filenames"]
        argv += ["--nonblocking", "--output", str(out), *(["--subprocesses"] if children else [])]
        proc = await asyncio.create_subprocess_exec(
            *argv, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
        )
        _, err = await proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"py-spy failed: {err.decode(errors='replace').strip()[-300:]}")
        return out.read_text()


async def worker_case(
    case: str, seconds: float, hz: int, extra: dict[str, str] | None = None
) -> Profile:
    jobs = int(_EXPECTED[case] * (WARMUP + seconds + 10))
    env = {**(BULK_ENV if case == "bulk" else {}), **(extra or {})}
    async with setup("postgres") as s:
        await s.seed(jobs)
        if case == "slow":
            await slow_down(s.sandbox.url, SLOW_MS)
        async with httpx.AsyncClient(base_url=s.sandbox.url) as client:
            counter = SandboxCounter(client)
            with worker_process(s.url, s.secret, s.workdir, **env) as pid:
                await counter.reach(1)
                await asyncio.sleep(WARMUP)
                say(f"  sampling the worker for {seconds:.0f} s")
                busy = Busy({"worker": [pid], "sandbox": [s.sandbox.proc.pid]})
                raw, delivered = await asyncio.gather(
                    sample(pid, seconds, hz), load.window(counter, seconds)
                )
                cores = busy.cores()
    if delivered.drained:
        raise RuntimeError(f"{case}: the backlog ran out during the window")
    rate = f"{delivered.delivered / delivered.seconds:,.0f} deliveries/s"
    profile = Profile(case, rate, cores=cores)
    read_raw(profile, raw)
    return profile


class Busy:
    """Cores each group of processes keeps busy from now until ``cores`` is called;
    PostgreSQL's processes are found by name (none when it runs on another machine)."""

    def __init__(self, groups: dict[str, list[int]]) -> None:
        self._groups = {**groups, "postgres": postgres_pids()}
        self._start = {name: cpu_seconds(pids) for name, pids in self._groups.items()}
        self._started = time.monotonic()

    def cores(self) -> dict[str, float]:
        elapsed = time.monotonic() - self._started
        used = {name: cpu_seconds(pids) - self._start[name] for name, pids in self._groups.items()}
        return {name: seconds / elapsed for name, seconds in used.items()}


async def api_cases(cases: list[str], seconds: float, hz: int, clients: int = 64) -> list[Profile]:
    port, prefix = free_port(), f"homing-bench-{uuid.uuid4().hex[:12]}"
    base = f"http://127.0.0.1:{port}"
    profiles = []
    async with setup("postgres") as s:
        single = post(f"{base}/v1/notifications/email", MESSAGE, s.api_key, idempotency_keys=True)
        body = {"messages": [MESSAGE] * BATCH}
        batch = post(f"{base}/v1/notifications/email/batch", body, s.api_key)
        try:
            env = api_env(s, port, prefix)
            with homing_process("api", s.url, s.secret, s.workdir, **env) as pid:
                await until_healthy(base)
                family = _family(pid)
                async with session(clients) as client:
                    await closed_loop(client, clients, WARMUP, single)
                    for case in cases:
                        request = single if case == "ingest" else batch
                        say(f"  sampling {len(family)} API processes for {seconds:.0f} s: {case}")
                        busy = Busy({"api": family, "load": [os.getpid()]})
                        raw, done = await asyncio.gather(
                            sample(pid, seconds, hz, children=True),
                            closed_loop(client, clients, seconds, request),
                        )
                        per = done.per_second * (1 if case == "ingest" else BATCH)
                        unit = "req/s" if case == "ingest" else "msg/s"
                        rate = f"{per:,.0f} {unit}"
                        profile = Profile(case, rate, cores=busy.cores())
                        read_raw(profile, raw)
                        profiles.append(profile)
        finally:
            await delete_redis_keys(REDIS_URL, prefix)
    return profiles


def _family(pid: int) -> list[int]:
    """``pid`` and its children (``homing api`` starts one process per core)."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    return [pid, *(int(child) for child in children)]


async def main(args: argparse.Namespace) -> list[str]:
    chosen = [c.strip() for c in args.only.split(",") if c.strip()] or list(CASES)
    unknown = sorted(set(chosen) - set(CASES))
    if unknown:
        raise SystemExit(f"unknown case(s): {', '.join(unknown)}; choose from {', '.join(CASES)}")
    settings = _settings(args.env)
    lines: list[str] = []
    for case in (c for c in chosen if c in _EXPECTED):
        say(f"{case}: one homing worker")
        lines += (await worker_case(case, args.seconds, args.rate, settings)).lines()
    api = [c for c in chosen if c not in _EXPECTED]
    if api:
        say(f"{', '.join(api)}: homing api")
        for profile in await api_cases(api, args.seconds, args.rate):
            lines += profile.lines()
    return lines


def _settings(pairs: list[str]) -> dict[str, str]:
    """``--env HOMING_X=Y`` pairs as the worker's settings (over the case's own)."""
    settings = {}
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not equals or not name.startswith("HOMING_"):
            raise SystemExit(f"--env {pair!r}: expected HOMING_NAME=VALUE")
        settings[name] = value
    return settings


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.where", description=__doc__)
    parser.add_argument("--only", default="", help=f"comma-separated cases: {', '.join(CASES)}")
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--rate", type=int, default=200, help="samples a second")
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="HOMING_NAME=VALUE",
        help="a setting of the worker cases' worker (repeatable)",
    )
    parser.add_argument("--record", action="store_true", help="append to docs/benchmarks.md")
    return parser


if __name__ == "__main__":
    arguments = _parser().parse_args()
    report = asyncio.run(main(arguments))
    title = "where the CPU goes (py-spy)"
    print_and_record(report, record=arguments.record, module="bench.where", title=title)
