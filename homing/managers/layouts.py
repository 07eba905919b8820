"""Email layouts: a tenant's shared frame (header, footer, styles) that its email
templates render inside (docs/templates.md, "Layouts").

A layout is kept, versioned, published and rolled back exactly as a template is (the
same store statements on its own tables), with one part: ``{"html": ...}``, which must
show ``{{ content }}``. An email part names its layout by key (``"layout": "brand"``);
one that names none goes in the tenant's layout keyed ``default`` when it has a live
one, and ``"layout": "none"`` opts out. The layout renders in the same worker round
trip and time budget as the template, after it and before the CSS is inlined.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Collection
from dataclasses import replace
from datetime import datetime
from typing import Any, ClassVar, Final

from homing.domain.templates import TemplateRow, VersionRow
from homing.errors import InvalidRequest
from homing.managers.audit import AuditLog
from homing.managers.templates import Frame, TemplateBounds, Templates, normal_locale
from homing.models import Actor, AuditAction
from homing.ratelimit import RateLimiter
from homing.rendering import RenderPool, TemplateError
from homing.store.layouts import LayoutStore

DEFAULT: Final = "default"  # the key of the layout that frames emails naming none
NONE: Final = "none"  # an email part's ``layout`` that opts out of the default
# What a layout's preview frames: a stand-in for a template's email (no Jinja in it).
SAMPLE: Final = {
    "subject": "A sample email",
    "html": "<h1>A sample heading</h1><p>A template's email shows here, where the layout"
    " shows its content.</p>",
}


class Layouts(Templates):
    """Layouts and their versions of each tenant, and choosing the one an email uses."""

    noun = "layout"
    ACTIONS: ClassVar[dict[str, AuditAction]] = {
        "created": AuditAction.LAYOUT_CREATED,
        "deleted": AuditAction.LAYOUT_DELETED,
        "added": AuditAction.LAYOUT_VERSION_ADDED,
        "edited": AuditAction.LAYOUT_VERSION_EDITED,
        "published": AuditAction.LAYOUT_VERSION_PUBLISHED,
    }

    def __init__(
        self,
        store: LayoutStore,
        pool: RenderPool,
        bounds: TemplateBounds,
        max_source_chars: int,
        now: Callable[[], float] = time.monotonic,
        limiter: RateLimiter | None = None,
        *,
        audit: AuditLog | None = None,
    ) -> None:
        super().__init__(store, pool, bounds, now, limiter, audit=audit)
        self.layout_store = store
        self.max_source_chars = max_source_chars
        # (tenant id, key) → until: keys known to name no layout (``default`` mostly),
        # so a tenant without layouts pays no query per templated email; bounded.
        self._absent: OrderedDict[tuple[str, str], float] = OrderedDict()

    async def create(
        self,
        tenant_id: str,
        key: str,
        name: str | None,
        default_locale: str | None,
        actor: Actor | None = None,
    ) -> TemplateRow:
        """A new layout; 422 for the reserved key ``none``; 409 as a template's."""
        if key == NONE:
            raise InvalidRequest("'none' is reserved (an email part's opt-out)", {"field": "key"})
        return await super().create(tenant_id, key, name, default_locale, actor)

    async def check_content(
        self, tenant_id: str, parts: dict[str, Any], variables: dict[str, Any] | None
    ) -> None:
        """TemplateError unless ``parts`` is ``{"html": ...}`` showing ``{{ content }}``
        (``homing.rendering.kernel.check_layout``, in a render worker)."""
        if set(parts) != {"html"}:
            raise TemplateError("a layout version holds 'html' only")
        html = parts["html"]
        if not isinstance(html, str):
            raise TemplateError("a layout needs 'html'")
        await self.pool.check_layout(html, self.max_source_chars, tenant=tenant_id)

    async def locales(self, tenant_id: str, ids: list[str]) -> dict[str, list[str]]:
        """The locales each layout has a live version of, by layout id."""
        published = await self.published(tenant_id, ids)
        return {i: [v.locale for v in versions] for i, versions in published.items()}

    async def published(self, tenant_id: str, ids: Collection[str]) -> dict[str, list[VersionRow]]:
        """The live versions of each layout (one per locale, in locale order), by id."""
        found: dict[str, list[VersionRow]] = {i: [] for i in ids}
        for version in await self.store.live(tenant_id, ids):
            found[version.template_id].append(version)
        return {i: sorted(vs, key=lambda v: v.locale) for i, vs in found.items()}

    async def changed(self, tenant_id: str, ids: Collection[str]) -> dict[str, datetime]:
        """When a version of each layout was last added or edited, by layout id."""
        return await self.layout_store.changed(tenant_id, ids)

    async def framed(self, layout: TemplateRow, limit: int) -> tuple[list[str], bool]:
        """Keys of the templates whose live versions ``layout`` frames (by name, or as
        the ``default`` one), up to ``limit``, and whether more do."""
        return await self.layout_store.framed(
            layout.tenant_id, layout.key, layout.key == DEFAULT, limit
        )

    async def preview(
        self,
        tenant_id: str,
        ref: str,
        data: dict[str, Any],
        locale: str | None,
        number: int | None,
    ) -> tuple[VersionRow, dict[str, Any]]:
        """A sample email (``SAMPLE``) rendered inside a version of the layout (a draft
        too), or inside its live one for ``locale``, with ``data`` for the variables the
        layout shows; the same 422 a send through it would get."""
        await self.take_turn(tenant_id)
        layout = await self.get(tenant_id, ref)
        if number is not None:
            chosen = await self.version(layout, number)
        else:
            live = (await self.lookup(tenant_id, [layout.id]))[layout.id]
            chosen = live.choose(None if locale is None else normal_locale(locale))
        # The sample's own compiled copy is cached under one key: it never changes.
        sample = replace(
            chosen, id="layout-sample", parts={"email": SAMPLE}, variables=None, revision=0
        )
        return chosen, await self._render(sample, data, ["email"], Frame(chosen, {}))

    async def frame(self, tenant_id: str, key: str | None, locale: str) -> Frame | None:
        """The live layout version an email of ``locale`` goes in: the named layout's,
        or the ``default`` one's when it names none (None when there is none, or the
        part says ``none``); TemplateError when a named layout has no live version."""
        if key == NONE:
            return None
        wanted = key or DEFAULT
        until = self._absent.get((tenant_id, wanted))
        if until is not None and until > self._now():
            found = None
        else:
            found = (await self.lookup(tenant_id, [wanted])).get(wanted)
        if found is None:
            self._remember_absent(tenant_id, wanted)
            if key is None:
                return None
            raise TemplateError("no such layout", {"layout": wanted[:64]})
        try:
            chosen = found.choose(locale)
        except TemplateError:
            if key is None:
                return None
            raise TemplateError(
                "the layout has no published version for this locale",
                {"layout": wanted, "locale": locale},
            ) from None
        record = {"id": found.template.id, "key": found.template.key, "version": chosen.number}
        return Frame(chosen, {**record, "locale": chosen.locale})

    def _remember_absent(self, tenant_id: str, key: str) -> None:
        if self.bounds.cache_seconds <= 0:
            return
        self._absent[(tenant_id, key)] = self._now() + self.bounds.cache_seconds
        self._absent.move_to_end((tenant_id, key))
        while len(self._absent) > self.bounds.cache_entries:
            self._absent.popitem(last=False)

    def _forget(self, template: TemplateRow) -> None:
        super()._forget(template)
        self._absent.pop((template.tenant_id, template.key), None)
