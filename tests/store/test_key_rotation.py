"""`homing keys rotate` re-seals every stored secret under the new master key."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import select, update

from homing.channels import Channel
from homing.crypto import MasterKey, Sealer, generate_master_key
from homing.domain.accepting import NewJob
from homing.errors import DecryptionError
from homing.inbound.secrets import InboundSecrets
from homing.managers.keyrotation import KeyRotation
from homing.models import Plan, Priority, ProviderAccount, Queue, new_id
from homing.services import Services
from homing.store.feed_access import FEED_SECRET_FIELD, FEED_SECRETS_TABLE, FeedAccessStore
from homing.store.inbound_secrets import InboundSecretStore
from homing.store.providers import open_credentials, seal_credentials
from homing.store.tables.core import jobs, provider_accounts, webhook_secrets
from homing.store.webhooks import SECRET_FIELD, WEBHOOK_SECRETS_TABLE
from homing.webhooks.message import read_message, write_message

CREDENTIALS = {"api_key": "re_live_rotate_me_123456"}
HEADERS = {"Authorization": "Bearer receiver-token-abcdef"}


async def _seed(services: Services) -> tuple[str, str, str]:
    tenant, _ = await services.tenants.create("t", Plan.STARTUP)
    account_id = new_id()
    await services.providers.add(
        ProviderAccount(
            id=account_id,
            tenant_id=tenant.id,
            channel=Channel.EMAIL,
            vendor="resend",
            priority=1,
            enabled=True,
            credentials_sealed=seal_credentials(services.sealer, account_id, CREDENTIALS),
            credentials_preview="api_key=re_…3456",
            config={},
            created_at=datetime.now(UTC),
        )
    )
    issued = await services.webhooks.secrets.create(tenant.id)
    await services.inbound.secrets.put(
        tenant.id, account_id, {"signing_secret": "whsec_" + "QUJD" * 8}
    )
    payload = write_message(
        services.sealer, tenant.id, "https://hooks.example.com/x", b"{}", HEADERS, None
    )
    job = NewJob(
        tenant_id=tenant.id,
        channel=Channel.WEBHOOK,
        queue=Queue.WEBHOOK,
        priority=Priority.NORMAL,
        payload=payload,
    )
    job_id = (await services.jobs.accept(job)).job.id
    await services.feed.rotate(tenant.id)
    return account_id, issued.secret, job_id


async def test_rotation_reseals_everything_and_the_old_key_can_go(
    services: Services,
) -> None:
    account_id, webhook_secret, job_id = await _seed(services)
    old = services.sealer
    new_key = MasterKey.from_b64(generate_master_key())
    old_keys = [MasterKey.from_b64(services.settings.secret_key.get_secret_value())]  # type: ignore[union-attr]
    rotating = Sealer(new_key, old_keys)
    messages: list[str] = []

    report = await KeyRotation(services.db, rotating, messages.append).run()

    assert report.resealed == {
        "provider credentials": 1,
        "webhook signing secrets": 1,
        "inbound verification secrets": 1,
        "webhook job headers": 1,
        "dead-letter copies": 0,
        "console flashes": 0,
        "feed secrets": 1,
    }
    assert messages, "progress is reported"
    again = await KeyRotation(services.db, rotating).run()
    assert again.total == 0 and again.current == 5

    only_new = Sealer(new_key)
    async with services.db.transaction() as conn:
        account = (
            await conn.execute(
                select(provider_accounts).where(provider_accounts.c.id == account_id)
            )
        ).one()
        secret_row = (await conn.execute(select(webhook_secrets))).one()
        payload = (
            await conn.execute(select(jobs.c.payload).where(jobs.c.id == job_id))
        ).scalar_one()
    stored = await services.providers.get(account.tenant_id, account_id)
    assert open_credentials(only_new, stored) == CREDENTIALS
    with pytest.raises(DecryptionError):
        open_credentials(old, stored)
    opened = only_new.open(
        secret_row.secret_sealed,
        table=WEBHOOK_SECRETS_TABLE,
        row_id=secret_row.id,
        field=SECRET_FIELD,
    )
    assert opened.decode() == webhook_secret
    assert read_message(only_new, account.tenant_id, payload).headers == HEADERS
    inbound = InboundSecrets(
        InboundSecretStore(services.db), services.providers, only_new, services.clock
    )
    target = await inbound.target("resend", account_id)
    assert target is not None and target.secret["signing_secret"].startswith("whsec_")
    feed_row = await FeedAccessStore(services.db).secret(account.tenant_id)
    assert feed_row is not None
    opened_feed = only_new.open(
        feed_row.sealed, table=FEED_SECRETS_TABLE, row_id=account.tenant_id, field=FEED_SECRET_FIELD
    )
    assert opened_feed.decode().startswith("hfs_")


async def test_values_changed_between_read_and_write_are_skipped_not_revived(
    services: Services,
) -> None:
    _, _, job_id = await _seed(services)
    old_keys = [MasterKey.from_b64(services.settings.secret_key.get_secret_value())]  # type: ignore[union-attr]
    rotating = Sealer(MasterKey.from_b64(generate_master_key()), old_keys)
    # Pages are written in this order: provider credentials, webhook signing secrets,
    # inbound secrets, job headers, feed secrets. Change the second and the fourth under
    # the rotation.
    changes = {
        2: webhook_secrets.delete(),
        4: update(jobs).where(jobs.c.id == job_id).values(payload={"replaced": True}),
    }
    writes = 0

    async def meanwhile() -> None:
        nonlocal writes
        writes += 1
        if writes in changes:
            async with services.db.transaction() as conn:
                await conn.execute(changes[writes])

    report = await KeyRotation(services.db, rotating, before_write=meanwhile).run()

    assert writes == 5
    assert report.resealed == {
        "provider credentials": 1,
        "webhook signing secrets": 0,
        "inbound verification secrets": 1,
        "webhook job headers": 0,
        "dead-letter copies": 0,
        "console flashes": 0,
        "feed secrets": 1,
    }
    assert report.skipped == 2
    async with services.db.transaction() as conn:
        payload = (
            await conn.execute(select(jobs.c.payload).where(jobs.c.id == job_id))
        ).scalar_one()
        assert (await conn.execute(select(webhook_secrets))).first() is None
    assert payload == {"replaced": True}
