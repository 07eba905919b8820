"""The layout store's reads for the console, on both databases: which templates'
published versions a layout frames (by name, or as ``default``; bounded, in key order,
scoped by tenant) and when each layout's versions last changed."""

from __future__ import annotations

from typing import Any

from homing.clock import ManualClock
from homing.services import Services
from homing.store.templates import TemplateStore
from tests.conftest import stored_tenant


async def _published(store: TemplateStore, tenant: str, key: str, email: dict[str, Any]) -> None:
    template = await store.create(tenant, key, key, "en", most=50)
    version = await store.add_version(template, "en", {"email": email}, None, most=10)
    await store.publish(template, version.id)


async def test_a_layout_frames_the_published_templates_naming_it_and_no_others(
    services: Services,
) -> None:
    templates, layouts = services.templates.store, services.layouts.layout_store
    tenant, other = await stored_tenant(services), await stored_tenant(services, "other")
    for key in ("c", "a", "b"):
        await _published(templates, tenant, key, {"html": "<p>x</p>", "layout": "brand"})
    await _published(templates, tenant, "bare", {"html": "<p>x</p>"})
    await _published(templates, tenant, "texty", {"text": "x"})
    await _published(templates, tenant, "opted-out", {"html": "<p>x</p>", "layout": "none"})
    await _published(templates, other, "theirs", {"html": "<p>x</p>", "layout": "brand"})
    drafty = await templates.create(tenant, "drafty", "d", "en", most=50)
    named = {"email": {"html": "<p>x</p>", "layout": "brand"}}
    await templates.add_version(drafty, "en", named, None, most=10)

    assert await layouts.framed(tenant, "brand", False, 10) == (["a", "b", "c"], False)
    assert await layouts.framed(tenant, "brand", False, 2) == (["a", "b"], True)
    assert await layouts.framed(tenant, "default", True, 10) == (["bare"], False)
    assert await layouts.framed(other, "brand", False, 10) == (["theirs"], False)
    assert await layouts.framed(other, "nothing", False, 10) == ([], False)


async def test_a_layouts_last_change_is_its_newest_version_edit(
    services: Services, clock: ManualClock
) -> None:
    store = services.layouts.layout_store
    tenant = await stored_tenant(services)
    brand = await store.create(tenant, "brand", "Brand", "en", most=10)
    empty = await store.create(tenant, "empty", "Empty", "en", most=10)
    first = await store.add_version(brand, "en", {"html": "{{ content }}"}, None, most=10)
    clock.advance(60)
    edited = await store.edit(brand, first.id, {"parts": {"html": "<b>{{ content }}</b>"}})
    changed = await store.changed(tenant, [brand.id, empty.id])
    assert changed == {brand.id: edited.updated_at} and edited.updated_at > first.updated_at
    assert await store.changed(tenant, []) == {}
