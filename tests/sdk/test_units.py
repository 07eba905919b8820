"""The SDK's pure parts: the models are what the pinned generator makes of the checked-in
document, one exception class per error code the document lists, the retry policy, and
the webhook helper against the published vectors and Homing's own signer."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from homing_client import WebhookVerificationError, errors, verify_webhook
from homing_client._core import MAX_RETRY_AFTER, retry_delay
from homing_client.webhooks import standard_signature

from homing.api.error_responses import ERROR_CODES
from homing.models import SignatureFormat
from homing.webhooks.signing import generate_secret, signature_headers

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "clients" / "python"
VECTORS = json.loads((ROOT / "tests" / "data" / "signatures.json").read_text())


def test_the_checked_in_models_are_what_the_generator_makes_today() -> None:
    checked = subprocess.run(
        [sys.executable, str(SDK / "generate.py"), "--check"], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stderr


def test_the_checked_in_sync_client_is_what_unasync_makes_of_the_async_one_today() -> None:
    checked = subprocess.run(
        [sys.executable, str(SDK / "unasync.py"), "--check"], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stderr


def test_every_error_code_of_the_document_has_its_own_exception_class() -> None:
    document = json.loads((ROOT / "docs" / "openapi.json").read_text())
    listed = {
        (int(status), code)
        for item in document["paths"].values()
        for operation in item.values()
        for status, response in operation["responses"].items()
        for code in response.get("x-error-codes", [])
    }
    # Answers no operation gives (a method the path lacks), with their status.
    for response in document["components"].get("responses", {}).values():
        status = response["x-error-status"]
        listed |= {(status, code) for code in response.get("x-error-codes", [])}
    assert listed == {(s, c) for s, codes in ERROR_CODES.items() for c in codes}
    assert set(errors.CODES) == listed
    classes = list(errors.CODES.values())
    assert len(set(classes)) == len(classes), "one class per code"


def test_an_unknown_code_raises_its_status_class() -> None:
    body = {"error": {"code": "brand_new", "message": "m", "details": {}}}
    error = errors.error_for(422, body, "rid")
    assert type(error) is errors.UnprocessableError
    assert (error.code, error.request_id) == ("brand_new", "rid")
    assert type(errors.error_for(418, None, None)) is errors.ApiError


def _response(status: int, retry_after: str | None) -> httpx.Response:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return httpx.Response(status, headers=headers)


def test_only_429_and_503_are_retried_and_retry_after_is_honoured_up_to_its_bound() -> None:
    assert retry_delay(_response(500, "1"), 0, 0.1) is None
    assert retry_delay(_response(422, None), 0, 0.1) is None
    wait = retry_delay(_response(429, "7"), 0, 0.1)
    assert wait is not None and 7 <= wait <= 7.1
    backoff = retry_delay(_response(503, None), 2, 0.1)
    assert backoff is not None and 0.4 <= backoff <= 0.5
    assert retry_delay(_response(429, str(int(MAX_RETRY_AFTER) + 1)), 0, 0.1) is None
    assert retry_delay(_response(429, "9" * 50), 0, 0.1) is not None  # unreadable: backoff


def test_the_standard_webhooks_vector_verifies() -> None:
    vector = VECTORS["standard_webhooks_v1"]
    body = vector["payload"].encode()
    signature = standard_signature(vector["secret"], vector["msg_id"], vector["timestamp"], body)
    assert signature == vector["expected_signature"]
    headers = {
        "webhook-id": vector["msg_id"],
        "webhook-timestamp": str(vector["timestamp"]),
        "webhook-signature": "v1,bm90IGl0 " + vector["expected_signature"],
    }
    assert verify_webhook(vector["secret"], headers, body, now=vector["timestamp"]) == {
        "test": 2432232314
    }
    with pytest.raises(WebhookVerificationError, match="too old"):
        verify_webhook(vector["secret"], headers, body, now=vector["timestamp"] + 301)


@pytest.mark.parametrize("fmt", list(SignatureFormat))
@pytest.mark.parametrize("standard", [True, False])
def test_what_homing_signs_the_sdk_verifies(fmt: SignatureFormat, standard: bool) -> None:
    secret, body, now = generate_secret(), b'{"a": 1}', 1_700_000_000.5
    headers = signature_headers([secret], "msg_1", now, body, fmt)
    if not standard:
        headers = {k: v for k, v in headers.items() if not k.startswith("webhook-")}
    assert verify_webhook(secret, headers, body, now=now) == {"a": 1}
    with pytest.raises(WebhookVerificationError):
        verify_webhook(generate_secret(), headers, body, now=now)
    with pytest.raises(WebhookVerificationError):
        verify_webhook(secret, headers, b'{"a": 2}', now=now)


def _surface(client_class: type) -> dict[str, list[str]]:
    """Every resource method that ``homing_client.aio`` or ``homing_client.client``
    exports, with its parameters' names."""
    import inspect

    from homing_client import aio, client
    from homing_client._async._resource import Resource as AsyncResource
    from homing_client._sync._resource import Resource

    async_side = client_class.__name__ == "AsyncClient"
    module, base = (aio, AsyncResource) if async_side else (client, Resource)
    found: dict[str, list[str]] = {}
    for name, resource in inspect.getmembers(module, inspect.isclass):
        if not issubclass(resource, base) or resource is base:
            continue
        for method, function in inspect.getmembers(resource, inspect.isfunction):
            if not method.startswith("_"):
                found[f"{name}.{method}"] = list(inspect.signature(function).parameters)
    return found


def _attached(client_class: type) -> dict[str, str]:
    """The client's resource attributes and the class of each."""
    instance = client_class(base_url="http://127.0.0.1:9", api_key="k")
    return {
        name: type(value).__name__
        for name, value in vars(instance).items()
        if not name.startswith("_") and hasattr(value, "_c")
    }


def test_the_async_client_has_the_sync_clients_surface() -> None:
    from homing_client import AsyncClient, Client

    sync_surface = _surface(Client)
    assert len(sync_surface) >= 80
    assert _surface(AsyncClient) == sync_surface
    assert _attached(AsyncClient) == _attached(Client)


def test_every_tenant_and_admin_path_of_the_document_has_a_wrapper() -> None:
    """Each /v1 and /admin/v1 path of the document appears in the async client's source
    (the sync one is generated from it, above): a path added to the API without a
    wrapper fails here."""
    package = SDK / "src" / "homing_client" / "_async"
    source = "".join(path.read_text() for path in sorted(package.glob("*.py")))
    document = json.loads((ROOT / "docs" / "openapi.json").read_text())
    missing = []
    for path, item in document["paths"].items():
        if not path.startswith(("/v1/", "/admin/v1/")):
            continue
        # "/v1/jobs/{job_id}/retry" is written f"/v1/jobs/{segment(job_id)}/retry".
        written = re.sub(r"\{(\w+)\}", r"{segment(\1)}", path)
        for method in item:
            if f'"{path}"' not in source and f'f"{written}"' not in source:
                missing.append(f"{method.upper()} {path}")
    assert missing == []
