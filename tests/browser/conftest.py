"""Browser tests: Debian's Chromium driven by Playwright (from PyPI) through
``executable_path`` (Playwright's own browser download cannot run here), against a
real Homing served by uvicorn on a loopback port, with the sandbox as the vendors.

Chromium must be installed (``apt-get install chromium``; ``.ci/run`` installs it when
missing): without it these tests fail, they never skip. Chromium resolves no name but
loopback and makes no background requests, so nothing leaves the machine.

One Chromium per test process (a worker), launched once and shared: each test gets a
context of its own (its own cookies, storage and permissions), and runs, with its async
fixtures, in the process's one event loop, the loop the browser's driver lives in (see
``pytest_collection_modifyitems`` and ``pytest_fixture_setup`` below). Launching the
driver and Chromium cost a few seconds of CPU per test before.

Screenshots are written by the tests to ``tmp_path``; test_every_page_browser's go into
``docs/screenshots/`` when ``HOMING_TEST_SCREENSHOTS=1`` (how docs/console.md's are made:
the data and the clock are fixed, so a run draws the same pages).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import AsyncIterator, Generator
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

import pytest
import pytest_asyncio
from playwright.async_api import Browser, Page, async_playwright

from homing.api.app import create_app
from homing.clock import ManualClock
from homing.services import Services
from homing.settings import Settings
from tests.fixtures import serving, settings_for


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    """The suite's settings with a provider call deadline a loaded machine meets: the
    sandbox answers from the test's own loop, which Chromium's driver shares, and a
    test send that outlived 2 s under CI's load was left for a retry the test never
    runs (the drain counted it, the sandbox had nothing)."""
    return settings_for(database_url, tmp_path, secret_key, provider_timeout_seconds=15)


CHROMIUM = Path(os.environ.get("HOMING_TEST_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",  # CI runs as root
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication",
]
# A fixed moment: the pages show the same dates on every run.
START = datetime(2026, 5, 4, 9, 30, tzinfo=UTC).timestamp()
REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
# The loop every browser test, its async fixtures and the shared browser run in.
LOOP: Final = "session"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test of this directory runs in the process's one loop (``LOOP``)."""
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.asyncio(loop_scope=LOOP), append=False)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_fixture_setup(
    fixturedef: pytest.FixtureDef[object], request: pytest.FixtureRequest
) -> Generator[None, object, object]:
    """An async fixture a test of this directory uses (``services``, ``site``, ...) runs
    in the test's loop, not one of its own: pytest-asyncio reads the loop scope from
    the fixture's function while it sets the fixture up, so it is lent one for that
    moment (only for this directory's tests: this hook is this conftest's)."""
    func = fixturedef.func
    lend = (inspect.iscoroutinefunction(func) or inspect.isasyncgenfunction(func)) and (
        getattr(func, "_loop_scope", None) is None
    )
    if not lend:
        return (yield)
    setattr(func, "_loop_scope", LOOP)  # noqa: B010 (a function attribute mypy cannot see)
    try:
        return (yield)
    finally:
        delattr(func, "_loop_scope")


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture
async def site(services: Services) -> AsyncIterator[str]:
    """The Homing of ``services`` (API and console) on a loopback port."""
    async with serving(create_app(services)) as url:
        yield url


@pytest_asyncio.fixture(scope="session", loop_scope=LOOP)
async def browser() -> AsyncIterator[Browser]:
    """Chromium, launched once per test process; a test opens contexts of its own."""
    assert CHROMIUM.exists(), (
        f"Chromium is needed at {CHROMIUM} for the browser tests: apt-get install chromium"
    )
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            await launched.close()


@pytest.fixture
async def page(browser: Browser, site: str) -> AsyncIterator[Page]:
    context = await browser.new_context(base_url=site, viewport={"width": 1100, "height": 720})
    opened = await context.new_page()
    try:
        yield opened
    finally:
        await context.close()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    """Where a test's screenshots of the states it reaches go (looked at when it fails)."""
    return tmp_path


@pytest.fixture
def gallery(tmp_path: Path, database_url: str) -> Path:
    """Where the screenshots of every page go (test_every_page_browser):
    ``docs/screenshots`` when asked for (from SQLite runs), else ``tmp_path``."""
    if os.environ.get("HOMING_TEST_SCREENSHOTS") == "1" and database_url.startswith("sqlite"):
        return REPO / "docs" / "screenshots"
    return tmp_path


async def shoot(page: Page, where: Path, name: str) -> Path:
    """A PNG of the page's viewport, asserted written."""
    where.mkdir(parents=True, exist_ok=True)
    path = where / f"{name}.png"
    await page.screenshot(path=str(path), full_page=False)
    assert path.stat().st_size > 1000
    return path
