"""The operator's recent alerts: a provider failing at the sandbox fires and shows as
still firing; once it recovers it shows resolved with how long it fired; the history
pages by cursor, newest first, and keeps only the newest HOMING_ALERT_HISTORY_ROWS."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest

from homing.clock import ManualClock, as_datetime
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient, deliver
from tests.console_helpers import add_user, browser, sign_in
from tests.e2e.conftest import register, send
from tests.fixtures import Sandbox, settings_for

ALERTS = "/operator/alerts"
KEPT = 52  # HOMING_ALERT_HISTORY_ROWS here: two rows past the page of 50


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(
        database_url, tmp_path, secret_key, alert_provider_min_calls=4, alert_history_rows=KEPT
    )


def _rows(html: str, css: str) -> list[str]:
    """The text of every table row of class ``css``, tags dropped, spaces collapsed."""
    found = re.findall(rf'<tr class="{css}">(.*?)</tr>', html, re.S)
    return [" ".join(re.sub(r"<[^>]+>", " ", row).split()) for row in found]


async def _evaluate(services: Services, clock: ManualClock) -> None:
    clock.advance(services.settings.alerts.interval_seconds)
    assert await services.check_rounds().run()


async def test_a_failing_provider_shows_firing_then_resolved_with_how_long_it_fired(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await add_user(services, "root@example.com", operator=True)
    await register(tenant, sandbox, "resend", 1)
    await sb.fault("resend", status=503)
    for _ in range(4):
        await send(tenant)
    await deliver(services)
    async with browser(services) as client:
        await sign_in(client, "root@example.com")
        empty = await client.get(ALERTS)
        await _evaluate(services, clock)
        firing = await client.get(ALERTS)
        await sb.http.delete("/_sandbox/faults")
        clock.advance(services.settings.alerts.window_seconds)
        await deliver(services)  # the retries succeed
        await _evaluate(services, clock)
        resolved = await client.get(ALERTS)
    assert "Recent alerts" in empty.text and "No alert has fired yet" in empty.text
    [still] = _rows(firing.text, "still-firing")
    assert still.startswith("provider_failing:resend") and "still firing" in still
    assert "0 s so far" in still and "4 of 4 calls failed" in still
    assert _rows(firing.text, "resolved") == []
    [done] = _rows(resolved.text, "resolved")
    assert done.startswith("provider_failing:resend") and "4 of 4 calls failed" in done
    assert "16 min" in done  # the window and one interval between the evaluations
    assert done.count("UTC") == 2 and _rows(resolved.text, "still-firing") == []
    assert "No alert has fired yet" not in resolved.text
    assert tenant.tenant_id not in done


async def test_the_history_pages_newest_first_and_is_trimmed_at_its_bound(
    services: Services, clock: ManualClock
) -> None:
    await add_user(services, "root@example.com", operator=True)
    signals = services.signals
    start = as_datetime(clock.now())
    for n in range(KEPT + 3):
        at = start + timedelta(minutes=n)
        assert await signals.start(f"queue_not_draining:q{n:02}", f"detail {n}", at)
        if n % 2 == 0:
            assert await signals.stop(f"queue_not_draining:q{n:02}", at + timedelta(seconds=75))
    async with browser(services) as client:
        await sign_in(client, "root@example.com")
        first = await client.get(ALERTS)
        [older] = re.findall(r'href="(/operator/alerts\?cursor=[^"#]+)#recent"', first.text)
        second = await client.get(older)
        past = await client.get(ALERTS, params={"cursor": "0" * 36})
    shown = [_keys(first.text), _keys(second.text)]
    newest = [f"{n:02}" for n in range(KEPT + 2, 2, -1)]  # the newest KEPT of KEPT + 3
    assert shown == [newest[:50], newest[50:]]
    assert len((await signals.history(limit=100, cursor=None))[0]) == KEPT
    assert f"The newest {KEPT} alerts are kept" in first.text
    assert "1 min 15 s" in _rows(first.text, "resolved")[0]
    assert "Newest alerts" not in first.text
    assert "Newest alerts" in second.text and "Older alerts" not in second.text
    assert past.status_code == 200 and "No older alerts are kept" in past.text


def _keys(html: str) -> list[str]:
    return re.findall(r"queue_not_draining:q(\d\d)</code></td><td>", html)
