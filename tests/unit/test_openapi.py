"""docs/openapi.json is the document Homing serves, and its error responses tell the
truth: every code a domain error carries is listed under the status it is answered with,
and each route lists only the errors it can answer (``homing.api.route_errors``).

Regenerate the file with ``.venv/bin/python scripts/docs_gen.py``."""

from __future__ import annotations

import importlib
import json
import pkgutil
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel

import homing.api.app  # noqa: F401  (imports every module that defines an error)
from homing.api import schemas
from homing.api.error_responses import ERROR_CODES
from homing.api.errors import status_for
from homing.errors import HomingError
from tests.documented_errors import undocumented

ROOT = Path(__file__).resolve().parents[2]
CHECKED_IN = ROOT / "docs" / "openapi.json"


async def test_the_served_openapi_document_is_the_checked_in_one(api: httpx.AsyncClient) -> None:
    served = await api.get("/openapi.json")
    assert served.status_code == 200
    assert served.json() == json.loads(CHECKED_IN.read_text()), (
        "docs/openapi.json is stale: run .venv/bin/python scripts/docs_gen.py"
    )


def _every_error_class() -> list[type[HomingError]]:
    found: list[type[HomingError]] = []
    pending = [HomingError]
    while pending:
        cls = pending.pop()
        found.append(cls)
        pending.extend(cls.__subclasses__())
    return found


def test_every_domain_error_code_is_declared_under_its_status() -> None:
    classes = _every_error_class()
    assert len(classes) > 20, "the walk found the error tree"
    missing = []
    for cls in classes:
        status = status_for(cls.__new__(cls))
        if cls.code not in ERROR_CODES.get(status, ()):
            missing.append((cls.__name__, cls.code, status))
    assert missing == []


def _listed(document: dict[str, Any]) -> set[tuple[int, str]]:
    """Every (status, code) the document lists: under its operations, and once for the
    answers no operation gives (``components.responses``)."""
    responses = [
        (status, response)
        for item in document["paths"].values()
        for operation in item.values()
        for status, response in operation["responses"].items()
    ]
    for response in document["components"].get("responses", {}).values():
        responses.append((str(response["x-error-status"]), response))
    return {(int(s), code) for s, r in responses for code in r.get("x-error-codes", [])}


def test_the_document_lists_every_code_of_the_catalogue_and_no_other() -> None:
    document = json.loads(CHECKED_IN.read_text())
    assert _listed(document) == {(s, c) for s, codes in ERROR_CODES.items() for c in codes}


def test_each_route_lists_only_its_own_error_responses() -> None:
    document = json.loads(CHECKED_IN.read_text())
    operations = {
        (method.upper(), path): op
        for path, item in document["paths"].items()
        for method, op in item.items()
    }
    assert len(operations) > 50

    def codes(method: str, path: str, status: int) -> list[str]:
        response = operations[(method, path)]["responses"].get(str(status), {})
        return list(response.get("x-error-codes", []))

    # A probe is neither authenticated nor behind the host guard, and takes nothing.
    assert codes("GET", "/healthz", 401) == codes("GET", "/healthz", 422) == []
    assert codes("GET", "/healthz", 503) == [
        "unavailable",
        "storage_full",
        "storage_read_only",
        "storage_permission_denied",
    ]
    # A send: the sending gate's answers, its body's, and its own domain refusals.
    email = ("POST", "/v1/notifications/email")
    assert codes(*email, 429) == ["rate_limited"]
    assert "idempotency_conflict" in codes(*email, 422)
    assert "no_provider" in codes(*email, 422) and "no_sender" not in codes(*email, 422)
    assert codes(*email, 413) == ["payload_too_large"]
    assert codes(*email, 404) == [], "no path id, no 404"
    # A read with a path id: 404, no body, no rate limit, no domain refusal.
    job = ("GET", "/v1/jobs/{job_id}")
    assert codes(*job, 404) == ["not_found"]
    assert codes(*job, 413) == codes(*job, 429) == codes(*job, 409) == []
    assert codes(*job, 422) == ["validation_error", "invalid_request"]
    # The admin API: its guard's 401 and 404, no tenant's 403.
    assert codes("GET", "/admin/v1/queues", 404) == ["not_found"]
    assert codes("GET", "/admin/v1/queues", 403) == []
    for operation in operations.values():
        for status, declared in operation["responses"].items():
            if int(status) >= 400:
                schema = declared["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/ErrorResponse"}
                assert declared["x-error-codes"], "an error status lists its codes"
    # FastAPI's own validation shape is never sent, so it is not declared either.
    assert "HTTPValidationError" not in document["components"]["schemas"]
    assert "Retry-After" in operations[email]["responses"]["429"]["headers"]


def _answer(method: str, path: str, status: int, code: str) -> httpx.Response:
    body = {"error": {"code": code, "message": "m", "details": {}}}
    return httpx.Response(status, json=body, request=httpx.Request(method, f"http://h{path}"))


def test_an_answer_its_route_does_not_list_is_caught() -> None:
    """The check the ``api`` fixture and the fuzzing make of every answer."""
    assert undocumented(_answer("GET", "/v1/jobs/j1", 404, "not_found")) is None
    problem = undocumented(_answer("GET", "/v1/jobs/j1", 409, "conflict"))
    assert problem is not None and "GET /v1/jobs/{job_id}" in problem
    assert undocumented(_answer("GET", "/healthz", 401, "unauthenticated")) is not None
    assert undocumented(_answer("POST", "/v1/jobs/j1/cancel", 409, "conflict")) is None
    # The most literal template wins, as in the app's routing.
    assert undocumented(_answer("GET", "/feed/stream", 503, "overloaded")) is None
    # No documented operation: not judged here.
    assert undocumented(_answer("GET", "/nowhere", 404, "not_found")) is None


# The main request bodies, each shown with an example in the document.
EXAMPLED = [
    ("post", "/v1/notifications/email"),
    ("post", "/v1/notifications/email/batch"),
    ("post", "/v1/notifications/sms"),
    ("post", "/v1/notifications/sms/batch"),
    ("post", "/v1/notifications/chat"),
    ("post", "/v1/notifications/webhook"),
    ("post", "/v1/notifications/in-app"),
    ("post", "/v1/notifications"),
    ("post", "/v1/templates"),
    ("post", "/v1/templates/{ref}/versions"),
    ("post", "/v1/templates/{ref}/preview"),
    ("post", "/v1/layouts"),
    ("post", "/v1/layouts/{ref}/versions"),
    ("put", "/v1/recipients/{external_id}"),
    ("put", "/v1/categories/{key}"),
    ("post", "/v1/providers"),
    ("patch", "/v1/providers/{provider_id}"),
]


def _body_models() -> dict[str, type[BaseModel]]:
    found: dict[str, type[BaseModel]] = {}
    for module in pkgutil.iter_modules(schemas.__path__):
        loaded = importlib.import_module(f"{schemas.__name__}.{module.name}")
        for name, value in vars(loaded).items():
            if isinstance(value, type) and issubclass(value, BaseModel):
                found.setdefault(name, value)
    return found


def test_the_main_request_bodies_have_an_example_their_model_accepts() -> None:
    document = json.loads(CHECKED_IN.read_text())
    models = _body_models()
    for method, path in EXAMPLED:
        body = document["paths"][path][method]["requestBody"]["content"]["application/json"]
        name = body["schema"]["$ref"].rsplit("/", 1)[1]
        examples = document["components"]["schemas"][name].get("examples")
        assert examples, f"{method.upper()} {path}: its body {name} has no example"
        for example in examples:
            models[name].model_validate(example)
