"""Recipients, their categories, preferences and in-app feeds; suppressions and erasure
(docs/recipients.md, docs/feed.md)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from homing_client import models
from homing_client._async._resource import Resource, pages
from homing_client._core import Call, drop_none, segment


class Recipients(Resource):
    """Recipients by your external id, their preferences and links (docs/recipients.md)."""

    async def put(self, external_id: str, **fields: Any) -> models.RecipientPublic:
        """Create or replace a recipient (``fields``: email, phone, chat ids, locale, …)."""
        path = f"/v1/recipients/{segment(external_id)}"
        call = Call("PUT", path, models.RecipientPublic, drop_none(**fields))
        return await self._c.request(call)

    async def get(self, external_id: str) -> models.RecipientPublic:
        path = f"/v1/recipients/{segment(external_id)}"
        return await self._c.request(Call("GET", path, models.RecipientPublic))

    async def list(self, *, limit: int | None = None) -> AsyncIterator[models.RecipientPublic]:
        """Every recipient by external id, fetching the cursor pages as it goes."""
        async for item in pages(self._c, "/v1/recipients", models.PageRecipientPublic, limit):
            yield item

    async def delete(self, external_id: str) -> models.ErasurePublic:
        """Erase the recipient and what Homing holds of its addresses (docs/recipients.md)."""
        path = f"/v1/recipients/{segment(external_id)}"
        return await self._c.request(Call("DELETE", path, models.ErasurePublic))

    async def preferences(self, external_id: str) -> models.Preferences:
        path = f"/v1/recipients/{segment(external_id)}/preferences"
        return await self._c.request(Call("GET", path, models.Preferences))

    async def update_preferences(self, external_id: str, **changes: Any) -> models.Preferences:
        """Change the preferences named (``changes``: categories, …), keep the others."""
        path = f"/v1/recipients/{segment(external_id)}/preferences"
        return await self._c.request(Call("PATCH", path, models.Preferences, changes))

    async def preference_link(self, external_id: str) -> models.PreferenceLink:
        """A signed link to the recipient's preference page."""
        path = f"/v1/recipients/{segment(external_id)}/preference-link"
        return await self._c.request(Call("GET", path, models.PreferenceLink))

    async def feed_token(
        self, external_id: str, *, ttl_seconds: int | None = None
    ) -> models.FeedToken:
        """A token the recipient's browser reads its in-app feed with (``ttl_seconds``:
        how long it lasts; Homing's default is a day)."""
        path = f"/v1/recipients/{segment(external_id)}/feed-token"
        params = {"ttl_seconds": ttl_seconds}
        return await self._c.request(Call("GET", path, models.FeedToken, params=params))


class Categories(Resource):
    """The tenant's notification categories (docs/recipients.md)."""

    async def put(self, key: str, **fields: Any) -> models.CategoryPublic:
        """Create or replace a category (``fields``: name, kind, default, …)."""
        path = f"/v1/categories/{segment(key)}"
        return await self._c.request(Call("PUT", path, models.CategoryPublic, drop_none(**fields)))

    async def get(self, key: str) -> models.CategoryPublic:
        path = f"/v1/categories/{segment(key)}"
        return await self._c.request(Call("GET", path, models.CategoryPublic))

    async def list(self, *, limit: int | None = None) -> AsyncIterator[models.CategoryPublic]:
        """Every category, fetching the cursor pages as it goes."""
        async for item in pages(self._c, "/v1/categories", models.PageCategoryPublic, limit):
            yield item


class Feed(Resource):
    """Recipients' in-app feeds read by your server, and the feed's secret and origins
    (docs/feed.md); ``recipients.feed_token`` makes the token a browser reads with."""

    async def page(
        self, external_id: str, *, cursor: str | None = None, limit: int | None = None
    ) -> models.FeedPagePublic:
        """One page of a recipient's feed, newest first, with its unread count."""
        path = f"/v1/recipients/{segment(external_id)}/feed"
        params = {"cursor": cursor, "limit": limit}
        return await self._c.request(Call("GET", path, models.FeedPagePublic, params=params))

    async def rotate_secret(self) -> models.FeedSecretIssued:
        """A new feed-token signing secret: every token issued before stops working."""
        return await self._c.request(
            Call("POST", "/v1/feed-secret/rotate", models.FeedSecretIssued)
        )

    async def origins(self) -> models.FeedOrigins:
        """The browser origins allowed to read feeds."""
        return await self._c.request(Call("GET", "/v1/feed-origins", models.FeedOrigins))

    async def set_origins(self, origins: list[str]) -> models.FeedOrigins:
        """Replace the allowed browser origins."""
        call = Call("PUT", "/v1/feed-origins", models.FeedOrigins, {"origins": origins})
        return await self._c.request(call)

    async def list(
        self, external_id: str, *, limit: int | None = None
    ) -> AsyncIterator[models.FeedItemPublic]:
        """Every item of a recipient's feed, fetching the cursor pages as it goes."""
        path = f"/v1/recipients/{segment(external_id)}/feed"
        async for item in pages(self._c, path, models.FeedPagePublic, limit):
            yield item


class Suppressions(Resource):
    async def list(self, *, channel: str | None = None) -> AsyncIterator[models.SuppressionPublic]:
        cursor: str | None = None
        while True:
            params = {"channel": channel, "cursor": cursor}
            call = Call("GET", "/v1/suppressions", models.PageSuppressionPublic, params=params)
            page = await self._c.request(call)
            for item in page.data:
                yield item
            cursor = page.next_cursor
            if not cursor:
                return

    async def add(
        self, address: str, *, channel: str = "email", reason: str | None = None
    ) -> models.SuppressionPublic:
        body = drop_none(address=address, channel=channel, reason=reason)
        return await self._c.request(
            Call("POST", "/v1/suppressions", models.SuppressionPublic, body)
        )

    async def remove(self, address: str, *, channel: str = "email") -> None:
        params = {"address": address, "channel": channel}
        await self._c.request(Call("DELETE", "/v1/suppressions", None, params=params))


class Erasure(Resource):
    async def erase(self, address: str, *, channel: str = "email") -> models.ErasurePublic:
        """Erase what Homing holds of one address (docs/recipients.md)."""
        body = {"address": address, "channel": channel}
        return await self._c.request(Call("POST", "/v1/erasure", models.ErasurePublic, body))
