"""No inbound secret in plaintext: not in the database, a log line, a response or a repr."""

from __future__ import annotations

import io

import httpx
from sqlalchemy import select

from homing.services import Services
from homing.store.tables.core import metadata
from tests.conftest import TenantClient
from tests.inbound.conftest import (
    MAILGUN_KEY,
    POSTMARK_AUTH,
    RESEND_SECRET,
    connect,
    mailgun_body,
    resend_event,
    send_email,
)


async def test_inbound_secrets_never_appear_in_clear(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient, log_stream: io.StringIO
) -> None:
    resend = await connect(services, tenant, "resend")
    mailgun = await connect(services, tenant, "mailgun")
    postmark = await connect(services, tenant, "postmark")
    job_id = (await send_email(tenant)).json()["id"]
    body = resend_event("email.delivered", job_id)
    await api.post(resend.path, content=body, headers=resend.sign(body, "m1"))
    forged = resend_event("email.bounced", job_id)
    await api.post(resend.path, content=forged, headers=resend.sign(forged, "m1"))
    await api.post(resend.path, content=body + b" ", headers=resend.sign(body, "m2"))
    event = {"event": "delivered", "id": "e", "timestamp": 1.0, "user-variables": {"hjid": job_id}}
    await api.post(mailgun.path, content=mailgun_body(event))
    await api.post(postmark.path, content=b"{}", headers={"Authorization": "Basic eDp5"})
    target = await services.inbound.secrets.target("resend", resend.path.rsplit("/", 1)[1])
    responses = [
        (await tenant.get(f"/v1/providers/{vendor.path.rsplit('/', 1)[1]}/inbound")).text
        for vendor in (resend, mailgun, postmark)
    ]
    responses.append((await tenant.get(f"/v1/jobs/{job_id}")).text)
    rows: list[str] = []
    async with services.db.transaction() as conn:
        for table in metadata.sorted_tables:
            rows += [repr(tuple(row)) for row in (await conn.execute(select(table))).all()]
    dump = "\n".join(rows)
    logs = log_stream.getvalue()
    assert "conflict" in logs
    for secret in (RESEND_SECRET, MAILGUN_KEY, POSTMARK_AUTH["password"]):
        assert secret not in dump
        assert secret not in logs
        assert secret not in repr(target)
        for text in responses:
            assert secret not in text
