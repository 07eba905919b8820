"""The HTTP face of a worker-only process: ``GET /metrics`` and ``GET /readyz``.

A ``homing worker`` serves no API, so with ``HOMING_METRICS_PORT`` it serves these two
on ``HOMING_METRICS_HOST`` (127.0.0.1 by default) with aiohttp's server: the same scrape
as the API's ``/metrics`` (``homing.api.scrape``, behind ``HOMING_METRICS_TOKEN`` when
set) and the same checks as its ``/readyz``, where the worker loop must be running and
have gone round within ``HOMING_READY_WORKER_STALL_SECONDS``. Nothing else answers
(404); requests carry no body (1 KiB at most) and headers are bounded by aiohttp's
parser (8 KiB a line, 100 fields).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST

from homing.api.readiness import Readiness, not_ready
from homing.api.scrape import Scrape, check_token
from homing.errors import Unauthenticated
from homing.services import Services

__all__ = ["metrics_app", "metrics_serving"]

log = logging.getLogger("homing.metrics")

MAX_REQUEST_BYTES = 1024
_SCRAPE = web.AppKey("scrape", Scrape)
_READINESS = web.AppKey("readiness", Readiness)
_TOKEN = web.AppKey("token", str)


def metrics_app(services: Services) -> web.Application:
    """The two routes over ``services``: a scrape and the worker-process readiness."""
    app = web.Application(client_max_size=MAX_REQUEST_BYTES)
    app[_SCRAPE] = Scrape(services.jobs)
    app[_READINESS] = Readiness(services, worker_required=True)
    token = services.settings.metrics.token
    app[_TOKEN] = token.get_secret_value() if token else ""
    app.router.add_get("/metrics", _metrics, allow_head=False)
    app.router.add_get("/readyz", _readyz, allow_head=False)
    return app


async def _metrics(request: web.Request) -> web.Response:
    try:
        check_token(request.app[_TOKEN] or None, request.headers.get("Authorization"))
    except Unauthenticated as exc:
        body = {"error": {"code": exc.code, "message": exc.message, "details": {}}}
        return web.json_response(body, status=401)
    text = await request.app[_SCRAPE].text()
    return web.Response(body=text, headers={"Content-Type": CONTENT_TYPE_LATEST})


async def _readyz(request: web.Request) -> web.Response:
    checks = await request.app[_READINESS].checks()
    error = not_ready(checks)
    if error is None:
        return web.json_response({"status": "ok", "checks": checks})
    body = {"code": error.code, "message": error.message, "details": error.details}
    return web.json_response({"error": body}, status=503)


@contextlib.asynccontextmanager
async def metrics_serving(services: Services) -> AsyncIterator[int | None]:
    """Serve ``metrics_app`` on HOMING_METRICS_HOST:HOMING_METRICS_PORT for as long as
    the block runs; yields the port (None, and nothing served, while the port is unset)."""
    settings = services.settings
    if settings.metrics.port is None:
        yield None
        return
    runner = web.AppRunner(metrics_app(services), access_log=None, handle_signals=False)
    await runner.setup()
    try:
        site = web.TCPSite(runner, settings.metrics.host, settings.metrics.port)
        await site.start()
        port = _bound_port(runner)
        log.info("metrics listening", extra={"url": f"http://{settings.metrics.host}:{port}"})
        yield port
    finally:
        await runner.cleanup()


def _bound_port(runner: web.AppRunner) -> int:
    for address in runner.addresses:
        if isinstance(address, tuple):
            return int(address[1])
    raise AssertionError("the metrics server is bound to no TCP address")
