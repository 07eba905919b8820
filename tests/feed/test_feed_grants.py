"""A stream's token checked again at every read (``Feed.follow``), on SQLite and
PostgreSQL: the same secret re-sealed under another key (``homing keys rotate``) keeps
the stream, a rotated secret ends it as ``revoked`` with nothing read sent, an expired
token as ``expired``."""

from __future__ import annotations

from homing.clock import ManualClock
from homing.services import Services
from homing.store.feed_access import (
    FEED_SECRET_FIELD,
    FEED_SECRETS_TABLE,
    FeedAccessStore,
    FeedSecretRow,
)
from tests.conftest import TenantClient
from tests.feed_helpers import put_recipient, sent, sign


async def test_a_resealed_secret_keeps_the_stream_and_a_rotated_one_ends_it(
    services: Services, tenant: TenantClient, clock: ManualClock
) -> None:
    await put_recipient(tenant, "user-1")
    secret = (await tenant.post("/v1/feed-secret/rotate")).json()["secret"]
    token = sign(secret, tenant.tenant_id, "user-1", int(clock.now()) + 600)
    reader, grant = await services.feed.grant(token)
    access = FeedAccessStore(services.db)
    stored = await access.secret(tenant.tenant_id)
    assert stored is not None
    resealed = services.sealer.seal(
        secret.encode(), table=FEED_SECRETS_TABLE, row_id=tenant.tenant_id, field=FEED_SECRET_FIELD
    )
    assert resealed != stored.sealed
    row = FeedSecretRow(tenant.tenant_id, resealed, stored.preview, stored.created_at)
    await access.put_secret(row, replace=True)
    await sent(tenant, "user-1", body="after the re-seal")
    read = await services.feed.follow(reader, grant, 0, 10)
    assert [item.body for item in read.items] == ["after the re-seal"]
    assert read.standing != grant and read.standing != "revoked"

    assert (await tenant.post("/v1/feed-secret/rotate")).status_code == 200
    await sent(tenant, "user-1", body="after the rotation")
    ended = await services.feed.follow(reader, grant, 0, 10)
    assert (ended.items, ended.standing) == ([], "revoked")


async def test_an_expired_token_ends_the_stream(
    services: Services, tenant: TenantClient, clock: ManualClock
) -> None:
    await put_recipient(tenant, "user-1")
    secret = (await tenant.post("/v1/feed-secret/rotate")).json()["secret"]
    token = sign(secret, tenant.tenant_id, "user-1", int(clock.now()) + 60)
    reader, grant = await services.feed.grant(token)
    await sent(tenant, "user-1", body="before")
    assert len((await services.feed.follow(reader, grant, 0, 10)).items) == 1
    clock.advance(60)
    ended = await services.feed.follow(reader, grant, 0, 10)
    assert (ended.items, ended.standing) == ([], "expired")
