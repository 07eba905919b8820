"""Rendering pages: Jinja2 with autoescaping on for every template, and the headers
every console response carries.

A tenant controls much of what the console shows (subjects, error texts, provider
names, a tenant's name); autoescaping turns each into text, never markup. The
Content-Security-Policy allows only our own files: no inline script, no inline style,
no frames, forms posting only here.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape
from starlette.requests import Request
from starlette.responses import HTMLResponse

from homing.clock import as_datetime
from homing.console.nav import sections
from homing.managers.retention import SCRUBBED

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
)
# The message page's: an HTML body's frame (``srcdoc``) inherits the page's policy, so
# the page allows inline styles for the email's own; the frame's document adds
# ``homing.console.message_view.FRAME_CSP`` (no script, no request), and the page
# itself renders nothing unescaped, so it has no inline style of its own to allow.
FRAMED_CSP = CSP.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'")
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


def date_hints(now: datetime) -> tuple[str, str]:
    """The examples a date filter's fields show: a week ago, and now to the minute
    (never a fixed day, which would read as stale a month later)."""
    return (now - timedelta(days=7)).date().isoformat(), now.strftime("%Y-%m-%dT%H:%M")


def _now(request: Request) -> datetime:
    """The services' clock (a page drawn before any route, by a middleware, may have none)."""
    state = getattr(request.scope.get("app"), "state", None)
    services = getattr(state, "services", None)
    return as_datetime(services.clock.now()) if services else datetime.now(UTC)


def subject_of(payload: dict[str, Any]) -> str | None:
    """An email's subject, as a list shows it (None: none, or scrubbed by retention)."""
    subject = payload.get("subject")
    return subject if isinstance(subject, str) and subject != SCRUBBED else None


# A status's badge colour, the same on every page: done, failed, waiting, quiet.
_TONES = {
    "good": "completed delivered success sent verified enabled active accepted succeeded",
    "bad": "failed dead bounced complained suspended failing expired revoked "
    "message_permanent provider_permanent",
    "wait": "pending processing deferred scheduled transient throttled uncertain firing invited "
    "queued running gathered",
}
_TONE_OF = {status: tone for tone, statuses in _TONES.items() for status in statuses.split()}


def tone(status: str) -> str:
    """The badge colour of ``status`` (any case): good, bad, wait, or quiet for the
    rest (suppressed, cancelled, skipped, disabled…)."""
    return _TONE_OF.get(status.lower(), "quiet")


def badge(status: str, text: str | None = None) -> Markup:
    """``status`` as a badge in its tone's colour, reading ``text`` (default: the
    status in lower case)."""
    shown = status.lower() if text is None else text
    return Markup('<span class="badge tone-{}">{}</span>').format(tone(status), escape(shown))


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
    env.filters["subject"] = subject_of
    env.filters["tone"] = tone
    env.globals["sections"] = sections
    env.globals["badge"] = badge
    return env


_ENV = _environment()


def render(
    request: Request, template: str, status: int = 200, *, csp: str = CSP, **context: Any
) -> HTMLResponse:
    """The page ``template`` with ``context`` (and the request's signed-in view, when
    there is one), with the console's security headers (``csp``: its policy)."""
    view = getattr(request.state, "console_view", None)
    page = _ENV.get_template(template)
    hints = date_hints(_now(request))
    html = page.render(view=view, request_path=request.url.path, date_hints=hints, **context)
    headers = SECURITY_HEADERS | {"Content-Security-Policy": csp}
    return HTMLResponse(html, status_code=status, headers=headers)
