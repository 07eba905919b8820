"""The in-app feed (docs/feed.md): the write path every in-app send takes, the pages
and marks of a recipient's feed, its feed tokens, the tenant's feed secret and the
origins its pages may call the feed from.

``send`` is the one write path: the API's ``POST /v1/notifications/in-app`` calls it,
and so will multi-channel notifications. It stores the item and a COMPLETED job in one
transaction (``homing.store.feed``) and then wakes the recipient's open streams.

A stream holds the ``FeedGrant`` its token was checked with, and every read of the
stream (``follow``) checks it again against the clock and the tenant's feed secret as
read with the items: a token expired, or signed with a secret since rotated, ends the
stream, and what was read with it is not sent.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Final, Literal
from urllib.parse import urlsplit

import orjson

from homing.clock import Clock, as_datetime
from homing.crypto import Sealer, mask
from homing.domain.accepting import Accepted, NewJob
from homing.domain.audit import AuditEvent
from homing.domain.feed import FeedContent, FeedItem, Mark
from homing.errors import InvalidRequest, NotFound, Unauthenticated
from homing.managers.feed_streams import FeedStreams, StreamKey
from homing.managers.feed_tokens import ParsedToken, parse_token, refused, sign_token, verify_mac
from homing.managers.feed_watch import FeedWatch
from homing.metrics import FEED_ITEMS, FEED_READS
from homing.models import JobStatus, Quota
from homing.store.feed import FeedStore
from homing.store.feed_access import (
    FEED_SECRET_FIELD,
    FEED_SECRETS_TABLE,
    FeedAccessStore,
    FeedSecretRow,
)
from homing.store.recipients import RecipientStore

__all__ = [
    "MAX_URL",
    "Ended",
    "Feed",
    "FeedBounds",
    "FeedGrant",
    "FeedPage",
    "FeedReader",
    "IssuedFeedSecret",
    "StreamRead",
]

# Why a stream ends before its reader leaves: its token expired, or was revoked (the
# tenant's feed secret was rotated).
Ended = Literal["expired", "revoked"]

MAX_URL: Final = 2048
MAX_ORIGIN: Final = 255
# ``https://app.example.com`` or ``http://127.0.0.1:8080``: a scheme, a host, a port.
_ORIGIN = re.compile(r"https?://[a-z0-9.-]{1,253}(?::[0-9]{1,5})?")


@dataclass(kw_only=True, frozen=True, slots=True)
class FeedBounds:
    """The feed's bounds (HOMING_FEED_*)."""

    title_chars: int
    body_chars: int
    data_bytes: int
    items_per_recipient: int
    token_seconds: int
    origins: int


@dataclass(frozen=True, slots=True)
class FeedReader:
    """Whose feed a request reads: the tenant and the recipient (row id, external id)."""

    tenant_id: str
    recipient_id: str
    external_id: str

    @property
    def key(self) -> StreamKey:
        return (self.tenant_id, self.recipient_id)


@dataclass(frozen=True, slots=True)
class FeedGrant:
    """What a stream's token was checked with: its claims and the tenant's feed secret
    (sealed) it verified under."""

    token: ParsedToken = field(repr=False)
    sealed: str = field(repr=False)

    @property
    def expires(self) -> int:
        return self.token.expires


@dataclass(frozen=True, slots=True)
class StreamRead:
    """One read of a stream: the items after its last, the unread count, and the grant
    to read on with; or why it ends (and then no item)."""

    items: list[FeedItem]
    unread: int
    standing: FeedGrant | Ended


@dataclass(frozen=True, slots=True)
class FeedPage:
    items: list[FeedItem]
    next_cursor: str | None
    unread_count: int


@dataclass(frozen=True, slots=True)
class IssuedFeedSecret:
    """A newly generated feed secret: the only time its plaintext leaves Homing."""

    secret: str = field(repr=False)
    preview: str
    created_at: datetime


