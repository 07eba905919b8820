"""Whether an error the API answered is one its route's OpenAPI entry lists.

The ``api`` fixture checks every answer of every test through it, and the fuzzing
(``tests/adversary/test_openapi_fuzzing.py``) every case it sends: an error status, or
a ``code`` under it, that the route's entry does not list fails the test that met it. A
request that reaches no documented route (no such path, another method, a console page)
is not judged here.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import httpx
from fastapi.openapi.utils import get_openapi

from homing import __version__
from homing.api.app import routes

_PARAMETER = re.compile(r"\{[^}]+\}")


@cache
def _document() -> dict[str, Any]:
    return get_openapi(title="Homing", version=__version__, routes=list(routes()))


@cache
def _templates() -> list[tuple[re.Pattern[str], str]]:
    """Each documented path template as a pattern, the most literal first (so
    ``/feed/stream`` is tried before ``/feed/{item_id}/{mark}``, as the app routes)."""
    found = []
    for template in _document()["paths"]:
        literals = _PARAMETER.split(template)
        pattern = re.compile("^" + "[^/]+".join(re.escape(part) for part in literals) + "$")
        found.append((pattern, template))
    return sorted(found, key=lambda item: -len(_PARAMETER.sub("", item[1])))


def _operation(method: str, path: str) -> tuple[str, dict[str, Any]] | None:
    """The documented operation a request reaches: its path template and entry."""
    for pattern, template in _templates():
        operation = _document()["paths"][template].get(method.lower())
        if operation is not None and pattern.match(path):
            return template, operation
    return None


def _code(response: httpx.Response) -> str | None:
    try:
        body = response.json()
    except ValueError:
        return None
    error = body.get("error") if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, str) else None


def undocumented(response: httpx.Response) -> str | None:
    """Why this answer is not one its route documents, or None when it is (or is no
    error in the envelope of a documented route). The body must have been read."""
    if response.status_code < 400:
        return None
    request = response.request
    found = _operation(request.method, request.url.path)
    code = _code(response)
    if found is None or code is None:
        return None
    template, operation = found
    listed = operation["responses"].get(str(response.status_code), {}).get("x-error-codes", [])
    if code in listed:
        return None
    return (
        f"{request.method} {template} answered {response.status_code} {code!r}, "
        f"which its OpenAPI entry does not list (it lists {listed})"
    )


async def check_documented(response: httpx.Response) -> None:
    """An httpx response hook: fail on an error the route does not document."""
    if response.status_code >= 400:
        await response.aread()
        problem = undocumented(response)
        assert problem is None, problem
