"""Erasure leaves the person nowhere, on SQLite and PostgreSQL (issue #39, item 5;
docs/recipients.md, "Erasure").

One tenant's person is put everywhere Homing can store them: a recipient with
properties and preferences, single sends on every channel (email, SMS, chat, in-app),
multi-channel notifications whose ``first`` and ``escalate`` strategies leave steps
unused, a digest still open, suppressions and audit events. Then the person is erased
as the API does it (``DELETE /v1/recipients/{id}``, then ``POST /v1/erasure`` for the
email address and the phone number), and **every table the database has** (read from
the schema, never from a list here, so the next table added is searched too) is read
row by row as text for the external id, the addresses, the name and the rendered
content. A second tenant holds the same person, with the same traces: its rows must be
exactly what they were.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from sqlalchemy import inspect, select, text, update
from sqlalchemy.engine import Connection

from homing.clock import ManualClock
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.store.tables.core import jobs
from homing.store.tables.notifications import notification_steps
from tests.chat_helpers import bot_token, register_telegram
from tests.conftest import TenantClient, deliver, make_tenant
from tests.e2e.conftest import register
from tests.e2e.test_recipients import put_category, put_recipient
from tests.e2e.test_sms import register_sms
from tests.e2e.test_templates import make_template, publish
from tests.feed_helpers import bearer, feed_token

PERSON = "qz81x-ada"  # the recipient's external id
EMAIL = "ada.quokka@example.org"
NAME = "Quokka"
PHONE = "+14155552671"
TELEGRAM = "918273645"
CONTENT = "zebra-marmalade"  # only ever in the data the templates render
# Each as it is stored and as it was given.
NEEDLES = (PERSON, EMAIL, NAME, PHONE, "415 555 2671", TELEGRAM, CONTENT)
# Nothing is allowed to keep any of them: the kept hashes are of (tenant, channel,
# address), never the address itself.
FROM = "Acme <hello@acme.example>"
PARTS: dict[str, Any] = {
    "email": {"subject": "For {{ who }}", "text": "Your code: {{ secret }}"},
    "sms": {"body": "Your code: {{ secret }}"},
    "in_app": {"title": "For {{ who }}", "body": "Your code: {{ secret }}"},
}
DATA = {"who": NAME, "secret": CONTENT}

Cell = tuple[str, str, str]  # table, column, the value as text


async def posted(
    tenant: TenantClient, path: str, body: dict[str, Any], key: str | None = None
) -> dict[str, Any]:
    headers = {} if key is None else {"Idempotency-Key": key}
    response = await tenant.post(path, json=body, headers=headers)
    assert response.status_code in (200, 201, 202), response.text
    answer: dict[str, Any] = response.json()
    return answer


async def notify(tenant: TenantClient, key: str | None = None, **body: Any) -> dict[str, Any]:
    message = {"recipient": PERSON, "template": "report", "data": DATA, "from": FROM}
    return await posted(tenant, "/v1/notifications", {**message, **body}, key)


async def sends(tenant: TenantClient) -> None:
    """One single send on each channel: to the address, and by recipient."""
    email = {"from": FROM, "subject": f"Hi {NAME}", "text": CONTENT}
    await posted(tenant, "/v1/notifications/email", {**email, "to": f"Ada {NAME} <{EMAIL}>"})
    # Idempotency keys are the tenant's own, and often name the person.
    by_recipient = {**email, "recipient": PERSON}
    await posted(tenant, "/v1/notifications/email", by_recipient, f"welcome-{PERSON}")
    await posted(tenant, "/v1/notifications/sms", {"to": "+1 415 555 2671", "body": CONTENT})
    await posted(tenant, "/v1/notifications/chat", {"recipient": PERSON, "text": CONTENT})
    in_app = {"recipient": PERSON, "title": NAME, "body": CONTENT}
    await posted(tenant, "/v1/notifications/in-app", in_app)


async def read_newest(tenant: TenantClient) -> None:
    token = await feed_token(tenant, PERSON)
    [item, *_] = (await tenant.api.get("/feed", headers=bearer(token))).json()["data"]
    marked = await tenant.api.post(f"/feed/{item['id']}/read", headers=bearer(token))
    assert marked.status_code == 200, marked.text


async def populate(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, bot: int
) -> None:
    """The person everywhere the tenant's API can put them; no notification left running
    (``bot``: the tenant's own Telegram bot, paced apart from the other's)."""
    await make_template(tenant, "report")
    await publish(tenant, "report", **PARTS)
    await register(tenant, sandbox, "resend", 1)
    await register_sms(tenant, sandbox, "twilio", 1)
    await register_telegram(tenant, sandbox, bot_token(bot))
    await put_category(tenant, "news")
    await put_recipient(
        tenant,
        PERSON,
        email=f"Ada {NAME} <{EMAIL}>",
        phone="+1 415 555 2671",
        telegram_chat_id=TELEGRAM,
        data={"nickname": NAME, "note": CONTENT},
    )
    patch = {"categories": {"news": {"sms": False}}}
    assert (await tenant.patch(f"/v1/recipients/{PERSON}/preferences", json=patch)).is_success
    await sends(tenant)
    # first: the email goes, the SMS step is never needed; escalate: the in-app item is
    # read in time, the SMS and email steps are never needed.
    first = await notify(tenant, f"first-{EMAIL}", channels=["email", "sms"], strategy="first")
    escalate = await notify(
        tenant, channels=["in_app", "sms", "email"], strategy="escalate", escalate_after_seconds=600
    )
    await read_newest(tenant)
    digest = {"key": "daily", "window_seconds": 3600}
    await notify(tenant, channels=["email", "sms"], strategy="all", digest=digest)
    await deliver(services)
    await services.notifications.sweep()
    listed = (await tenant.get("/v1/jobs", params={"limit": 100})).json()["data"]
    assert {j["status"] for j in listed} == {"COMPLETED"}, listed
    for body in (first, escalate):
        shown = (await tenant.get(f"/v1/notifications/{body['id']}")).json()
        assert shown["status"] == "succeeded", shown
        assert "not_needed" in [s["status"] for s in shown["steps"]], shown
    for channel, address in (("email", EMAIL), ("sms", PHONE)):
        body = {"address": address, "channel": channel, "reason": "manual"}
        await posted(tenant, "/v1/suppressions", body)


def _tables(sync: Connection) -> list[str]:
    return sorted(inspect(sync).get_table_names())


async def holders(services: Services) -> Counter[Cell]:
    """Every cell of every table of the database that holds one of the needles."""
    found: Counter[Cell] = Counter()
    async with services.db.transaction() as conn:
        names = await conn.run_sync(_tables)
        assert "notification_steps" in names and "jobs" in names, names
        for name in names:
            rows = await conn.execute(text(f'SELECT * FROM "{name}"'))
            for row in rows.mappings():
                for column, value in row.items():
                    shown = _text(value)
                    if any(needle.lower() in shown for needle in NEEDLES):
                        found[(name, column, shown)] += 1
    return found


def _text(value: Any) -> str:
    if isinstance(value, bytes | memoryview):
        return bytes(value).decode("latin-1").lower()
    return str(value).lower()


def where(cells: Counter[Cell]) -> list[str]:
    """The table.column names of ``cells``, for the failure's message (no values)."""
    return sorted({f"{table}.{column}" for table, column, _ in cells})


