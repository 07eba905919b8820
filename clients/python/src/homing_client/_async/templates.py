"""Templates and layouts, and their versions (docs/templates.md)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from homing_client import models
from homing_client._async._resource import Resource, pages
from homing_client._core import Call, drop_none, segment


class Templates(Resource):
    """Templates and their versions (docs/templates.md); ``ref`` is an id or a key."""

    async def create(self, *, key: str, **fields: Any) -> models.TemplatePublic:
        """A new template (``fields``: name, default_locale)."""
        body = drop_none(key=key, **fields)
        return await self._c.request(Call("POST", "/v1/templates", models.TemplatePublic, body))

    async def get(self, ref: str) -> models.TemplatePublic:
        path = f"/v1/templates/{segment(ref)}"
        return await self._c.request(Call("GET", path, models.TemplatePublic))

    async def list(self, *, limit: int | None = None) -> AsyncIterator[models.TemplatePublic]:
        """Every template in creation order, fetching the cursor pages as it goes."""
        async for item in pages(self._c, "/v1/templates", models.PageTemplatePublic, limit):
            yield item

    async def delete(self, ref: str) -> None:
        await self._c.request(Call("DELETE", f"/v1/templates/{segment(ref)}", None))

    async def versions(
        self, ref: str, *, limit: int | None = None
    ) -> AsyncIterator[models.VersionPublic]:
        """Every version of a template, fetching the cursor pages as it goes."""
        path = f"/v1/templates/{segment(ref)}/versions"
        async for item in pages(self._c, path, models.PageVersionPublic, limit):
            yield item

    async def get_version(self, ref: str, version_id: str) -> models.VersionPublic:
        path = f"/v1/templates/{segment(ref)}/versions/{segment(version_id)}"
        return await self._c.request(Call("GET", path, models.VersionPublic))

    async def create_version(self, ref: str, **parts: Any) -> models.VersionPublic:
        """A new draft version (``parts``: email, sms, chat, webhook, in_app, variables,
        locale)."""
        path = f"/v1/templates/{segment(ref)}/versions"
        return await self._c.request(Call("POST", path, models.VersionPublic, drop_none(**parts)))

    async def update_version(self, ref: str, version_id: str, **parts: Any) -> models.VersionPublic:
        """Change a draft version's parts."""
        path = f"/v1/templates/{segment(ref)}/versions/{segment(version_id)}"
        return await self._c.request(Call("PATCH", path, models.VersionPublic, drop_none(**parts)))

    async def publish_version(self, ref: str, version_id: str) -> models.VersionPublic:
        """Make a version the live one of its locale."""
        path = f"/v1/templates/{segment(ref)}/versions/{segment(version_id)}/publish"
        return await self._c.request(Call("POST", path, models.VersionPublic))

    async def preview(
        self,
        ref: str,
        *,
        data: dict[str, Any] | None = None,
        locale: str | None = None,
        version: int | None = None,
    ) -> models.PreviewPublic:
        """Every part rendered with ``data`` (the live version, or ``version``)."""
        body = drop_none(data=data, locale=locale, version=version)
        path = f"/v1/templates/{segment(ref)}/preview"
        return await self._c.request(Call("POST", path, models.PreviewPublic, body))


class Layouts(Resource):
    """Email layouts and their versions (docs/templates.md); ``ref`` is an id or a key."""

    async def create(self, *, key: str, **fields: Any) -> models.LayoutPublic:
        """A new layout (``fields``: name, default_locale)."""
        body = drop_none(key=key, **fields)
        return await self._c.request(Call("POST", "/v1/layouts", models.LayoutPublic, body))

    async def get(self, ref: str) -> models.LayoutPublic:
        return await self._c.request(
            Call("GET", f"/v1/layouts/{segment(ref)}", models.LayoutPublic)
        )

    async def list(self, *, limit: int | None = None) -> AsyncIterator[models.LayoutPublic]:
        """Every layout, fetching the cursor pages as it goes."""
        async for item in pages(self._c, "/v1/layouts", models.PageLayoutPublic, limit):
            yield item

    async def delete(self, ref: str) -> None:
        await self._c.request(Call("DELETE", f"/v1/layouts/{segment(ref)}", None))

    async def create_version(
        self, ref: str, *, html: str, locale: str | None = None
    ) -> models.LayoutVersionPublic:
        """A new draft version; ``html`` holds ``{{ content }}`` where the email goes."""
        path = f"/v1/layouts/{segment(ref)}/versions"
        body = drop_none(html=html, locale=locale)
        return await self._c.request(Call("POST", path, models.LayoutVersionPublic, body))

    async def versions(
        self, ref: str, *, limit: int | None = None
    ) -> AsyncIterator[models.LayoutVersionPublic]:
        """Every version of a layout, fetching the cursor pages as it goes."""
        path = f"/v1/layouts/{segment(ref)}/versions"
        async for item in pages(self._c, path, models.PageLayoutVersionPublic, limit):
            yield item

    async def get_version(self, ref: str, version_id: str) -> models.LayoutVersionPublic:
        path = f"/v1/layouts/{segment(ref)}/versions/{segment(version_id)}"
        return await self._c.request(Call("GET", path, models.LayoutVersionPublic))

    async def update_version(
        self, ref: str, version_id: str, **changes: Any
    ) -> models.LayoutVersionPublic:
        """Change a draft version (``changes``: html, locale)."""
        path = f"/v1/layouts/{segment(ref)}/versions/{segment(version_id)}"
        body = drop_none(**changes)
        return await self._c.request(Call("PATCH", path, models.LayoutVersionPublic, body))

    async def publish_version(self, ref: str, version_id: str) -> models.LayoutVersionPublic:
        """Make a version the live one of its locale."""
        path = f"/v1/layouts/{segment(ref)}/versions/{segment(version_id)}/publish"
        return await self._c.request(Call("POST", path, models.LayoutVersionPublic))
