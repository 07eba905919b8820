"""``/docs`` (Swagger UI) and ``/redoc`` (ReDoc) with their assets served by Homing itself,
so the API reference works offline and behind a firewall: no CDN, no font service.

The assets are the ones the ``fastapi-offline`` package ships (pinned in
requirements/run.txt), served by name from four fixed routes (no path parameter: nothing
to traverse), read once, with a content hash as their ETag.
"""

from __future__ import annotations

import functools
import hashlib
import secrets
from importlib import resources

from fastapi import APIRouter
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

ASSETS = "/docs/assets"
_TYPES = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "redoc.standalone.js": "text/javascript; charset=utf-8",
    "favicon.png": "image/png",
}

# The pages load only Homing's own files: the one inline script (Swagger UI's start) by
# its nonce, ReDoc's worker from a blob; its "by Redocly" logo from a CDN is refused
# before any request, so a reader's browser calls nowhere but this Homing.
_CSP = (
    "default-src 'self'; script-src 'self' 'nonce-{nonce}'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)

router = APIRouter(include_in_schema=False)


def _page(html: HTMLResponse) -> HTMLResponse:
    """``html`` with a fresh nonce on its inline scripts and the pages' CSP."""
    nonce = secrets.token_urlsafe(16)
    body = bytes(html.body).decode().replace("<script>", f'<script nonce="{nonce}">')
    headers = {
        "Content-Security-Policy": _CSP.format(nonce=nonce),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
    }
    return HTMLResponse(body, headers=headers)


@functools.cache
def _asset(name: str) -> tuple[bytes, str]:
    body = resources.files("fastapi_offline").joinpath("static", name).read_bytes()
    return body, '"' + hashlib.sha256(body).hexdigest()[:16] + '"'


def _serve(request: Request, name: str) -> Response:
    body, etag = _asset(name)
    headers = {
        "ETag": etag,
        "Cache-Control": "public, max-age=3600",
        "X-Content-Type-Options": "nosniff",
    }
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    return Response(body, media_type=_TYPES[name], headers=headers)


def _root(request: Request) -> str:
    return str(request.scope.get("root_path", "")).rstrip("/")


@router.get("/docs")
async def swagger_ui(request: Request) -> HTMLResponse:
    root = _root(request)
    return _page(
        get_swagger_ui_html(
            openapi_url=f"{root}/openapi.json",
            title="Homing API",
            swagger_js_url=f"{root}{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS}/favicon.png",
            oauth2_redirect_url=None,
        )
    )


@router.get("/redoc")
async def redoc(request: Request) -> HTMLResponse:
    root = _root(request)
    return _page(
        get_redoc_html(
            openapi_url=f"{root}/openapi.json",
            title="Homing API",
            redoc_js_url=f"{root}{ASSETS}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{ASSETS}/favicon.png",
            with_google_fonts=False,
        )
    )


@router.get(f"{ASSETS}/swagger-ui-bundle.js")
async def swagger_script(request: Request) -> Response:
    return _serve(request, "swagger-ui-bundle.js")


@router.get(f"{ASSETS}/swagger-ui.css")
async def swagger_stylesheet(request: Request) -> Response:
    return _serve(request, "swagger-ui.css")


@router.get(f"{ASSETS}/redoc.standalone.js")
async def redoc_script(request: Request) -> Response:
    return _serve(request, "redoc.standalone.js")


@router.get(f"{ASSETS}/favicon.png")
async def favicon(request: Request) -> Response:
    return _serve(request, "favicon.png")
