"""Templates end to end, on SQLite and PostgreSQL: create, version, publish, send with
data through the API and the worker to the sandbox over real HTTP; the vendor gets
the rendered content, the job records the template's version and locale, a later
publish leaves a queued job alone, and every refusal is the 422 a client can act on."""

from __future__ import annotations

from typing import Any

from homing.channels import Channel
from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.chat_helpers import register_telegram
from tests.conftest import TenantClient, stored_provider
from tests.e2e.conftest import Sandbox, deliver, job, register
from tests.e2e.test_sms import TO, register_sms

EMAIL = {
    "subject": "Welcome, {{ name }}",
    "html": "<style>p { color: #333 }</style>"
    '<p>Hello {{ name }}, <a href="{{ url }}">start</a>.</p>',
}
DATA = {"name": "Ann & Bo", "url": "https://example.com/start"}


async def make_template(tenant: TenantClient, key: str = "welcome", **body: Any) -> dict[str, Any]:
    response = await tenant.post("/v1/templates", json={"key": key, **body})
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def publish(tenant: TenantClient, ref: str, **content: Any) -> dict[str, Any]:
    """A new version of ``ref`` with ``content``, published (both answers asserted)."""
    response = await tenant.post(f"/v1/templates/{ref}/versions", json=content)
    assert response.status_code == 201, response.text
    version: dict[str, Any] = response.json()
    response = await tenant.post(f"/v1/templates/{ref}/versions/{version['id']}/publish")
    assert response.status_code == 200, response.text
    published: dict[str, Any] = response.json()
    return published


async def send_templated(tenant: TenantClient, **body: Any) -> str:
    message = {"to": "ada@example.com", "from": "hello@acme.example", **body}
    response = await tenant.post("/v1/notifications/email", json=message)
    assert response.status_code == 202, response.text
    job_id: str = response.json()["id"]
    return job_id


