"""No provider credential in plaintext: not in the database, a log line or a response."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest
from sqlalchemy import select

from homing.logs import configure_logging
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.store.schema import metadata
from tests.conftest import TenantClient
from tests.e2e.conftest import Sandbox, deliver, register, send

SECRETS = {
    "resend": "re_live_Zq8vTopSecret_11111",
    "sendgrid": "SG.live_TopSecret_22222",
    "mailgun": "key-live-TopSecret-33333",
}
SMTP_PASSWORD = "smtp-Passw0rd-TopSecret-44444"


@pytest.fixture
def log_stream() -> Iterator[io.StringIO]:
    buffer = io.StringIO()
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    configure_logging("debug", buffer)
    yield buffer
    root.handlers = handlers
    root.setLevel(level)


async def test_no_credential_appears_in_the_database_logs_or_responses(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    log_stream: io.StringIO,
) -> None:
    for priority, (provider, key) in enumerate(SECRETS.items(), start=1):
        creds = {"api_key": key, **({"domain": "mg.example.com"} if provider == "mailgun" else {})}
        await register(tenant, sandbox, provider, priority, credentials=creds)
    assert sandbox.smtp_port is not None
    smtp = {
        "host": "127.0.0.1",
        "port": sandbox.smtp_port,
        "username": "u",
        "password": SMTP_PASSWORD,
    }
    await register(tenant, sandbox, "smtp", 9, credentials=smtp)
    await sb.fault("resend", status=401)
    await sb.fault("sendgrid", status=503)
    await sb.fault("mailgun", mode="timeout")
    job_id = await send(tenant)
    await deliver(services)
    responses = [
        (await tenant.get("/v1/providers")).text,
        (await tenant.get(f"/v1/jobs/{job_id}")).text,
        (await tenant.get("/v1/jobs")).text,
    ]
    assert '"provider":"smtp"' in responses[1]
    dump = await _dump(services)
    logs = log_stream.getvalue()
    assert "dead-lettered" not in logs
    for secret in [*SECRETS.values(), SMTP_PASSWORD]:
        assert secret not in dump
        assert secret not in logs
        for text in responses:
            assert secret not in text


async def _dump(services: Services) -> str:
    rows: list[str] = []
    async with services.db.transaction() as conn:
        for table in metadata.sorted_tables:
            for row in (await conn.execute(select(table))).all():
                rows.append(repr(tuple(row)))
    return "\n".join(rows)