class Feed:
    """Recipients' feeds, the tenant's feed secret and origins."""

    def __init__(
        self,
        store: FeedStore,
        access: FeedAccessStore,
        recipients: RecipientStore,
        sealer: Sealer,
        clock: Clock,
        bounds: FeedBounds,
        streams: FeedStreams,
        watch: FeedWatch,
    ) -> None:
        self._store = store
        self._access = access
        self._recipients = recipients
        self._sealer = sealer
        self._clock = clock
        self.bounds = bounds
        self.streams = streams
        self._watch = watch

    def check(self, content: FeedContent) -> FeedContent:
        """The content within its bounds and its ``url`` http(s); InvalidRequest otherwise."""
        b = self.bounds
        if content.title is not None and len(content.title) > b.title_chars:
            raise InvalidRequest("'title' is too long", {"field": "title", "max": b.title_chars})
        if len(content.body) > b.body_chars:
            raise InvalidRequest("'body' is too long", {"field": "body", "max": b.body_chars})
        if content.data is not None and len(orjson.dumps(content.data)) > b.data_bytes:
            raise InvalidRequest("'data' is too large", {"field": "data", "max": b.data_bytes})
        if content.url is not None:
            check_url(content.url)
        return content

    async def send(self, new: NewJob, content: FeedContent, quotas: Sequence[Quota]) -> Accepted:
        """Store one in-app send (its item and COMPLETED job, or a SUPPRESSED job) and
        wake the recipient's streams. The write path of every in-app send."""
        accepted = await self._store.write(
            new, self.check(content), quotas, self.bounds.items_per_recipient
        )
        if not accepted.replayed:
            stored = accepted.job.status is JobStatus.COMPLETED
            FEED_ITEMS.labels("stored" if stored else "suppressed").inc()
            if stored:
                self.streams.notify((new.tenant_id, content.recipient_id))
        return accepted

    async def reader_of(self, tenant_id: str, external_id: str) -> FeedReader:
        """The tenant's recipient of this external id as a reader; NotFound otherwise."""
        recipient = await self._recipients.get(tenant_id, external_id)
        return FeedReader(tenant_id, recipient.id, recipient.external_id)

    async def page(self, reader: FeedReader, limit: int, cursor: str | None) -> FeedPage:
        """One page of the reader's feed, newest first; ``cursor`` from the last page."""
        before = None
        if cursor is not None:
            if not cursor.isdigit() or len(cursor) > 18:
                raise InvalidRequest("'cursor' is not one this feed gave", {"field": "cursor"})
            before = int(cursor)
        items, next_seq, unread = await self._store.page(
            reader.tenant_id, reader.recipient_id, limit, before
        )
        return FeedPage(items, None if next_seq is None else str(next_seq), unread)

    def open_stream(self, reader: FeedReader) -> asyncio.Event:
        """Register a stream of the reader (bounded: ``FeedStreams.open``) and keep the
        process's poll running; the event that wakes it."""
        wake = self.streams.open(reader.key)
        self._watch.start()
        return wake

    async def follow(
        self, reader: FeedReader, grant: FeedGrant, seq: int, limit: int
    ) -> StreamRead:
        """Up to ``limit`` of the reader's items after ``seq`` and its unread count,
        while ``grant`` still holds; why the stream ends otherwise."""
        if self.seconds_left(grant) <= 0:
            return StreamRead([], 0, "expired")
        FEED_READS.labels("stream").inc()
        items, unread, sealed = await self._store.after(
            reader.tenant_id, reader.recipient_id, seq, limit
        )
        standing = self._recheck(reader.tenant_id, grant, sealed)
        if not isinstance(standing, FeedGrant):
            return StreamRead([], unread, standing)
        if self.seconds_left(grant) <= 0:  # expired during the read
            return StreamRead([], unread, "expired")
        return StreamRead(items, unread, standing)

    def seconds_left(self, grant: FeedGrant) -> float:
        """Until the grant's token expires (0 or less: expired)."""
        return grant.expires - self._clock.now()

    async def last_seq(self, reader: FeedReader) -> int:
        return await self._store.last_seq(reader.tenant_id, reader.recipient_id)

    async def mark(self, reader: FeedReader, item_id: str, mark: Mark) -> FeedItem:
        """Mark the reader's item (idempotent); NotFound for an item not the reader's."""
        item = await self._store.mark(reader.tenant_id, reader.recipient_id, item_id, mark)
        if item is None:
            raise NotFound("no such feed item")
        self.streams.notify(reader.key)  # the unread count may have changed
        return item

    async def token(self, reader: FeedReader, seconds: int) -> tuple[str, datetime]:
        """A token for the reader, valid ``seconds`` (bounded); the feed secret is made
        on first use."""
        seconds = min(seconds, self.bounds.token_seconds)
        expires = int(self._clock.now()) + seconds
        secret = await self._secret(reader.tenant_id)
        return sign_token(secret, reader.tenant_id, reader.external_id, expires), as_datetime(
            expires
        )

    async def authenticate(self, token: str) -> FeedReader:
        """The reader a token was signed for; Unauthenticated for a forged, expired,
        malformed or unknown one (one message for all)."""
        reader, _ = await self.grant(token)
        return reader

    async def grant(self, token: str) -> tuple[FeedReader, FeedGrant]:
        """``authenticate``, with what the token was checked with, for a stream to
        check again at each read."""
        parsed = parse_token(token)
        now = self._clock.now()
        if not now < parsed.expires <= now + self.bounds.token_seconds + 60:
            raise refused()
        row = await self._access.secret(parsed.tenant_id)
        if row is None:
            raise refused()
        verify_mac(self._open(row), parsed)
        try:
            reader = await self.reader_of(parsed.tenant_id, parsed.external_id)
        except NotFound:
            raise refused() from None
        return reader, FeedGrant(parsed, row.sealed)

    async def rotate(self, tenant_id: str, audit: AuditEvent | None = None) -> IssuedFeedSecret:
        """A new feed secret in place of the tenant's; tokens signed with the old one
        stop working at once."""
        row, secret = self._new_secret(tenant_id)
        stored = await self._access.put_secret(row, replace=True, audit=audit)
        # This process's streams end now; other processes' at their next poll.
        self.streams.notify_tenant(tenant_id)
        return IssuedFeedSecret(secret, stored.preview, stored.created_at)

    async def origins(self, tenant_id: str) -> list[str]:
        return await self._access.origins(tenant_id)

    async def set_origins(
        self, tenant_id: str, origins: Sequence[str], audit: AuditEvent | None = None
    ) -> list[str]:
        """Replace the tenant's allowed origins, each checked exact and bounded."""
        if len(origins) > self.bounds.origins:
            raise InvalidRequest("too many origins", {"max": self.bounds.origins})
        checked = sorted({check_origin(o) for o in origins})
        await self._access.set_origins(tenant_id, checked, audit)
        return checked

    async def preflight_allowed(self, origin: str) -> bool:
        """Whether a preflight from ``origin`` is answered (some tenant allows it)."""
        return _origin_shaped(origin) and await self._access.allowed_by_any(origin)

    async def origin_allowed(self, tenant_id: str, origin: str) -> bool:
        return _origin_shaped(origin) and await self._access.allowed(tenant_id, origin)

    async def _secret(self, tenant_id: str) -> str:
        row = await self._access.secret(tenant_id)
        if row is None:
            fresh, _ = self._new_secret(tenant_id)
            row = await self._access.put_secret(fresh, replace=False)
        return self._open(row)

    def _new_secret(self, tenant_id: str) -> tuple[FeedSecretRow, str]:
        secret = "hfs_" + secrets.token_urlsafe(32)
        sealed = self._sealer.seal(
            secret.encode(), table=FEED_SECRETS_TABLE, row_id=tenant_id, field=FEED_SECRET_FIELD
        )
        now = as_datetime(self._clock.now())
        return FeedSecretRow(tenant_id, sealed, mask(secret), now), secret

    def _open(self, row: FeedSecretRow) -> str:
        return self._open_sealed(row.tenant_id, row.sealed)

    def _open_sealed(self, tenant_id: str, sealed: str) -> str:
        return self._sealer.open(
            sealed, table=FEED_SECRETS_TABLE, row_id=tenant_id, field=FEED_SECRET_FIELD
        ).decode()

    def _recheck(self, tenant_id: str, grant: FeedGrant, sealed: str | None) -> FeedGrant | Ended:
        """The grant, still good under the tenant's secret as stored now; "revoked"
        when the secret was rotated (re-sealed by a key rotation is the same secret,
        and the grant goes on with it)."""
        if sealed == grant.sealed:
            return grant
        if sealed is None:
            return "revoked"
        try:
            verify_mac(self._open_sealed(tenant_id, sealed), grant.token)
        except Unauthenticated:
            return "revoked"
        return replace(grant, sealed=sealed)


def check_url(url: str) -> str:
    """``url`` when it is an absolute http(s) URL of at most MAX_URL characters with
    no whitespace or control character; InvalidRequest otherwise (``javascript:``,
    ``data:`` and every other scheme refused)."""
    if len(url) > MAX_URL or any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        raise InvalidRequest("'url' must be an http(s) URL", {"field": "url"})
    try:
        parts = urlsplit(url)
    except ValueError:
        raise InvalidRequest("'url' must be an http(s) URL", {"field": "url"}) from None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise InvalidRequest("'url' must be an http(s) URL", {"field": "url"})
    return url


def check_origin(origin: Any) -> str:
    """An exact origin (scheme, host, port; lower case, no path); InvalidRequest otherwise."""
    if not isinstance(origin, str) or not _origin_shaped(origin):
        raise InvalidRequest(
            "an origin is scheme://host[:port], lower case, with no path", {"field": "origins"}
        )
    return origin


def _origin_shaped(origin: str) -> bool:
    return len(origin) <= MAX_ORIGIN and _ORIGIN.fullmatch(origin) is not None