async def test_a_published_template_sends_rendered_email_and_the_job_records_it(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    created = await make_template(tenant, name="Welcome mail")
    assert created["channels"] == [] and created["default_locale"] == "en"
    version = await publish(tenant, "welcome", email=EMAIL)
    assert (version["number"], version["state"], version["locale"]) == (1, "published", "en")
    job_id = await send_templated(tenant, template="welcome", data=DATA)
    assert await deliver(services) == 1
    body = await job(tenant, job_id)
    assert body["status"] == "COMPLETED"
    assert body["template"] == {"id": created["id"], "key": "welcome", "version": 1, "locale": "en"}
    [message] = await sb.messages("resend")
    assert message["subject"] == "Welcome, Ann & Bo"
    assert '<p style="color: #333;">Hello Ann &amp; Bo, ' in message["html"]
    assert message["text"] == "Hello Ann & Bo, start (https://example.com/start)."
    shown = (await tenant.get("/v1/templates/welcome")).json()
    assert shown["channels"] == ["email"] and shown["name"] == "Welcome mail"


async def test_a_v2_published_while_a_v1_job_waits_leaves_that_job_alone(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await make_template(tenant)
    await publish(tenant, "welcome", email={"subject": "v1 {{ name }}", "text": "one"})
    first = await send_templated(tenant, template="welcome", data={"name": "A"})
    v2 = await publish(tenant, "welcome", email={"subject": "v2 {{ name }}", "text": "two"})
    assert v2["number"] == 2
    second = await send_templated(tenant, template="welcome", data={"name": "B"})
    assert await deliver(services) == 2
    sent = {m["job_id"]: (m["subject"], m["text"]) for m in await sb.messages("resend")}
    assert sent == {first: ("v1 A", "one"), second: ("v2 B", "two")}
    assert (await job(tenant, first))["template"]["version"] == 1
    assert (await job(tenant, second))["template"]["version"] == 2
    versions = (await tenant.get("/v1/templates/welcome/versions")).json()["data"]
    assert [(v["number"], v["state"]) for v in versions] == [(2, "published"), (1, "retired")]


async def test_locale_falls_back_from_region_to_language_to_the_default(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await make_template(tenant)
    await publish(tenant, "welcome", email={"subject": "Hello", "text": "en"})
    await publish(tenant, "welcome", locale="fr", email={"subject": "Bonjour", "text": "fr"})
    await publish(tenant, "welcome", locale="pt-BR", email={"subject": "Olá", "text": "br"})
    asked = {"fr-CA": "fr", "fr": "fr", "de-DE": "en", "pt-br": "pt-BR", None: "en"}
    jobs = {}
    for locale, _ in asked.items():
        extra = {} if locale is None else {"locale": locale}
        jobs[locale] = await send_templated(tenant, template="welcome", data={}, **extra)
    assert await deliver(services) == len(asked)
    for locale, used in asked.items():
        assert (await job(tenant, jobs[locale]))["template"]["locale"] == used
    texts = sorted(m["text"] for m in await sb.messages("resend"))
    assert texts == sorted(["fr", "fr", "en", "br", "en"])


async def test_a_batch_renders_each_item_with_its_own_data(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await make_template(tenant)
    await publish(tenant, "welcome", email={"subject": "Hi {{ name }}", "text": "t"})
    common = {"from": "hello@acme.example", "template": "welcome"}
    messages = [
        {"to": "a@example.com", "data": {"name": "A"}, **common},
        {"to": "b@example.com", "data": {}, **common},  # lacks name
        {
            "to": "c@example.com",
            "subject": "plain",
            "text": "no template",
            "from": "h@acme.example",
        },
        {"to": "d@example.com", "data": {"name": "D"}, **common, "template": "nope"},
        {"to": "e@example.com", "data": {"name": "E"}, **common},
    ]
    response = await tenant.post("/v1/notifications/email/batch", json={"messages": messages})
    assert response.status_code == 202, response.text
    answer = response.json()
    assert (answer["accepted"], answer["rejected"]) == (3, 2)
    errors = {r["index"]: r["error"] for r in answer["results"] if "error" in r}
    assert errors[1]["code"] == "template_error"
    assert errors[1]["details"]["missing"] == ["name"]
    assert errors[3]["code"] == "template_error"
    assert await deliver(services) == 3
    subjects = {m["to"][0]: m["subject"] for m in await sb.messages("resend")}
    assert subjects == {"a@example.com": "Hi A", "c@example.com": "plain", "e@example.com": "Hi E"}


async def test_sms_and_chat_templates_send_their_rendered_parts(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register_sms(tenant, sandbox, "twilio", 1)
    await register_telegram(tenant, sandbox)
    await make_template(tenant, "code")
    await publish(
        tenant,
        "code",
        sms={"body": "Your code is {{ code }}"},
        chat={"text": "*code* {{ code }}", "format": "markdown"},
    )
    response = await tenant.post(
        "/v1/notifications/sms", json={"to": TO, "template": "code", "data": {"code": "1234"}}
    )
    assert response.status_code == 202, response.text
    sms_id = response.json()["id"]
    response = await tenant.post(
        "/v1/notifications/chat", json={"to": "4242", "template": "code", "data": {"code": "77"}}
    )
    assert response.status_code == 202, response.text
    chat_id = response.json()["id"]
    batch = await tenant.post(
        "/v1/notifications/sms/batch",
        json={"messages": [{"to": TO, "template": "code", "data": {"code": "5"}}]},
    )
    assert batch.json()["accepted"] == 1, batch.text
    assert await deliver(services) == 3
    sms_job = await job(tenant, sms_id)
    assert sms_job["sms"]["segments"] == 1 and sms_job["template"]["version"] == 1
    assert sorted(m["text"] for m in await sb.messages("twilio")) == [
        "Your code is 1234",
        "Your code is 5",
    ]
    [chat] = await sb.messages("telegram")
    assert chat["text"] == "*code* 77" and chat["subject"] == "MarkdownV2"
    assert (await job(tenant, chat_id))["template"]["key"] == "code"


async def test_sends_that_cannot_render_are_422_with_what_to_fix(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await make_template(tenant)
    unpublished = await make_template(tenant, "draft-only")
    response = await tenant.post(
        "/v1/templates/draft-only/versions", json={"email": {"subject": "s", "text": "t"}}
    )
    assert response.status_code == 201
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    await publish(
        tenant, "welcome", email={"subject": "{{ n }} {{ name }}", "text": "t"}, variables=schema
    )
    base = {"to": "a@example.com", "from": "h@acme.example"}
    cases = [
        ({"template": "welcome", "data": {"n": 1}}, "template_error", {"missing": ["name"]}),
        (
            {"template": "welcome", "data": {"n": "x", "name": "a"}},
            "template_error",
            {"invalid": [{"path": "/n", "rule": "type"}]},
        ),
        ({"template": "nope", "data": {}}, "template_error", {"template": "nope"}),
        ({"template": unpublished["id"], "data": {}}, "template_error", None),
        ({"template": "welcome", "subject": "both"}, "validation_error", None),
        ({"data": {"n": 1}, "subject": "s", "text": "t"}, "validation_error", None),
    ]
    for extra, code, details in cases:
        response = await tenant.post("/v1/notifications/email", json={**base, **extra})
        assert response.status_code == 422, (extra, response.text)
        error = response.json()["error"]
        assert error["code"] == code, (extra, error)
        for name, value in (details or {}).items():
            assert error["details"][name] == value, (extra, error)
    # No SMS part: 422 at the SMS endpoint (with an SMS provider, so that is the refusal).
    await stored_provider(services, tenant.tenant_id, Channel.SMS, "vonage", **{"from": "Acme"})
    response = await tenant.post("/v1/notifications/sms", json={"to": TO, "template": "welcome"})
    assert response.status_code == 422
    assert response.json()["error"]["details"]["channels"] == ["email"]
    # The preview answers the same 422, and the parts when the data is right.
    response = await tenant.post("/v1/templates/welcome/preview", json={"data": {"n": 1}})
    assert response.status_code == 422
    assert response.json()["error"]["details"]["missing"] == ["name"]
    response = await tenant.post(
        "/v1/templates/welcome/preview", json={"data": {"n": 2, "name": "Al"}}
    )
    assert response.status_code == 200, response.text
    assert response.json()["email"] == {"subject": "2 Al", "html": None, "text": "t"}


async def test_drafts_change_published_versions_do_not_and_delete_keeps_queued_jobs(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await make_template(tenant)
    response = await tenant.post(
        "/v1/templates/welcome/versions", json={"email": {"subject": "a {{ x }}", "text": "t"}}
    )
    draft = response.json()
    # A draft previews, and an edit is seen by the next render (no stale compiled copy).
    url = f"/v1/templates/welcome/versions/{draft['id']}"
    preview = {"data": {"x": 1}, "version": 1}
    first = await tenant.post("/v1/templates/welcome/preview", json=preview)
    assert first.json()["email"]["subject"] == "a 1", first.text
    edited = await tenant.patch(url, json={"email": {"subject": "b {{ x }}", "text": "t"}})
    assert edited.status_code == 200, edited.text
    again = await tenant.post("/v1/templates/welcome/preview", json=preview)
    assert again.json()["email"]["subject"] == "b 1"
    bad = await tenant.patch(url, json={"email": {"subject": "{% if %}", "text": "t"}})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "template_error"
    assert (await tenant.post(f"{url}/publish")).status_code == 200
    frozen = await tenant.patch(url, json={"email": {"subject": "c", "text": "t"}})
    assert frozen.status_code == 409
    job_id = await send_templated(tenant, template="welcome", data={"x": 9})
    assert (await tenant.delete("/v1/templates/welcome")).status_code == 204
    assert (await tenant.get("/v1/templates/welcome")).status_code == 404
    assert await deliver(services) == 1
    assert (await job(tenant, job_id))["status"] == "COMPLETED"
    [message] = await sb.messages("resend")
    assert message["subject"] == "b 9"
    response = await tenant.post(
        "/v1/notifications/email",
        json={"to": "a@b.co", "from": "c@d.co", "template": "welcome", "data": {"x": 1}},
    )
    assert response.status_code == 422
