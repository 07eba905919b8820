"""Schemathesis against ``/openapi.json``: every route, with and without valid auth.

Zero 5xx, and every error in the envelope, with a status and a code its route's entry
lists. The normal suite runs a bounded, derandomised sample (the same cases every run,
so CI cannot flake on a lucky draw); the ``slow`` run draws many more cases at random.

Drawing a case costs more than the app's answer to it (several times more in negative
mode), so each case Hypothesis draws is sent under every credential whose budget
(``FAST_EXAMPLES``, ``SLOW_EXAMPLES``) it falls within, rather than each credential
drawing its own (``tests.adversary.fuzz_helpers``). Every credential still sends its
count of cases per operation and mode, each a draw of Hypothesis's own, and every answer
is judged alike. The slow run sends each random case to SQLite (all four credentials) and
to PostgreSQL (the two that get past authentication): each database gets as many random
cases per credential as when each drew its own, the pair meets the same values (what
one database refuses and the other stores is found on the same input), and the drawing,
most of the run's time, is done once.
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
# operation (41 when it was set at 150, 89 now), so the authenticated counts were
# halved to keep .ci/run under its budget.
SLOW_EXAMPLES = {"tenant-key": 75, "admin-token": 30, "unknown-key": 25, "no-auth": 25}
MODES = [GenerationMode.POSITIVE, GenerationMode.NEGATIVE]
# The long run on PostgreSQL too only for the credentials that get past authentication:
# an unknown key or none is refused at authentication, before any SQL but the key
# lookup, the same statement on both databases, so one database tells all there.
POSTGRES_AUTHS = ("tenant-key", "admin-token")


@pytest.fixture(scope="module")
def schema(harness: Harness) -> OpenApiSchema:
    loaded = schemathesis.openapi.from_asgi("/openapi.json", harness.app)
    assert isinstance(loaded, OpenApiSchema)
    return loaded


def _fuzzed(
    schema: OpenApiSchema,
    targets: dict[str, tuple[Harness, dict[str, int]]],
    mode: GenerationMode,
    *,
    run: str,
) -> dict[tuple[str, str], FuzzReport]:
    """Fuzz in one mode, each drawn case sent to every database in ``targets`` under
    each credential within its budget there; record each (database, credential)'s
    figures. The ``fast`` run draws the same cases every time, the ``slow`` one at random."""
    credentials = {
        (database, auth): Credential(harness, AUTH[auth](harness), count)
        for database, (harness, examples) in targets.items()
        for auth, count in examples.items()
    }
    reports = fuzz(schema, credentials, mode, derandomize=run == "fast")
    for (database, auth), report in reports.items():
        where = {"database": database} if run == "slow" else {}
        record(
            "hostile-schemathesis",
            run=run,
            **where,
            auth=auth,
            mode=mode.value,
            operations=report.operations,
            cases=report.cases,
            failures=len(report.failures),
            statuses=dict(report.statuses),
        )
    return reports


def _check(reports: dict[tuple[str, str], FuzzReport], mode: GenerationMode) -> None:
    for (database, auth), report in reports.items():
        label = f"{database}/{auth}/{mode.value}"
        assert report.cases > report.operations, f"{label}: too few cases reached the app"
    bad = {"/".join(key): report.failures for key, report in reports.items() if report.failures}
    shown = "\n".join(f"[{key}] {failure}" for key, found in bad.items() for failure in found[:15])
    counts = {key: len(found) for key, found in bad.items()}
    assert not bad, f"{mode.value}: bad answers {counts}:\n{shown}"


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
def test_no_5xx_and_every_error_in_the_envelope(
    harness: Harness, schema: OpenApiSchema, mode: GenerationMode
) -> None:
    reports = _fuzzed(schema, {"sqlite": (harness, FAST_EXAMPLES)}, mode, run="fast")
    _check(reports, mode)


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
def test_no_5xx_and_every_error_in_the_envelope_long_run(
    harness: Harness, pg_harness: Harness, mode: GenerationMode
) -> None:
    schema = schemathesis.openapi.from_asgi("/openapi.json", harness.app)
    assert isinstance(schema, OpenApiSchema)
    targets = {
        "sqlite": (harness, SLOW_EXAMPLES),
        "postgres": (pg_harness, {auth: SLOW_EXAMPLES[auth] for auth in POSTGRES_AUTHS}),
    }
    _check(_fuzzed(schema, targets, mode, run="slow"), mode)
