"""An anonymous caller guessing console passwords (issue #22, items 1 and 2), against
real ``homing api`` processes over HTTP.

The lockout used to look at the failure window, run Argon2 (~250 ms), then count the
failure: a burst of guesses sent at once was checked in full, the right password
among them signing in. Now a check is counted before it runs, so however the guesses
are timed, and across processes sharing Redis, at most HOMING_CONSOLE_LOGIN_FAILURES
of them are checked in the window. An unknown email used to answer in a few
milliseconds and a wrong password in ~250: now both run one Argon2 check, and their
times overlap.

The module's processes are shared (``tests.adversary.process_helpers``): one keeping
its failure windows in memory, and two sharing theirs in Redis, all on one data directory
made once, with the lockout at five failures. The tests keep apart by email: the bursts
guess one user's password (each kind of window counts its own), the timing test checks
two other users' and two unknown emails, each at most four times, so none is locked.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.admission_helpers import unique_prefix
from tests.adversary.process_helpers import Prepared, api_processes, prepared
from tests.conftest import REDIS_URL
from tests.console_helpers import PASSWORD
from tests.console_processes import SLOW

FAILURES = 5
GUESSES = 24
EMAIL = "ada@example.com"
# Known emails of the timing test: alternated, so that each gets fewer checks than lock it.
TIMING_EMAILS = ("grace@example.com", "hopper@example.com")
ROUNDS = 7
# Medians of interleaved samples; the old code answered an unknown email ~35 times
# faster than a wrong password, so a band this wide still tells the two apart.
RATIO_BAND = (0.5, 2.0)


@pytest.fixture(scope="module")
def data_dir(sqlite_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Prepared:
    """One tenant and its owners, with the processes' environment."""
    env = {
        "HOMING_LOG_LEVEL": "warning",
        "HOMING_CONSOLE_LOGINS_PER_MINUTE": "10000",
        "HOMING_CONSOLE_LOGIN_FAILURES": str(FAILURES),
    }
    owners = [(email, "acme") for email in (EMAIL, *TIMING_EMAILS)]
    return prepared(sqlite_template, tmp_path_factory.mktemp("sign-in"), env, ("acme",), owners)


@pytest.fixture(scope="module")
def memory_api(data_dir: Prepared) -> Iterator[list[str]]:
    """One ``homing api`` keeping its failure windows in its memory."""
    with api_processes(data_dir.env, Path(data_dir.env["HOMING_DATA_DIR"]), 1, "memory") as urls:
        yield urls


@pytest.fixture(scope="module")
def redis_api(data_dir: Prepared) -> Iterator[list[str]]:
    """Two ``homing api`` processes sharing their failure windows in Redis."""
    env = data_dir.env | {"HOMING_REDIS_URL": REDIS_URL, "HOMING_REDIS_KEY_PREFIX": unique_prefix()}
    with api_processes(env, Path(data_dir.env["HOMING_DATA_DIR"]), 2, "redis") as urls:
        yield urls


async def _sign_in(url: str, email: str, password: str) -> httpx.Response:
    # A client of its own: every guess on a connection of its own, all at once.
    async with httpx.AsyncClient(base_url=url, timeout=SLOW) as client:
        return await client.post("/sign-in", data={"email": email, "password": password})


@pytest.fixture
def urls(request: pytest.FixtureRequest) -> list[str]:
    """The processes keeping their failure windows where ``request.param`` says."""
    found: list[str] = request.getfixturevalue(f"{request.param}_api")
    return found


@pytest.mark.parametrize(
    ("urls", "processes"),
    [("memory", 1), pytest.param("redis", 2, marks=pytest.mark.redis)],
    indirect=["urls"],
)
@pytest.mark.sql("concurrent guesses against one lockout counter")
async def test_a_burst_of_guesses_gets_no_more_checks_than_the_lockout_allows(
    urls: list[str], processes: int
) -> None:
    assert len(urls) == processes
    guesses = [f"guess number {n:02d}" for n in range(GUESSES)] + [PASSWORD]
    answers = await asyncio.gather(
        *(_sign_in(urls[n % len(urls)], EMAIL, g) for n, g in enumerate(guesses))
    )
    codes = [answer.status_code for answer in answers]
    # Wrong passwords checked: at most the lockout's failures. The right one, when its
    # check ran before the lock, signs in and gives its count back (people.py), so a
    # wrong guess still in flight may take that place: never a sixth wrong check.
    wrong, right = codes.count(401), codes.count(303)
    assert wrong <= FAILURES, f"{wrong} wrong passwords checked of {len(codes)}: {codes}"
    assert right <= 1, codes
    assert codes.count(429) == len(codes) - wrong - right
    assert all("too many failed sign-ins" in a.text for a in answers if a.status_code == 429)


async def _timed(url: str, email: str, password: str) -> float:
    started = time.perf_counter()
    answer = await _sign_in(url, email, password)
    elapsed = time.perf_counter() - started
    assert answer.status_code == 401, answer.text
    return elapsed


async def test_an_unknown_email_takes_as_long_as_a_wrong_password(memory_api: list[str]) -> None:
    (url,) = memory_api
    # The longest email and password the form takes, and a plain unknown email.
    longest = ("x" * 240 + "@example.com").rjust(254, "y"), "p" * 256
    unknown_ones = [("bob@example.com", "a wrong password"), longest]
    # Each email is checked at most four times (the warm-up on the second known one):
    # under the lockout's five failures, every answer is a check's 401.
    known_ones = [(email, "w" * 12) for email in TIMING_EMAILS]
    known: list[float] = []
    unknown: list[float] = []
    await _timed(url, TIMING_EMAILS[1], "a first wrong password")  # warm: imports, pool, cache
    for n in range(ROUNDS):
        # Interleaved, in alternating order, so that load drifting over the run
        # weighs on both alike.
        first, second = (known, unknown) if n % 2 else (unknown, known)
        for samples in (first, second):
            email, password = (unknown_ones if samples is unknown else known_ones)[n % 2]
            samples.append(await _timed(url, email, password))
    ratio = statistics.median(unknown) / statistics.median(known)
    low, high = RATIO_BAND
    assert low <= ratio <= high, f"unknown/known = {ratio:.2f} ({unknown} vs {known})"
