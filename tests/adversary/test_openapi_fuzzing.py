"""Schemathesis against ``/openapi.json``: every route, with and without valid auth.

Zero 5xx, and every error in the envelope, with a status and a code its route's entry
lists. The normal suite runs a bounded, derandomised sample (the same cases every run,
so CI cannot flake on a lucky draw); the ``slow`` run draws many more cases at random.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import schemathesis
from schemathesis import GenerationMode
from schemathesis.specs.openapi.schemas import OpenApiSchema

from tests.adversary.conftest import ADMIN_TOKEN, Harness
from tests.adversary.fuzz_helpers import FuzzReport, fuzz
from tests.figures import record

pytestmark = pytest.mark.usefixtures("loopback_guard")

AUTH: dict[str, Callable[[Harness], str | None]] = {
    "tenant-key": lambda h: f"Bearer {h.key}",
    "admin-token": lambda _h: f"Bearer {ADMIN_TOKEN}",
    "unknown-key": lambda _h: "Bearer hk_unknownUnknownUnknownUnknown0000000000",
    "no-auth": lambda _h: None,
}
# Cases per operation in the normal suite: most for the credentials that get past
# authentication, a few for those that should stop there.
FAST_EXAMPLES = {"tenant-key": 12, "admin-token": 6, "unknown-key": 3, "no-auth": 3}
# The slow run draws about six times as many, at random. Its cost grows with every
# operation (41 when it was set at 150, 89 now: 18 of the slow run's 22 minutes of test
# time), so the authenticated counts were halved to keep .ci/run under its budget.
SLOW_EXAMPLES = {"tenant-key": 75, "admin-token": 30, "unknown-key": 25, "no-auth": 25}
MODES = [GenerationMode.POSITIVE, GenerationMode.NEGATIVE]


@pytest.fixture(scope="module")
def schema(harness: Harness) -> OpenApiSchema:
    loaded = schemathesis.openapi.from_asgi("/openapi.json", harness.app)
    assert isinstance(loaded, OpenApiSchema)
    return loaded


def _fuzzed(
    harness: Harness,
    schema: OpenApiSchema,
    auth: str,
    mode: GenerationMode,
    examples: int,
    **run: str,
) -> FuzzReport:
    """Fuzz with one credential and mode, and record the figures of that run; the
    ``fast`` run draws the same cases every time, the ``slow`` one draws at random."""
    derandomize = run["run"] == "fast"
    report = fuzz(harness, schema, AUTH[auth](harness), mode, examples, derandomize=derandomize)
    record(
        "hostile-schemathesis",
        **run,
        auth=auth,
        mode=mode.value,
        operations=report.operations,
        cases=report.cases,
        failures=len(report.failures),
        statuses=dict(report.statuses),
    )
    return report


def _check(report: FuzzReport, label: str) -> None:
    assert report.cases > report.operations, f"{label}: too few cases reached the app"
    shown = "\n".join(report.failures[:15])
    assert not report.failures, f"{label}: {len(report.failures)} bad answers:\n{shown}"


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("auth", list(AUTH))
def test_no_5xx_and_every_error_in_the_envelope(
    harness: Harness, schema: OpenApiSchema, auth: str, mode: GenerationMode
) -> None:
    report = _fuzzed(harness, schema, auth, mode, FAST_EXAMPLES[auth], run="fast")
    _check(report, f"{auth}/{mode.value}")


# The long run on PostgreSQL too only for the credentials that get past authentication:
# an unknown key or none is refused at authentication, before any SQL but the key
# lookup, the same statement on both databases, so one database tells all there.
LONG_RUNS = [
    *(pytest.param("sqlite", auth, id=f"sqlite-{auth}") for auth in AUTH),
    *(
        pytest.param("postgres", auth, id=f"postgres-{auth}", marks=pytest.mark.postgres)
        for auth in ("tenant-key", "admin-token")
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize(("database", "auth"), LONG_RUNS)
def test_no_5xx_and_every_error_in_the_envelope_long_run(
    request: pytest.FixtureRequest, database: str, auth: str, mode: GenerationMode
) -> None:
    harness: Harness = request.getfixturevalue("harness" if database == "sqlite" else "pg_harness")
    schema = schemathesis.openapi.from_asgi("/openapi.json", harness.app)
    assert isinstance(schema, OpenApiSchema)
    report = _fuzzed(
        harness, schema, auth, mode, SLOW_EXAMPLES[auth], run="slow", database=database
    )
    _check(report, f"{database}/{auth}/{mode.value}")
