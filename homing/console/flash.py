"""Flash messages: a console change says what it did on the page it redirects to.

Every console POST that changes something answers ``303 See Other`` to a page
(Post/Redirect/Get), so a reload repeats nothing; before answering it queues a flash
for the session with ``flash``, and the next page rendered for that session shows it
(base.html, a ``role="status"`` region above ``main``), once. A one-time secret (a new
API key, a webhook signing secret) travels the same way, sealed in the flash's row
(``homing.managers.flashes``), never in an address: a reload shows only its preview.
"""

from __future__ import annotations

from homing.console.access import View
from homing.managers.flashes import FlashKind
from homing.services import Services

__all__ = ["FlashKind", "flash"]


async def flash(
    services: Services,
    view: View,
    message: str,
    kind: FlashKind = FlashKind.OK,
    *,
    secret: str | None = None,
) -> None:
    """Queue ``message`` (and a one-time ``secret``) for the session's next page."""
    await services.flashes.queue(view.session.id, message, kind, secret=secret)
