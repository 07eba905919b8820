"""SQL statements and round trips per accept, per batch and per delivery, counted in-process.

    python -m bench.statements [--backend postgres|sqlite] [--only CASE,…] [--profile N]
                               [--tracing]

Figures that do not move with the machine's load: this process builds the services and
the ASGI app, drives the real code paths and counts what reaches the database driver:

- ``single``: ``POST /v1/notifications/email`` through the app (sending gate, admission,
  group commit), one request at a time, then 64 at once; per accepted request;
- ``batch``: ``POST /v1/notifications/email/batch`` with 1,000 messages; per request;
- ``deliver``: one worker (default settings) draining a backlog through a sandbox in its
  own process, no latency; per delivered job (claim + send + complete);
- ``slow``: the same with the sandbox answering after 200 ms.

A *statement* is one ``cursor.execute`` or ``executemany`` that SQLAlchemy sends
(SQLAlchemy's ``before_cursor_execute`` event), or a ``NOTIFY`` the wake-ups send on
their own asyncpg connection; a *transaction* is one BEGIN…COMMIT (or
ROLLBACK); *round trips* are statements + BEGIN + COMMIT/ROLLBACK + the statements
asyncpg had to prepare first (a prepare is a round trip of its own; SQLAlchemy keeps
prepared statements per connection, so after a warm-up a hot path prepares nothing).
``--profile N`` also prints, per case, the number of Python function calls per unit
(deterministic) and the N modules (``--by function``: functions) with the largest share
of a cProfile run's own time, the loop's waiting left out. ``--tracing`` runs it all
with tracing on (the ``OTEL_*`` variables of the environment, exporting to a collector on
loopback unless they name one), to count what tracing costs.
Talks only to PostgreSQL (a database of its own, dropped afterwards) and the sandbox
on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import os
import pstats
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import orjson
from sqlalchemy import event

from bench.common import (
    drop_postgres,
    free_port,
    fresh_postgres,
    register_resend,
    sandbox_process,
    seed_bulk,
    services_for,
    store_resend,
)
from bench.load import MESSAGE
from bench.otlp_sink import OtlpSink
from homing import tracing
from homing.api.app import create_app
from homing.models import Plan
from homing.services import Services

CASES = ("single", "batch", "deliver", "slow")
BATCH = 1000


@dataclass
class Tally:
    """What reached the driver while it was switched on."""

    statements: int = 0
    many: int = 0
    begins: int = 0
    ends: int = 0
    prepares: int = 0
    kinds: Counter[str] = field(default_factory=Counter)

    @property
    def round_trips(self) -> int:
        return self.statements + self.begins + self.ends + self.prepares


class Counting:
    """Counts statements on one engine (and asyncpg's prepares) while ``on``."""

    def __init__(self, services: Services) -> None:
        self.tally = Tally()
        self.on = False
        engine = services.db.engine.sync_engine
        event.listen(engine, "before_cursor_execute", self._statement)
        event.listen(engine, "begin", self._begin)
        event.listen(engine, "commit", self._end)
        event.listen(engine, "rollback", self._end)
        self._prepare = asyncpg.Connection.prepare
        counting = self

        async def prepare(conn: Any, *args: Any, **kwargs: Any) -> Any:
            if counting.on:
                counting.tally.prepares += 1
            return await counting._prepare(conn, *args, **kwargs)

        asyncpg.Connection.prepare = prepare
        self._execute = asyncpg.Connection.execute

        async def execute(conn: Any, query: str, *args: Any, **kwargs: Any) -> Any:
            # The wake-ups' own connection (LISTEN/NOTIFY) is asyncpg's, not SQLAlchemy's.
            if counting.on and query.startswith("NOTIFY"):
                counting.tally.statements += 1
                counting.tally.kinds["NOTIFY"] += 1
            return await counting._execute(conn, query, *args, **kwargs)

        asyncpg.Connection.execute = execute

    def close(self) -> None:
        asyncpg.Connection.prepare = self._prepare
        asyncpg.Connection.execute = self._execute

    def _statement(self, *args: Any) -> None:
        if self.on:
            statement, executemany = args[2], args[5]
            self.tally.statements += 1
            self.tally.many += bool(executemany)
            self.tally.kinds[_kind(statement)] += 1

    def _begin(self, *_: Any) -> None:
        if self.on:
            self.tally.begins += 1

    def _end(self, *_: Any) -> None:
        if self.on:
            self.tally.ends += 1

    @contextmanager
    def counting(self) -> Iterator[Tally]:
        self.tally = Tally()
        self.on = True
        try:
            yield self.tally
        finally:
            self.on = False


def _kind(statement: str) -> str:
    """``SELECT jobs``, ``INSERT queue_entries``…: the verb and the table it names first."""
    words = statement.replace("(", " ").replace('"', "").split()
    verb = words[0].upper() if words else "?"
    marker = {"SELECT": "FROM", "INSERT": "INTO", "DELETE": "FROM", "UPDATE": "UPDATE"}.get(verb)
    upper = [w.upper() for w in words]
    if marker is None or marker not in upper:
        return verb
    place = upper.index(marker) + 1
    return f"{verb} {words[place] if place < len(words) else '?'}"


def _scope(method: str, path: str, key: str, body: bytes, idempotency: bool) -> dict[str, Any]:
    headers = [
        (b"host", b"homing.bench"),
        (b"authorization", f"Bearer {key}".encode()),
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    if idempotency:
        headers.append((b"idempotency-key", uuid.uuid4().hex.encode()))
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }


Request = Callable[[], Any]


def asgi_post(app: Any, path: str, key: str, body: bytes, idempotency: bool) -> Request:
    """One POST through the app itself, no sockets; raises unless it is answered 202."""

    async def post() -> None:
        statuses: list[int] = []
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
                statuses.append(message["status"])

        await app(_scope("POST", path, key, body, idempotency), receive, send)
        if statuses != [202]:
            raise RuntimeError(f"{path} answered {statuses}")

    return post


@dataclass
class Measured:
    case: str
    per: str
    units: int
    tally: Tally
    cpu: float = 0.0
    calls: int = 0
    top: list[str] = field(default_factory=list)


@dataclass
class Run:
    services: Services
    counter: Counting
    app: Any
    key: str
    tenant_id: str
    workdir: Path
    profile: int
    by: str

    async def measure(self, case: str, per: str, units: int, body: Callable[[], Any]) -> Measured:
        profiler = cProfile.Profile() if self.profile else None
        with self.counter.counting() as tally:
            if profiler:
                profiler.enable()
            cpu = time.process_time()
            await body()
            cpu = time.process_time() - cpu
            if profiler:
                profiler.disable()
        measured = Measured(case, per, units, tally, cpu)
        if profiler:
            measured.calls, measured.top = _profile(profiler, units, self.profile, self.by)
        return measured


def _profile(profiler: cProfile.Profile, units: int, top: int, by: str) -> tuple[int, list[str]]:
    """Python calls per unit, and the ``top`` places where the time went: own time
    (not cumulative, which double-counts coroutines), summed by module or by function,
    leaving out the time the loop spent waiting (``epoll``)."""
    raw: dict[Any, Any] = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    calls = sum(entry[1] for entry in raw.values())
    total = sum(entry[2] for entry in raw.values()) or 1.0
    by_place: Counter[str] = Counter()
    calls_at: Counter[str] = Counter()
    idle = sum(e[2] for (_, _, name), e in raw.items() if name.endswith("epoll' objects>"))
    total = max(total - idle, 1e-9)
    for (filename, line, name), entry in raw.items():
        if name.endswith("epoll' objects>"):
            continue  # the loop waiting for the database or the sandbox
        place = _place(filename) if by == "module" else f"{_place(filename)}:{line}({name})"
        by_place[place] += entry[2]
        calls_at[place] += entry[1]
    lines = [
        f"{spent / total:6.1%}  {calls_at[place] / units:9.1f} calls  {place}"
        for place, spent in by_place.most_common(top)
    ]
    return calls // units, lines


def _place(filename: str) -> str:
    """``homing/addresses.py``, ``sqlalchemy``, ``email (stdlib)``: where a function lives."""
    if "/homing/" in filename and "site-packages" not in filename:
        return "homing/" + filename.rsplit("/homing/", 1)[1]
    if "site-packages/" in filename:
        return filename.split("site-packages/", 1)[1].split("/", 1)[0].removesuffix(".py")
    if filename.startswith("<") or "/" not in filename:
        return "built-in"
    parts = filename.split("/lib/python3", 1)[-1].split("/")
    return f"{parts[1].removesuffix('.py')} (stdlib)" if len(parts) > 1 else filename


async def single(run: Run, requests: int) -> list[Measured]:
    post = asgi_post(run.app, "/v1/notifications/email", run.key, orjson.dumps(MESSAGE), True)
    for _ in range(20):  # warm-up: caches filled, statements prepared
        await post()

    async def one_at_a_time() -> None:
        for _ in range(requests):
            await post()

    async def lanes() -> None:
        async def lane() -> None:
            for _ in range(max(1, requests // 64)):
                await post()

        await asyncio.gather(*(lane() for _ in range(64)))

    together = max(1, requests // 64) * 64
    return [
        await run.measure("single", "accept", requests, one_at_a_time),
        await run.measure("single, 64 at once", "accept", together, lanes),
    ]


async def batch(run: Run, requests: int) -> list[Measured]:
    body = orjson.dumps({"messages": [MESSAGE] * BATCH})
    post = asgi_post(run.app, "/v1/notifications/email/batch", run.key, body, False)
    await post()

    async def many() -> None:
        for _ in range(requests):
            await post()

    return [await run.measure(f"batch of {BATCH:,}", "request", requests, many)]


async def deliver(run: Run, jobs: int, latency_ms: int, sandbox_url: str) -> list[Measured]:
    name = "slow" if latency_ms else "deliver"
    if latency_ms:
        async with httpx.AsyncClient(base_url=sandbox_url) as client:
            body = {"provider": "resend", "latency_ms": latency_ms}
            (await client.post("/_sandbox/faults", json=body)).raise_for_status()
    await seed_bulk(run.services, run.tenant_id, 50)
    await run.services.worker().run(once=True)  # warm-up
    await seed_bulk(run.services, run.tenant_id, jobs)
    delivered: list[int] = []

    async def drain() -> None:
        delivered.append(await run.services.worker().run(once=True))

    measured = await run.measure(name, "delivery", jobs, drain)
    if delivered != [jobs]:
        raise RuntimeError(f"{name}: delivered {delivered} of {jobs}")
    return [measured]


@asynccontextmanager
async def running(backend: str, profile: int, by: str) -> AsyncIterator[Run]:
    name = f"homing_bench_statements_{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        if backend == "postgres":
            url = await fresh_postgres(name)
        else:
            url = f"sqlite+aiosqlite:///{workdir / 'bench.db'}"
        try:
            # The Host of asgi_post's requests must pass the host guard.
            services = await services_for(url, workdir, allowed_hosts="homing.bench")
            counter = Counting(services)
            try:
                tenant, key = await services.tenant_admin.create(
                    "bench", Plan.STARTUP, rate_limit_per_minute=10**6, quotas={"email": 10**9}
                )
                app = create_app(services)
                yield Run(services, counter, app, key, tenant.id, workdir, profile, by)
            finally:
                counter.close()
                await services.aclose()
        finally:
            if backend == "postgres":
                await drop_postgres(name)


def report(backend: str, results: list[Measured]) -> list[str]:
    lines = [
        f"statements {backend}: case, per unit: statements (executemany), transactions, "
        "round trips, this process's CPU (moves with the machine's load); statements by kind"
    ]
    for m in results:
        t, n = m.tally, m.units
        kinds = ", ".join(
            f"{kind} {count / n:.3g}" for kind, count in sorted(t.kinds.items(), key=_by_count)
        )
        lines.append(
            f"  {m.case:<15} per {m.per:<8} {t.statements / n:7.3f} ({t.many / n:.3f})"
            f"  tx {t.begins / n:6.3f}  rt {t.round_trips / n:7.3f}"
            f"  cpu {m.cpu / n * 1000:.3f} ms  [{kinds}]"
        )
        if m.top:
            lines.append(f"    {m.calls:,} Python calls per {m.per}; own time by module:")
            lines.extend(f"      {row}" for row in m.top)
    return lines


def _by_count(item: tuple[str, int]) -> tuple[int, str]:
    return -item[1], item[0]


async def measure(args: argparse.Namespace) -> list[str]:
    wanted = args.only.split(",") if args.only else list(CASES)
    results: list[Measured] = []
    async with running(args.backend, args.profile, args.by) as run:
        # A send no provider could deliver is refused at accept: the accept cases need
        # one (stored, never called), which the delivery cases replace by the sandbox's.
        stored = await store_resend(run.services, run.tenant_id)
        if "single" in wanted:
            results += await single(run, args.requests)
        if "batch" in wanted:
            results += await batch(run, args.batches)
        if "deliver" in wanted or "slow" in wanted:
            async with sandbox_process(free_port()) as sandbox:
                await run.services.providers.update(run.tenant_id, stored.id, enabled=False)
                await register_resend(run.services, run.tenant_id, sandbox)
                if "deliver" in wanted:
                    results += await deliver(run, args.jobs, 0, sandbox.url)
                if "slow" in wanted:
                    results += await deliver(run, args.jobs, 200, sandbox.url)
    return report(args.backend, results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["postgres", "sqlite"], default="postgres")
    parser.add_argument("--only", default="", help=f"comma-separated, of {','.join(CASES)}")
    parser.add_argument("--requests", type=int, default=256)
    parser.add_argument("--batches", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    parser.add_argument("--by", choices=["module", "function"], default="module")
    parser.add_argument("--tracing", action="store_true", help="with tracing on")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        if args.tracing:
            if not tracing.exporters_wanted(os.environ):
                sink = stack.enter_context(OtlpSink(keep=False))
                os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = sink.endpoint
            assert tracing.start_from_environment()
            stack.callback(tracing.stop)
        for line in asyncio.run(measure(args)):
            print(line, flush=True)


if __name__ == "__main__":
    main()
