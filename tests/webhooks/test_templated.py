"""A webhook sent by template, end to end on both databases: the template's webhook
part, rendered with the send's data, is the signed body the receiver gets; the job
records the template; a template without a webhook part is 422."""

from __future__ import annotations

import json

from homing.services import Services
from tests.conftest import TenantClient, deliver, job
from tests.webhooks.conftest import create_secret
from tests.webhooks.receiver import Receiver
from tests.webhooks.test_delivery import check_signed

PART = {"payload": {"event": "order.paid", "order": "{{ order }}", "lines": ["{{ n }}", 2]}}


async def test_a_templated_webhook_sends_its_rendered_payload_signed(
    services: Services, tenant: TenantClient, receiver: Receiver
) -> None:
    secret = await create_secret(tenant)
    assert (await tenant.post("/v1/templates", json={"key": "paid"})).status_code == 201
    version = await tenant.post(
        "/v1/templates/paid/versions", json={"webhook": PART, "sms": {"body": "x"}}
    )
    vid = version.json()["id"]
    assert (await tenant.post(f"/v1/templates/paid/versions/{vid}/publish")).status_code == 200
    sent = await tenant.post(
        "/v1/notifications/webhook",
        json={
            "url": f"{receiver.url}/hooks",
            "template": "paid",
            "data": {"order": "o_1", "n": "3"},
        },
    )
    assert sent.status_code == 202, sent.text
    job_id = sent.json()["id"]
    assert await deliver(services) == 1
    [request] = receiver.requests
    check_signed(request, secret)
    assert json.loads(request.body) == {"event": "order.paid", "order": "o_1", "lines": ["3", 2]}
    body = await job(tenant, job_id)
    assert body["status"] == "COMPLETED"
    assert (body["template"]["key"], body["template"]["version"]) == ("paid", 1)
    response = await tenant.post(
        "/v1/notifications/webhook",
        json={"url": f"{receiver.url}/hooks", "template": "paid", "payload": {"a": 1}},
    )
    assert response.status_code == 422  # both at once
    assert (await tenant.post("/v1/templates", json={"key": "sms-only"})).status_code == 201
    other = await tenant.post("/v1/templates/sms-only/versions", json={"sms": {"body": "x"}})
    oid = other.json()["id"]
    await tenant.post(f"/v1/templates/sms-only/versions/{oid}/publish")
    response = await tenant.post(
        "/v1/notifications/webhook", json={"url": f"{receiver.url}/hooks", "template": "sms-only"}
    )
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "template_error"
