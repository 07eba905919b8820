"""Rendering pages: Jinja2 with autoescaping on for every template, and the headers
every console response carries.

A tenant controls much of what the console shows (subjects, error texts, provider
names, a tenant's name); autoescaping turns each into text, never markup. The
Content-Security-Policy allows only our own files: no inline script, no inline style,
no frames, forms posting only here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    # Pages show a tenant's data: never kept by a shared cache or the back button.
    "Cache-Control": "no-store",
}


def moment(value: datetime | None) -> str:
    """A moment as every page writes it (UTC, to the second)."""
    return value.strftime("%Y-%m-%d %H:%M:%S UTC") if value else "—"


# The units a duration is spoken in, largest first.
_UNITS = (("d", 86_400), ("h", 3600), ("min", 60), ("s", 1))


def lasted(since: datetime, until: datetime) -> str:
    """How long from ``since`` to ``until`` in its largest unit and the next one
    ("2 h 5 min", "40 s")."""
    seconds = max(0, int((until - since).total_seconds()))
    i = next(i for i, (_, size) in enumerate(_UNITS) if seconds >= size or size == 1)
    (name, size), rest = _UNITS[i], seconds % _UNITS[i][1]
    text = f"{seconds // size} {name}"
    if i + 1 < len(_UNITS) and rest // _UNITS[i + 1][1]:
        text += f" {rest // _UNITS[i + 1][1]} {_UNITS[i + 1][0]}"
    return text


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("homing.console", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["moment"] = moment
    env.globals["lasted"] = lasted
    return env


_ENV = _environment()


def render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    """The page ``template`` with ``context`` (and the request's signed-in view, when
    there is one), with the console's security headers."""
    view = getattr(request.state, "console_view", None)
    html = _ENV.get_template(template).render(view=view, request_path=request.url.path, **context)
    return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)
