"""The operator's health pages: providers over a recent window, and the alerts.

Providers: calls by vendor and by account (tenant and account id, never credentials)
in the last 15 minutes, hour or day, with failures by class, the failure ratio the
provider-failing alert computes, throttled calls and the p95 latency bound
(``homing.store.provider_health``); accounts a bounded page at a time. Alerts: the
conditions firing now with since when (``alerts_firing``), what the checks find failing
at this moment under the HOMING_ALERT_* thresholds (``homing.managers.alert_checks``;
the evaluator fires them on its next turn), and the window's dead letters and provider
failures against their thresholds; and the recent alerts (``alert_history``), fired,
resolved or still firing, newest first with how long each fired, a page at a time by
cursor (the last row's id).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from starlette.requests import Request
from starlette.responses import Response

from homing.clock import as_datetime
from homing.console.access import OperatorDep, ServicesDep
from homing.console.page_params import Cursor
from homing.console.routing import ConsoleRoute
from homing.console.templating import render
from homing.domain.provider_health import LATENCY_BOUNDS_MS, Health
from homing.managers.alert_checks import Thresholds

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)

# The windows a page may look back over, by their name in the address.
WINDOWS = {"15m": 900, "1h": 3600, "24h": 86_400}
SPOKEN = {"15m": "15 minutes", "1h": "hour", "24h": "24 hours"}
ACCOUNTS = 25
Window = Annotated[str, Query(max_length=4)]
PageNumber = Annotated[int, Query(ge=1, le=1000)]
HISTORY = 50


def failing(health: Health, t: Thresholds) -> bool:
    """Whether these calls fail as the provider-failing alert counts it."""
    return health.calls >= t.provider_min_calls and (
        health.failure_ratio >= t.provider_failure_ratio
    )


@router.get("/operator/providers")
async def providers(
    request: Request,
    _view: OperatorDep,
    services: ServicesDep,
    window: Window = "15m",
    page: PageNumber = 1,
) -> Response:
    """Provider calls over the window, by vendor and by account (most failures first)."""
    problem = None
    vendors: list[Health] = []
    accounts: list[Health] = []
    more = False
    if window in WINDOWS:
        since = as_datetime(services.clock.now() - WINDOWS[window])
        vendors = await services.provider_health.by_vendor(since)
        accounts, more = await services.provider_health.by_account(
            since, limit=ACCOUNTS, offset=(page - 1) * ACCOUNTS
        )
    else:
        problem, window = "Choose a window from the list: 15m, 1h or 24h.", "15m"
    return render(
        request,
        "operator_providers.html",
        422 if problem else 200,
        problem=problem,
        windows=list(WINDOWS),
        window=window,
        spoken=SPOKEN[window],
        vendors=vendors,
        accounts=accounts,
        page=page,
        more=more,
        thresholds=services.alert_checks().thresholds,
        bounds=LATENCY_BOUNDS_MS,
        failing=failing,
    )


@router.get("/operator/alerts")
async def alerts(
    request: Request, _view: OperatorDep, services: ServicesDep, cursor: Cursor = None
) -> Response:
    """What is firing, what fails now under the thresholds, the window's signals, and
    the recent alerts (a page of them after ``cursor``)."""
    checks = services.alert_checks()
    t = checks.thresholds
    firing = await services.signals.firing_since()
    failing_now = await checks.failing()
    since = as_datetime(services.clock.now() - t.window_seconds)
    vendors = await services.provider_health.by_vendor(since)
    recent, next_cursor = await services.signals.history(limit=HISTORY, cursor=cursor)
    return render(
        request,
        "operator_alerts.html",
        recent=recent,
        cursor=cursor,
        next_cursor=next_cursor,
        history_rows=services.settings.alerts.history_rows,
        now=as_datetime(services.clock.now()),
        firing=firing,
        pending={k: v for k, v in failing_now.items() if k not in {f.key for f in firing}},
        cleared=[f.key for f in firing if f.key not in failing_now],
        dead=await services.signals.dead_letters_since(since),
        vendors=vendors,
        thresholds=t,
        failing=failing,
        window_minutes=round(t.window_seconds / 60),
    )
