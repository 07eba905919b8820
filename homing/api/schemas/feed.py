"""Bodies of the in-app feed: the send, an item as a feed shows it, a page with the
unread count, a token, the feed secret issued once, and the allowed origins."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from homing.api.schemas.shared import CategoryKey, ExternalId, JsonObject, Strict, examples
from homing.api.schemas.templates import Templated, content_or_template
from homing.domain.feed import FeedItem
from homing.managers.feed import MAX_URL, FeedPage, IssuedFeedSecret

# The hardest bounds a setting may raise them to; the settings bound them further
# (HOMING_FEED_TITLE_MAX_CHARS, HOMING_FEED_BODY_MAX_CHARS).
Title = Annotated[str, StringConstraints(min_length=1, max_length=2000)]
Text = Annotated[str, StringConstraints(min_length=1, max_length=20_000)]
Url = Annotated[str, StringConstraints(min_length=1, max_length=MAX_URL)]
Origin = Annotated[str, StringConstraints(min_length=1, max_length=255)]


class InAppCreate(Strict, Templated):
    """One item for one recipient's feed: its text given, or ``template`` (and
    ``data``, ``locale``) whose ``in_app`` part makes it."""

    recipient: ExternalId
    title: Title | None = None
    body: Text | None = None
    # Opened when the item is clicked: http(s) only.
    url: Url | None = None
    # The tenant's category; the recipient's preference for ``in_app`` applies.
    category: CategoryKey | None = None
    # Shown to the recipient's page as given (bounded by HOMING_FEED_DATA_MAX_BYTES);
    # with a template, also what it renders with.
    data: JsonObject | None = None

    @model_validator(mode="after")
    def _no_nul(self) -> InAppCreate:
        if self.template is not None:
            given = {f: getattr(self, f) is not None for f in ("title", "body", "url")}
            content_or_template(self, given)
        elif self.body is None:
            raise ValueError("give 'body' (or 'template')")
        elif self.locale is not None:
            raise ValueError("'locale' needs 'template'")
        for name in ("title", "body", "url"):
            value = getattr(self, name)
            if value is not None and "\x00" in value:
                raise ValueError(f"'{name}' must not contain NUL characters")
        return self

    model_config = ConfigDict(
        json_schema_extra=examples(
            {
                "recipient": "user_42",
                "title": "New comment",
                "body": "Grace replied to you",
                "url": "https://app.example.com/c/9",
            }
        ),
    )


class FeedItemPublic(BaseModel):
    """One item of a feed. Text is text: a page shows it escaped (``textContent``)."""

    id: str
    seq: int
    job_id: str
    created_at: datetime
    title: str | None = None
    body: str
    url: str | None = None
    category: str | None = None
    data: JsonObject | None = None
    seen_at: datetime | None = None
    read_at: datetime | None = None
    archived_at: datetime | None = None

    @classmethod
    def of(cls, item: FeedItem) -> FeedItemPublic:
        return cls(
            id=item.id,
            seq=item.seq,
            job_id=item.job_id,
            created_at=item.created_at,
            title=item.title,
            body=item.body,
            url=item.url,
            category=item.category,
            data=item.data,
            seen_at=item.seen_at,
            read_at=item.read_at,
            archived_at=item.archived_at,
        )


class FeedPagePublic(BaseModel):
    """One page of a feed, newest first, and the recipient's unread count."""

    data: list[FeedItemPublic]
    next_cursor: str | None = None
    unread_count: int

    @classmethod
    def of(cls, page: FeedPage) -> FeedPagePublic:
        return cls(
            data=[FeedItemPublic.of(i) for i in page.items],
            next_cursor=page.next_cursor,
            unread_count=page.unread_count,
        )


class FeedToken(BaseModel):
    """A token for one recipient's feed, sent as ``Authorization: Bearer <token>``."""

    token: str
    expires_at: datetime


class FeedSecretIssued(BaseModel):
    """The new feed secret: shown this once, never again."""

    secret: str
    preview: str
    created_at: datetime

    @classmethod
    def of(cls, issued: IssuedFeedSecret) -> FeedSecretIssued:
        return cls(secret=issued.secret, preview=issued.preview, created_at=issued.created_at)


class FeedOrigins(Strict):
    """The exact origins (``https://app.example.com``) whose pages may read feeds."""

    origins: list[Origin] = Field(max_length=100)
