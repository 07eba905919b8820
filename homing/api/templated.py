"""Sends that name a template: render at accept, then check what was rendered as the
channel's own content would be checked (docs/templates.md, "Sending with a template").

The job stores the rendered content and ``template`` ({id, key, version, locale}), so
publishing a later version, or deleting the template, never changes a job already
accepted. A batch looks each distinct template up once and renders its items
concurrently (the render pool bounds how many run at once).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Protocol

from homing.api.schemas.chat import MAX_TEXT
from homing.api.schemas.sms import check_sms_body
from homing.errors import HomingError
from homing.managers.templates import Rendered
from homing.rendering import TemplateError
from homing.services import Services

MAX_SUBJECT = 998  # as ``HeaderText``: a header line's limit (RFC 5322)


class TemplatedBody(Protocol):
    """A send body that may name a template (EmailCreate, SmsCreate, ChatCreate)."""

    template: str | None
    data: dict[str, Any] | None
    locale: str | None


async def render_one(
    services: Services, tenant_id: str, body: TemplatedBody, channel: str
) -> Rendered:
    """Render the send's template for ``channel``; TemplateError (422) when it cannot."""
    assert body.template is not None
    templates = services.templates
    found = await templates.lookup(tenant_id, {body.template})
    rendered = await templates.render(
        found.get(body.template), body.template, channel, body.data or {}, body.locale
    )
    check_rendered(channel, rendered.part)
    return rendered


async def render_many(
    services: Services, tenant_id: str, bodies: Sequence[TemplatedBody], channel: str
) -> list[Rendered | HomingError | None]:
    """Each body's rendered content (None for a body without a template, the error
    for one that cannot render), in order; one template lookup for the batch."""
    templates = services.templates
    refs = {b.template for b in bodies if b.template is not None}
    found = await templates.lookup(tenant_id, refs)
    # As many at once as the pool has workers: a version that runs past the budget is
    # known before the next item of it takes a worker (``runaway``).
    lanes = asyncio.Semaphore(templates.pool.size)
    runaway: set[str] = set()

    async def one(body: TemplatedBody) -> Rendered | HomingError | None:
        if body.template is None:
            return None
        try:
            async with lanes:
                rendered = await templates.render(
                    found.get(body.template),
                    body.template,
                    channel,
                    body.data or {},
                    body.locale,
                    runaway,
                )
            check_rendered(channel, rendered.part)
        except HomingError as exc:
            return exc
        return rendered

    return list(await asyncio.gather(*(one(b) for b in bodies)))


def check_rendered(channel: str, part: dict[str, Any]) -> None:
    """TemplateError unless the rendered ``part`` is content the channel's endpoint
    would take as given (a subject's length, an SMS's segments, a chat text's length)."""
    if channel == "email":
        subject = part["subject"]
        if not subject:
            raise TemplateError("email.subject: the rendered subject is empty")
        if len(subject) > MAX_SUBJECT or "\x00" in subject:
            raise TemplateError(f"email.subject: over {MAX_SUBJECT} characters, or a NUL")
    elif channel == "sms":
        if not part["body"]:
            raise TemplateError("sms.body: the rendered body is empty")
        check_sms_body(part["body"], TemplateError)
    elif channel == "chat":
        text = part["text"]
        if not text or len(text) > MAX_TEXT or "\x00" in text:
            raise TemplateError(f"chat.text: empty, over {MAX_TEXT} characters, or a NUL")