async def test_an_erased_person_is_in_no_row_of_any_table_and_another_tenants_stays(
    services: Services, api: Any, sandbox: SandboxServer
) -> None:
    other = await make_tenant(services, api, "globex")
    await populate(services, other, sandbox, 1)
    theirs = await holders(services)
    assert len(where(theirs)) > 10, where(theirs)  # the search finds what is there

    tenant = await make_tenant(services, api, "acme")
    await populate(services, tenant, sandbox, 2)
    assert (await holders(services)) - theirs, "the tenant's person is stored nowhere?"

    deleted = await tenant.delete(f"/v1/recipients/{PERSON}")
    addresses = (("email", f"Ada {NAME} <{EMAIL.upper()}>"), ("sms", "+1 415 555 2671"))
    erased = [
        await tenant.post("/v1/erasure", json={"address": address, "channel": channel})
        for channel, address in addresses
    ]
    after = await holders(services)
    for response in (deleted, *erased):
        assert response.status_code == 200, response.text
        assert response.json()["complete"] is True, response.text
    assert where(after - theirs) == [], f"the erased person is still in {where(after - theirs)}"
    assert where(theirs - after) == [], "another tenant's rows changed"
    assert after == theirs


async def kept_spec(services: Services, notification_id: str, position: int) -> Any:
    s = notification_steps.c
    async with services.db.transaction() as conn:
        query = select(s.spec).where(s.notification_id == notification_id, s.position == position)
        return (await conn.execute(query)).scalar_one()


