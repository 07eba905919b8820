"""Bodies of the template routes, and the ``template`` fields every send body shares.

A key is a slug (lower-case letters, digits, ``-``, ``_`` and ``.``, at most 64) that
never has the shape of an id, so ``/v1/templates/{id|key}`` reads one or the other
unambiguously. Parts are checked here for shape and size only; their Jinja2 syntax and
the ``variables`` schema are checked by ``homing.managers.templates`` (422
``template_error``).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from homing.api.schemas.shared import JsonObject, Strict, examples
from homing.domain.templates import TemplateRow, VersionRow
from homing.managers.templates import MAX_LOCALE
from homing.models import ChatFormat

_SLUG = r"^[a-z0-9][a-z0-9_.-]{0,63}$"
# A part's strings are bounded again, in characters, by HOMING_TEMPLATE_MAX_SOURCE_CHARS.
Source = Annotated[str, StringConstraints(max_length=1_048_576)]
Locale = Annotated[str, StringConstraints(min_length=2, max_length=MAX_LOCALE)]
# What a send names a template by: its key or its id.
TemplateRef = Annotated[str, StringConstraints(min_length=1, max_length=64)]


def _not_an_id(value: str) -> str:
    try:
        uuid.UUID(value)
    except ValueError:
        return value
    raise ValueError("a key must not have the shape of an id")


Key = Annotated[str, StringConstraints(pattern=_SLUG), AfterValidator(_not_an_id)]


class TemplateCreate(Strict):
    key: Key
    name: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None
    default_locale: Locale | None = None

    model_config = ConfigDict(
        json_schema_extra=examples({"key": "welcome", "name": "Welcome", "default_locale": "en"}),
    )


class TemplatePublic(BaseModel):
    id: str
    key: str
    name: str
    default_locale: str
    # The channels the live (published) versions serve.
    channels: list[str]
    created_at: datetime

    @classmethod
    def of(cls, row: TemplateRow, channels: list[str]) -> TemplatePublic:
        return cls(
            id=row.id,
            key=row.key,
            name=row.name,
            default_locale=row.default_locale,
            channels=channels,
            created_at=row.created_at,
        )


class EmailPart(Strict):
    subject: Source
    html: Source | None = None
    text: Source | None = None
    # The email layout the HTML renders inside, by key ("none": not even the tenant's
    # ``default`` one); the ``default`` layout when left out (docs/templates.md, "Layouts").
    layout: Key | None = None


class SmsPart(Strict):
    body: Source


class ChatPart(Strict):
    text: Source
    format: ChatFormat = "plain"


class WebhookPart(Strict):
    payload: dict[str, Any]


class InAppPart(Strict):
    """An item of the recipient's feed (docs/feed.md); ``url`` renders to http(s)."""

    title: Source | None = None
    body: Source
    url: Source | None = None


class _Parts(Strict):
    email: EmailPart | None = None
    sms: SmsPart | None = None
    chat: ChatPart | None = None
    webhook: WebhookPart | None = None
    in_app: InAppPart | None = None
    variables: dict[str, Any] | None = None

    def parts(self, only_set: bool = False) -> dict[str, Any]:
        """The channels' parts as stored (``only_set``: those the body names, None
        for a channel it removes)."""
        out: dict[str, Any] = {}
        for channel in ("email", "sms", "chat", "webhook", "in_app"):
            part = getattr(self, channel)
            if only_set and channel in self.model_fields_set:
                out[channel] = None if part is None else part.model_dump(exclude_none=True)
            elif part is not None:
                out[channel] = part.model_dump(exclude_none=True)
        return out


class VersionCreate(_Parts):
    locale: Locale | None = None

    model_config = ConfigDict(
        json_schema_extra=examples(
            {
                "email": {"subject": "Welcome, {{ name }}", "text": "Hello {{ name }}!"},
                "sms": {"body": "Welcome, {{ name }}!"},
            }
        ),
    )


class VersionEdit(_Parts):
    locale: Locale | None = None


class VersionPublic(BaseModel):
    id: str
    template_id: str
    number: int
    locale: str
    state: str
    email: dict[str, Any] | None = None
    sms: dict[str, Any] | None = None
    chat: dict[str, Any] | None = None
    webhook: dict[str, Any] | None = None
    in_app: dict[str, Any] | None = None
    variables: dict[str, Any] | None = None
    created_at: datetime
    updated_at: datetime
    published_at: datetime | None = None

    @classmethod
    def of(cls, row: VersionRow) -> VersionPublic:
        return cls(
            id=row.id,
            template_id=row.template_id,
            number=row.number,
            locale=row.locale,
            state=row.state,
            email=row.parts.get("email"),
            sms=row.parts.get("sms"),
            chat=row.parts.get("chat"),
            webhook=row.parts.get("webhook"),
            in_app=row.parts.get("in_app"),
            variables=row.variables,
            created_at=row.created_at,
            updated_at=row.updated_at,
            published_at=row.published_at,
        )


class PreviewCreate(Strict):
    data: JsonObject = Field(default_factory=dict)
    locale: Locale | None = None
    # A version's number (a draft too); the live one for ``locale`` when left out.
    version: Annotated[int, Field(ge=1, strict=True)] | None = None

    model_config = ConfigDict(
        json_schema_extra=examples({"data": {"name": "Ada"}}),
    )


class PreviewPublic(BaseModel):
    template_id: str
    version: int
    locale: str
    email: dict[str, Any] | None = None
    sms: dict[str, Any] | None = None
    chat: dict[str, Any] | None = None
    webhook: dict[str, Any] | None = None
    in_app: dict[str, Any] | None = None


class Templated(BaseModel):
    """The fields a send gives in place of its content: a template (key or id), its
    data and a locale. Mixed into every send body, whose own validator calls
    ``content_or_template`` (one validator per body: the plain email is the hot path)."""

    template: TemplateRef | None = None
    data: JsonObject | None = None
    locale: Locale | None = None


def content_or_template(body: Templated, given: dict[str, bool]) -> None:
    """ValueError unless a templated ``body`` gives no content (``given``: each content
    field's presence). Called only when ``body.template`` is set."""
    named = [name for name, present in given.items() if present]
    if named:
        raise ValueError(f"give 'template' or {', '.join(repr(n) for n in named)}, not both")


def no_template_fields(body: Templated) -> None:
    """ValueError when a body without a template gives ``data`` or ``locale``."""
    if body.data is not None or body.locale is not None:
        raise ValueError("'data' and 'locale' need 'template'")
