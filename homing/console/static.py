"""The console's two static files, ours and small: one stylesheet, one script.

Read once from the package and served with a content hash as their ETag, so a browser
revalidates cheaply; the script only enhances (copy buttons), every flow works without.
"""

from __future__ import annotations

import hashlib
from importlib import resources

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from homing.console.routing import ConsoleRoute

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)

_TYPES = {"console.css": "text/css; charset=utf-8", "console.js": "text/javascript; charset=utf-8"}


def _load(name: str) -> tuple[bytes, str]:
    body = resources.files("homing.console").joinpath("static", name).read_bytes()
    return body, '"' + hashlib.sha256(body).hexdigest()[:16] + '"'


def _serve(request: Request, name: str) -> Response:
    body, etag = _load(name)
    headers = {"ETag": etag, "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    return Response(body, media_type=_TYPES[name], headers=headers)


@router.get("/static/console.css")
async def stylesheet(request: Request) -> Response:
    return _serve(request, "console.css")


@router.get("/static/console.js")
async def script(request: Request) -> Response:
    return _serve(request, "console.js")
