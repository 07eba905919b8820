"""Sends that name a template: render at accept, then check what was rendered as the
channel's own content would be checked (docs/templates.md, "Sending with a template").

The job stores the rendered content and ``template`` ({id, key, version, locale}), so
publishing a later version, or deleting the template, never changes a job already
accepted. A batch looks each distinct template up once and renders its items
concurrently (the render pool bounds how many run at once).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
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
    services: Services,
    tenant_id: str,
    body: TemplatedBody,
    channel: str,
    variables: Mapping[str, str] | None = None,
    locale: str | None = None,
) -> Rendered:
    """Render the send's template for ``channel``; TemplateError (422) when it cannot.
    ``variables``: what Homing adds to the data (a recipient's ``preferences_url`` and
    ``unsubscribe_url``, docs/recipients.md "Links"), over the data's own keys.
    ``locale``: the one to render in when the body names none (its recipient's)."""
    assert body.template is not None
    templates = services.templates
    found = await templates.lookup(tenant_id, {body.template})
    data = {**(body.data or {}), **variables} if variables else body.data or {}
    rendered = await templates.render(
        found.get(body.template), body.template, channel, data, body.locale or locale
    )
    check_rendered(channel, rendered.part)
    return rendered


async def render_many(
    services: Services,
    tenant_id: str,
    bodies: Sequence[TemplatedBody],
    channel: str,
    variables: Sequence[Mapping[str, str]] | None = None,
    locales: Sequence[str | None] | None = None,
) -> list[Rendered | HomingError | None]:
    """Each body's rendered content (None for a body without a template, the error
    for one that cannot render), in order; one template lookup for the batch.
    ``variables``: what Homing adds to each body's data, in the same order;
    ``locales``: each body's locale when it names none (its recipient's)."""
    templates = services.templates
    refs = {b.template for b in bodies if b.template is not None}
    found = await templates.lookup(tenant_id, refs)
    # As many at once as the pool has workers: a version that runs past the budget is
    # known before the next item of it takes a worker (``runaway``).
    lanes = asyncio.Semaphore(templates.pool.size)
    runaway: set[str] = set()

    async def one(
        body: TemplatedBody, added: Mapping[str, str], locale: str | None
    ) -> Rendered | HomingError | None:
        if body.template is None:
            return None
        try:
            async with lanes:
                rendered = await templates.render(
                    found.get(body.template),
                    body.template,
                    channel,
                    {**(body.data or {}), **added} if added else body.data or {},
                    body.locale or locale,
                    runaway,
                )
            check_rendered(channel, rendered.part)
        except HomingError as exc:
            return exc
        return rendered

    added = variables or [{}] * len(bodies)
    wanted = locales or [None] * len(bodies)
    return list(
        await asyncio.gather(*(one(b, a, w) for b, a, w in zip(bodies, added, wanted, strict=True)))
    )


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
    elif channel == "in_app":
        _check_in_app(part)


def _check_in_app(part: dict[str, Any]) -> None:
    """A rendered feed item: a body, and no NUL. Its bounds and its URL's scheme are
    the feed's (``homing.managers.feed.Feed.check``, 422)."""
    if not part["body"]:
        raise TemplateError("in_app.body: the rendered body is empty")
    if any("\x00" in (part[f] or "") for f in ("title", "body", "url")):
        raise TemplateError("in_app: a rendered field has a NUL")
