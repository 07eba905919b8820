"""The template store on both databases: numbering, publishing one live version per
locale, drafts that change and published versions that do not, and tenant scoping."""

from __future__ import annotations

import pytest

from homing.domain.templates import DRAFT, PUBLISHED, RETIRED
from homing.errors import Conflict, NotFound
from homing.managers.templates import TemplateBounds, Templates
from homing.services import Services
from tests.conftest import stored_tenant

SMS = {"sms": {"body": "hi"}}


async def test_publishing_retires_only_the_live_version_of_the_same_locale(
    services: Services,
) -> None:
    store = services.templates.store
    tenant = await stored_tenant(services)
    template = await store.create(tenant, "welcome", "Welcome", "en", most=10)
    en1 = await store.add_version(template, "en", SMS, None, most=10)
    fr1 = await store.add_version(template, "fr", SMS, None, most=10)
    en2 = await store.add_version(template, "en", SMS, None, most=10)
    assert [v.number for v in (en1, fr1, en2)] == [1, 2, 3]
    for version in (en1, fr1, en2):
        await store.publish(template, version.id)
    states = {v.number: v.state for v in (await store.versions(template, 10, None))[0]}
    assert states == {1: RETIRED, 2: PUBLISHED, 3: PUBLISHED}
    assert sorted(v.number for v in await store.live(tenant, [template.id])) == [2, 3]
    # Publishing a retired version again rolls back to it.
    await store.publish(template, en1.id)
    assert sorted(v.number for v in await store.live(tenant, [template.id])) == [1, 2]


async def test_a_draft_edit_counts_and_a_published_version_refuses_edits(
    services: Services,
) -> None:
    store = services.templates.store
    tenant = await stored_tenant(services)
    template = await store.create(tenant, "t", "t", "en", most=10)
    draft = await store.add_version(template, "en", SMS, None, most=10)
    edited = await store.edit(template, draft.id, {"parts": {"sms": {"body": "new"}}})
    assert (edited.state, edited.revision, edited.parts) == (DRAFT, 1, {"sms": {"body": "new"}})
    await store.publish(template, draft.id)
    with pytest.raises(Conflict):
        await store.edit(template, draft.id, {"parts": SMS})
    with pytest.raises(NotFound):
        await store.edit(template, "no-such-id", {"parts": SMS})


async def test_another_tenant_reads_none_of_it_and_delete_takes_the_versions(
    services: Services,
) -> None:
    store = services.templates.store
    owner = await stored_tenant(services, "owner")
    other = await stored_tenant(services, "other")
    template = await store.create(owner, "t", "t", "en", most=10)
    version = await store.add_version(template, "en", SMS, None, most=10)
    await store.publish(template, version.id)
    assert await store.get(other, "t") is None
    assert await store.get(other, template.id) is None
    assert await store.lookup(other, ["t", template.id]) == []
    [(found, live)] = await store.lookup(owner, ["t", template.id])
    assert (found.id, [v.id for v in live]) == (template.id, [version.id])
    assert await store.live(other, [template.id]) == []
    with pytest.raises(NotFound):
        await store.delete(other, template.id)
    await store.delete(owner, template.id)
    assert await store.get(owner, "t") is None
    assert await store.live(owner, [template.id]) == []


async def test_a_send_lookup_is_reused_for_the_cache_seconds_and_dropped_by_a_publish(
    services: Services,
) -> None:
    store = services.templates.store
    moment = [100.0]
    templates = Templates(
        store, services.render_pool, TemplateBounds(cache_seconds=2), now=lambda: moment[0]
    )
    tenant = await stored_tenant(services)
    template = await templates.create(tenant, "t", None, None)
    v1 = await templates.add_version(tenant, "t", None, SMS, None)
    await templates.publish(tenant, "t", v1.id)
    assert [v.number for v in (await templates.lookup(tenant, {"t"}))["t"].versions] == [1]
    # Published by another process (straight to the store): seen once the entry expires.
    v2 = await store.add_version(template, "en", SMS, None, most=10)
    await store.publish(template, v2.id)
    assert [v.number for v in (await templates.lookup(tenant, {"t"}))["t"].versions] == [1]
    moment[0] += 2.5
    assert [v.number for v in (await templates.lookup(tenant, {"t"}))["t"].versions] == [2]
    # Published through this process: seen at once.
    v3 = await templates.add_version(tenant, "t", None, SMS, None)
    await templates.publish(tenant, template.id, v3.id)
    assert [v.number for v in (await templates.lookup(tenant, {"t"}))["t"].versions] == [3]
    await templates.delete(tenant, "t")
    assert await templates.lookup(tenant, {"t"}) == {}
