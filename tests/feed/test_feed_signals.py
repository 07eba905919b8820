"""The one poll of a process's open streams reads, on SQLite and PostgreSQL
(``FeedStore.signals``): each watched recipient's newest sequence number and unread
count, and the watched tenants' feed secrets, in statements of SIGNAL_CHUNK
recipients, never another tenant's or an unwatched recipient's."""

from __future__ import annotations

from homing.services import Services
from homing.store.feed import SIGNAL_CHUNK, FeedStore
from tests.conftest import TenantClient, make_tenant
from tests.feed_helpers import bearer, feed_token, put_recipient, sent


async def test_signals_give_each_watched_feeds_newest_seq_unread_count_and_secret(
    services: Services, tenant: TenantClient
) -> None:
    other = await make_tenant(services, tenant.api, "other")
    for client in (tenant, other):
        await put_recipient(client, "user-1")
        await put_recipient(client, "quiet")
    for body in ("one", "two", "three"):
        await sent(tenant, "user-1", body=body)
    await sent(other, "user-1", body="theirs")
    token = await feed_token(tenant, "user-1")  # makes the tenant's feed secret
    first = (await tenant.api.get("/feed", headers=bearer(token))).json()["data"][-1]
    read = await tenant.api.post(f"/feed/{first['id']}/read", headers=bearer(token))
    assert read.status_code == 200
    mine = await services.feed.reader_of(tenant.tenant_id, "user-1")
    quiet = await services.feed.reader_of(tenant.tenant_id, "quiet")
    theirs = await services.feed.reader_of(other.tenant_id, "user-1")
    # Unknown recipients fill more than one statement's worth.
    filler = [(tenant.tenant_id, f"no-such-{n}") for n in range(SIGNAL_CHUNK)]
    keys = [*filler, mine.key, quiet.key]
    signals = await FeedStore(services.db, services.clock).signals(keys)
    assert signals.feeds == {mine.key: (3, 2)}
    assert set(signals.secrets) == {tenant.tenant_id}
    both = await FeedStore(services.db, services.clock).signals([mine.key, theirs.key])
    assert both.feeds == {mine.key: (3, 2), theirs.key: (1, 1)}
    assert set(both.secrets) == {tenant.tenant_id}  # the other has made no token yet
