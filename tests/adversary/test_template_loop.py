"""A tenant's template work cannot stall the API or the render pool for another tenant
(issue #39, items 1 and 7), against a real ``homing api`` process.

A version whose content takes seconds to parse and check (five parts of 65,407
characters ``{{ a.a.a…b }}`` and a 65 KB ``allOf`` schema, all within the bounds) used
to be checked on the API's event loop: ``/healthz`` and another tenant's requests waited
for it. Now the check runs in a render worker under the render budget, and the other
tenant is answered meanwhile. A runaway preview whose client went away used to hold its
worker for the whole budget; now its worker is killed when the client leaves, and the
next render (the other tenant's, and the same tenant's) is served promptly.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import httpx

from tests.processes import HomingProcess, cli_tenant, eventually, free_port, healthy

# Within HOMING_TEMPLATE_MAX_SOURCE_CHARS (65,536) and MAX_SCHEMA_BYTES (65,536).
DEEP = "{{ " + "a." * 32_700 + "b }}"
SCHEMA = {"allOf": [{"anyOf": [{"type": "string"}]}] * 2180}
HOSTILE = {
    "email": {"subject": DEEP, "text": "t"},
    "sms": {"body": DEEP},
    "chat": {"text": DEEP},
    "in_app": {"body": DEEP},
    "webhook": {"payload": {"x": DEEP}},
    "variables": SCHEMA,
}
# What another tenant's probe may take while the attack runs (the loop is not held: the
# figure measured on a loaded 2-core machine is in docs/security.md); the attack held the
# loop for 5-12 s before.
PROBE_DEADLINE_SECONDS = 1.0
SPIN = "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}"


@contextmanager
def _api(tmp_path: Path, **settings: str) -> Iterator[tuple[str, dict[str, str]]]:
    """A ``homing api`` with two tenants: its base URL and each tenant's auth header."""
    env = {"HOMING_DATA_DIR": str(tmp_path / "data"), **settings}
    keys = {n: cli_tenant(env, tmp_path, name=n)["api_key"] for n in ("mallory", "acme")}
    port = free_port()
    server = HomingProcess(["api", "--port", str(port)], env, tmp_path / "api.log").start()
    try:
        yield (
            f"http://127.0.0.1:{port}",
            {n: {"Authorization": f"Bearer {k}"} for n, k in keys.items()},
        )
    finally:
        code = server.stop()
    assert code == 0, server.output()


@asynccontextmanager
async def _client(base: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        await eventually(lambda: healthy(client), timeout=60, what="homing api to listen")
        yield client


async def _probe(
    client: httpx.AsyncClient, auth: dict[str, str], stop: asyncio.Event
) -> list[float]:
    """``/healthz`` and the tenant's ``GET /v1/usage`` over and over until ``stop``: each
    answer's time (one slower than the deadline raises ReadTimeout, failing the test)."""
    times = []
    while not stop.is_set():
        for path, headers in (("/healthz", {}), ("/v1/usage", auth)):
            started = time.monotonic()
            answer = await client.get(path, headers=headers, timeout=PROBE_DEADLINE_SECONDS)
            assert answer.status_code == 200, answer.text
            times.append(time.monotonic() - started)
        await asyncio.sleep(0.05)  # pacing the probe, not synchronisation
    return times


async def _published(client: httpx.AsyncClient, auth: dict[str, str], key: str, text: str) -> None:
    assert (await client.post("/v1/templates", json={"key": key}, headers=auth)).status_code == 201
    content = {"email": {"subject": "s", "text": text}}
    version = await client.post(f"/v1/templates/{key}/versions", json=content, headers=auth)
    assert version.status_code == 201, version.text


async def test_a_version_slow_to_check_does_not_hold_the_api_for_another_tenant(
    tmp_path: Path,
) -> None:
    with _api(tmp_path) as (base, auth):
        async with _client(base) as client:
            await _published(client, auth["mallory"], "slow", "x")
            # The pool's workers are up before the attack (their start-up is not its).
            warm = {"data": {}, "version": 1}
            assert (
                await client.post("/v1/templates/slow/preview", json=warm, headers=auth["mallory"])
            ).status_code == 200
            stop = asyncio.Event()
            probe = asyncio.create_task(_probe(client, auth["acme"], stop))
            answers, took = [], []
            for content in (HOSTILE, {"sms": {"body": "x"}, "variables": SCHEMA}):
                started = time.monotonic()
                answers.append(
                    await client.post(
                        "/v1/templates/slow/versions", json=content, headers=auth["mallory"]
                    )
                )
                took.append(time.monotonic() - started)
            stop.set()
            times = await probe
    # Refused within about the budget (1 s), not checked for seconds on the loop: the
    # parts (past the budget, or nested too deeply to compile when the worker gets that
    # far first), and the schema (past the budget).
    for answer in answers:
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"]["code"] == "template_error"
    assert answers[1].json()["error"]["details"] == {"budget_s": 1.0}
    assert times and max(times) < PROBE_DEADLINE_SECONDS, (took, times)
    print(f"checks refused in {took} s; probes: {len(times)}, slowest {max(times):.3f} s")


async def _gone(client: httpx.AsyncClient, auth: dict[str, str], path: str, body: object) -> None:
    """A request whose client gives up after 0.5 s (the connection is closed)."""
    try:
        await client.post(path, json=body, headers=auth, timeout=0.5)
    except httpx.TimeoutException:
        return
    raise AssertionError("the runaway preview was answered")


async def test_a_runaway_preview_whose_client_left_stops_holding_the_pool(
    tmp_path: Path,
) -> None:
    budget = 20.0  # long: only the client's leaving can end the runaway renders early
    settings = {
        "HOMING_TEMPLATE_RENDER_TIMEOUT_SECONDS": str(budget),
        "HOMING_TEMPLATE_RENDER_WORKERS": "2",
    }
    with _api(tmp_path, **settings) as (base, auth):
        async with _client(base) as client:
            await _published(client, auth["mallory"], "spin", SPIN)
            await _published(client, auth["mallory"], "hello", "Hello {{ name }}")
            await _published(client, auth["acme"], "hello", "Hello {{ name }}")
            preview = {"data": {"name": "Ada"}, "version": 1}
            # Warm: both tenants' first previews start the pool.
            for who in ("mallory", "acme"):
                warmed = await client.post(
                    "/v1/templates/hello/preview", json=preview, headers=auth[who]
                )
                assert warmed.status_code == 200, warmed.text
            await asyncio.gather(
                *(
                    _gone(
                        client,
                        auth["mallory"],
                        "/v1/templates/spin/preview",
                        {"data": {}, "version": 1},
                    )
                    for _ in range(4)
                )
            )
            started = time.monotonic()
            others = await client.post(
                "/v1/templates/hello/preview", json=preview, headers=auth["acme"]
            )
            theirs = time.monotonic() - started
            started = time.monotonic()
            own = await client.post(
                "/v1/templates/hello/preview", json=preview, headers=auth["mallory"]
            )
            own_took = time.monotonic() - started
    assert others.status_code == 200 and own.status_code == 200, (others.text, own.text)
    assert others.json()["email"]["text"] == "Hello Ada"
    # Before: each waited for runaway renders to reach the 20 s budget.
    assert theirs < budget / 2 and own_took < budget / 2, (theirs, own_took)
    print(
        f"after the client left: another tenant's preview {theirs:.2f} s, its own {own_took:.2f} s"
    )
