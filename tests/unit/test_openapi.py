"""docs/openapi.json is the document Homing serves, and its error responses tell the
truth: every code a domain error carries is listed under the status it is answered with.

Regenerate the file with ``.venv/bin/python scripts/docs_gen.py``."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

import homing.api.app  # noqa: F401  (imports every module that defines an error)
from homing.api.error_responses import ERROR_CODES
from homing.api.errors import status_for
from homing.errors import HomingError

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


def test_every_route_declares_the_error_responses_with_their_codes() -> None:
    document = json.loads(CHECKED_IN.read_text())
    operations = [op for item in document["paths"].values() for op in item.values()]
    assert len(operations) > 50
    for operation in operations:
        responses = operation["responses"]
        for status, codes in ERROR_CODES.items():
            declared = responses[str(status)]
            assert declared["x-error-codes"] == list(codes)
            schema = declared["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/ErrorResponse"}
    # FastAPI's own validation shape is never sent, so it is not declared either.
    assert "HTTPValidationError" not in document["components"]["schemas"]
    assert "Retry-After" in operations[0]["responses"]["429"]["headers"]
