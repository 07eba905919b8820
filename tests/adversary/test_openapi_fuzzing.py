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
from tests.adversary.fuzz_helpers import Credential, FuzzReport, fuzz
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
    examples: dict[str, int],
    mode: GenerationMode,
    **run: str,
) -> dict[str, FuzzReport]:
    """Fuzz with every credential in one mode (each drawn case sent under each
    credential within its budget), and record the figures of each credential's run;
    the ``fast`` run draws the same cases every time, the ``slow`` one draws at random."""
    credentials = {auth: Credential(AUTH[auth](harness), examples[auth]) for auth in examples}
    reports = fuzz(harness, schema, credentials, mode, derandomize=run["run"] == "fast")
    for auth, report in reports.items():
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
    return reports


def _check(reports: dict[str, FuzzReport], label: str) -> None:
    for auth, report in reports.items():
        assert report.cases > report.operations, f"{label}/{auth}: too few cases reached the app"
    bad = {auth: report.failures for auth, report in reports.items() if report.failures}
    shown = "\n".join(
        f"[{auth}] {failure}" for auth, failures in bad.items() for failure in failures[:15]
    )
    assert not bad, f"{label}: bad answers ({ {a: len(f) for a, f in bad.items()} }):\n{shown}"


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
def test_no_5xx_and_every_error_in_the_envelope(
    harness: Harness, schema: OpenApiSchema, mode: GenerationMode
) -> None:
    reports = _fuzzed(harness, schema, FAST_EXAMPLES, mode, run="fast")
    _check(reports, mode.value)


# The long run on PostgreSQL too only for the credentials that get past authentication:
# an unknown key or none is refused at authentication, before any SQL but the key
# lookup, the same statement on both databases, so one database tells all there.
LONG_RUNS = [
    pytest.param("sqlite", list(AUTH), id="sqlite"),
    pytest.param(
        "postgres", ["tenant-key", "admin-token"], id="postgres", marks=pytest.mark.postgres
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize(("database", "auths"), LONG_RUNS)
def test_no_5xx_and_every_error_in_the_envelope_long_run(
    request: pytest.FixtureRequest, database: str, auths: list[str], mode: GenerationMode
) -> None:
    harness: Harness = request.getfixturevalue("harness" if database == "sqlite" else "pg_harness")
    schema = schemathesis.openapi.from_asgi("/openapi.json", harness.app)
    assert isinstance(schema, OpenApiSchema)
    examples = {auth: SLOW_EXAMPLES[auth] for auth in auths}
    reports = _fuzzed(harness, schema, examples, mode, run="slow", database=database)
    _check(reports, f"{database}/{mode.value}")