async def as_before_the_fix(services: Services, notification_id: str, spec: Any) -> None:
    """The rows a version before this erasure left: an unused step keeping its spec, and
    in-app jobs naming their recipient only in their payload."""
    s, j = notification_steps.c, jobs.c
    async with services.db.transaction() as conn:
        await conn.execute(
            update(notification_steps)
            .where(s.notification_id == notification_id, s.status == "not_needed")
            .values(spec=spec)
        )
        await conn.execute(update(jobs).where(j.channel == "in_app").values(recipient_id=None))


async def test_erasure_ends_the_pending_steps_addressed_to_the_person_and_old_rows_too(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, clock: ManualClock
) -> None:
    await make_template(tenant, "report")
    await publish(tenant, "report", **PARTS)
    await register(tenant, sandbox, "resend", 1)
    await register_sms(tenant, sandbox, "twilio", 1)
    await put_recipient(tenant, PERSON, email=EMAIL, phone=PHONE)
    first = await notify(tenant, channels=["email", "sms"], strategy="first")
    spec = await kept_spec(services, first["id"], 1)
    assert await deliver(services) == 1 and await services.notifications.sweep() == 1
    assert await kept_spec(services, first["id"], 1) is None  # not needed: nothing kept
    await posted(tenant, "/v1/notifications/in-app", {"recipient": PERSON, "body": CONTENT})
    await as_before_the_fix(services, first["id"], spec)
    escalate = await notify(
        tenant, channels=["in_app", "sms", "email"], strategy="escalate", escalate_after_seconds=600
    )

    # By address: the steps to it, pending or left unused, keep nothing and are never made.
    by_phone = await posted(tenant, "/v1/erasure", {"address": "+1 415 555 2671", "channel": "sms"})
    assert by_phone["erased"]["notification_steps"] == 2 and by_phone["complete"] is True
    by_email = await posted(tenant, "/v1/erasure", {"address": EMAIL, "channel": "email"})
    assert by_email["erased"]["notification_steps"] == 1 and by_email["complete"] is True
    clock.advance(601)
    assert await services.notifications.sweep() == 1
    assert await deliver(services) == 0
    shown = (await tenant.get(f"/v1/notifications/{escalate['id']}")).json()
    assert shown["status"] == "unconfirmed"
    assert [(s["status"], s["reason"]) for s in shown["steps"]] == [
        ("unconfirmed", "no_signal"),
        ("skipped", "erased"),
        ("skipped", "erased"),
    ]

    # By recipient: its in-app jobs are found by the id in their payload.
    deleted = await tenant.delete(f"/v1/recipients/{PERSON}")
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["erased"]["jobs"] == 2  # in-app (the email went with its address)
    assert where(await holders(services)) == []
