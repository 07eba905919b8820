"""Drive Schemathesis cases through the in-process app and judge every answer.

A case passes when the answer is not a 5xx and, if it is an error, is exactly the
envelope ``{"error": {"code": str, "message": str, "details": object}}`` with a status
and a ``code`` the operation's OpenAPI entry lists (``tests.documented_errors``: the
check ``status_code_conformance`` of Schemathesis makes, down to the code). Failures are
collected rather than raised, so one run reports every distinct problem (without
Hypothesis shrinking each one), and the counts feed docs/reliability.md.

Each drawn case is sent once under every credential whose budget it falls within: the
first ``n`` cases Hypothesis draws for an operation go out with each credential given
``n``. A credential names the app it goes to (``Credential.harness``), so one draw can
serve the same credential on two databases. Drawing a case costs more than the app's
answer to it, so the credentials share one draw instead of drawing alike inputs apiece.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.core.result import Err
from schemathesis.generation.case import Case
from schemathesis.schemas import APIOperation
from schemathesis.specs.openapi.schemas import OpenApiSchema

from tests.adversary.conftest import BASE_URL, Harness
from tests.documented_errors import undocumented

Operation = APIOperation[Any, Any, Any, Any]
Drawn = Case[Operation]
Key = TypeVar("Key", bound=Hashable)


@dataclass
class FuzzReport:
    cases: int = 0
    failures: list[str] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    operations: int = 0
    unsatisfiable: int = 0


@dataclass(frozen=True)
class Credential:
    """Where one credential's cases go (the app in ``harness``), what it sends as
    ``Authorization`` (None: no header), and how many of each operation's drawn cases
    it sends."""

    harness: Harness
    authorization: str | None
    examples: int


def envelope_problem(response: httpx.Response) -> str | None:
    """Why this answer breaks the error contract, or None when it keeps it."""
    if response.status_code >= 500:
        return f"server error {response.status_code}"
    if response.status_code < 400:
        return None
    try:
        body = response.json()
    except ValueError:
        return f"{response.status_code} with a body that is not JSON"
    if not isinstance(body, dict) or set(body) != {"error"}:
        return f"{response.status_code} outside the envelope: {str(body)[:200]}"
    error = body["error"]
    if not isinstance(error, dict) or set(error) != {"code", "message", "details"}:
        return f"{response.status_code} with a malformed error: {str(error)[:200]}"
    if not isinstance(error["code"], str) or not isinstance(error["message"], str):
        return f"{response.status_code} with a non-string code or message"
    if not isinstance(error["details"], dict):
        return f"{response.status_code} with details that are not an object"
    return None


def _request_kwargs(case: Drawn, authorization: str | None) -> dict[str, Any]:
    sent = case.as_transport_kwargs(base_url=BASE_URL)
    headers = {k: v for k, v in sent["headers"].items() if k.lower() != "authorization"}
    if authorization is not None:
        headers["Authorization"] = authorization
    kwargs: dict[str, Any] = {"headers": headers, "params": sent.get("params") or None}
    if "json" in sent:
        kwargs["json"] = sent["json"]
    elif sent.get("data") is not None:
        data = sent["data"]
        kwargs["content"] = data.encode() if isinstance(data, str) else data
    return {"method": sent["method"], "url": sent["url"], **kwargs}


def fuzz(
    schema: OpenApiSchema,
    credentials: Mapping[Key, Credential],
    mode: GenerationMode,
    *,
    derandomize: bool,
) -> dict[Key, FuzzReport]:
    """Draw up to the largest budget of cases per operation of ``schema`` and send each
    under every credential whose budget it is within; return what each one saw."""
    reports = {name: FuzzReport() for name in credentials}
    examples = max(credential.examples for credential in credentials.values())
    for result in schema.get_all_operations():
        for report in reports.values():
            report.operations += 1
        if isinstance(result, Err):
            raise result.err()  # an operation the schema does not describe validly
        run = _exercise(result.ok(), credentials, mode, reports)
        settings = hypothesis_settings(
            max_examples=examples,
            deadline=None,
            database=None,
            derandomize=derandomize,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        try:
            settings(run)()
        except Unsatisfiable:
            # Nothing to break in this mode (a negative case for a route that takes no
            # input at all): the positive run covers the operation.
            for report in reports.values():
                report.unsatisfiable += 1
    return reports


def _exercise(
    operation: Operation,
    credentials: Mapping[Key, Credential],
    mode: GenerationMode,
    reports: Mapping[Key, FuzzReport],
) -> Callable[[], None]:
    """A Hypothesis test that sends one drawn case of ``operation`` under each
    credential still within its budget, and judges every answer."""
    drawn = 0

    @given(case=operation.as_strategy(generation_mode=mode))
    def exercise(case: Drawn) -> None:
        nonlocal drawn
        index, drawn = drawn, drawn + 1
        for name, credential in credentials.items():
            if index < credential.examples:
                _send(credential, operation, case, reports[name])

    return exercise


def _send(credential: Credential, operation: Operation, case: Drawn, report: FuzzReport) -> None:
    harness = credential.harness
    try:
        request = harness.client.build_request(**_request_kwargs(case, credential.authorization))
    except (httpx.HTTPError, UnicodeError, ValueError, TypeError):
        return  # not expressible as an HTTP request; nothing reached Homing
    response = harness.run(harness.client.send(request))
    report.cases += 1
    report.statuses[response.status_code] += 1
    problem = envelope_problem(response) or undocumented(response)
    if problem is not None:
        report.failures.append(
            f"{operation.label}: {problem}\n    {request.method} {request.url}"
            f"\n    body: {request.content[:300]!r}"
        )
