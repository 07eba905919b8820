"""The sandbox's vendor contracts, the Slack recorder and the control API over real HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from homing.sandbox import SandboxServer
from homing.sandbox.state import RecordedMessage, Recorder

SENDGRID_MAIL: dict[str, Any] = {
    "personalizations": [{"to": [{"email": "ada@example.com"}]}],
    "from": {"email": "hello@acme.example", "name": "Acme"},
    "subject": "Welcome",
    "content": [
        {"type": "text/plain", "value": "Hello Ada"},
        {"type": "text/html", "value": "<p>Hello Ada</p>"},
    ],
    "custom_args": {"hjid": "job-sg-1"},
}
RESEND_MAIL: dict[str, Any] = {
    "from": "Acme <hello@acme.example>",
    "to": ["ada@example.com"],
    "subject": "Welcome",
    "text": "Hello Ada",
    "tags": [{"name": "hjid", "value": "job-re-1"}],
}
POSTMARK_MAIL: dict[str, Any] = {
    "From": "Acme <hello@acme.example>",
    "To": "ada@example.com, grace@example.com",
    "Subject": "Welcome",
    "TextBody": "Hello Ada",
    "Metadata": {"hjid": "job-pm-1"},
    "MessageStream": "outbound",
}
MAILGUN_FORM = {
    "from": "Acme <hello@acme.example>",
    "to": ["ada@example.com", "grace@example.com"],
    "subject": "Welcome",
    "text": "Hello Ada",
    "v:hjid": "job-mg-1",
}


@pytest.fixture
async def client(sandbox: SandboxServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=sandbox.base_url, timeout=5) as http:
        yield http


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def recorded(client: httpx.AsyncClient, provider: str) -> list[dict[str, Any]]:
    response = await client.get("/_sandbox/messages", params={"provider": provider})
    assert response.status_code == 200
    messages: list[dict[str, Any]] = response.json()
    return messages


async def test_sendgrid_send_answers_202_with_empty_body_and_message_id(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post(
        "/sendgrid/v3/mail/send", json=SENDGRID_MAIL, headers=bearer("SG.good")
    )
    assert response.status_code == 202
    assert response.content == b""
    message_id = response.headers["X-Message-Id"]
    [message] = await recorded(client, "sendgrid")
    assert message["message_id"] == message_id
    assert message["job_id"] == "job-sg-1"
    assert message["to"] == ["ada@example.com"]
    assert message["from"] == "hello@acme.example"
    assert (message["text"], message["html"]) == ("Hello Ada", "<p>Hello Ada</p>")


async def test_sendgrid_rejects_missing_fields_with_errors_array(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post(
        "/sendgrid/v3/mail/send", json={"subject": "x"}, headers=bearer("SG.good")
    )
    assert response.status_code == 400
    fields = {error["field"] for error in response.json()["errors"]}
    assert {"personalizations", "from.email", "content"} <= fields
    assert await recorded(client, "sendgrid") == []


async def test_sendgrid_scopes_include_mail_send(client: httpx.AsyncClient) -> None:
    response = await client.get("/sendgrid/v3/scopes", headers=bearer("SG.good"))
    assert response.status_code == 200
    assert "mail.send" in response.json()["scopes"]


async def test_resend_send_returns_id_and_records_tag_job_id(client: httpx.AsyncClient) -> None:
    response = await client.post("/resend/emails", json=RESEND_MAIL, headers=bearer("re_good"))
    assert response.status_code == 200
    [message] = await recorded(client, "resend")
    assert message["message_id"] == response.json()["id"]
    assert message["job_id"] == "job-re-1"
    assert message["from"] == "hello@acme.example"


async def test_resend_without_user_agent_is_refused(client: httpx.AsyncClient) -> None:
    request = client.build_request(
        "POST", "/resend/emails", json=RESEND_MAIL, headers=bearer("re_good")
    )
    del request.headers["User-Agent"]
    response = await client.send(request)
    assert response.status_code == 403
    assert await recorded(client, "resend") == []


async def test_resend_idempotency_key_replays_and_records_once(client: httpx.AsyncClient) -> None:
    headers = {**bearer("re_good"), "Idempotency-Key": "job-re-1"}
    first = await client.post("/resend/emails", json=RESEND_MAIL, headers=headers)
    again = await client.post("/resend/emails", json=RESEND_MAIL, headers=headers)
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    [message] = await recorded(client, "resend")
    assert message["idempotency_key"] == "job-re-1"


async def test_resend_idempotency_key_with_other_body_conflicts(client: httpx.AsyncClient) -> None:
    headers = {**bearer("re_good"), "Idempotency-Key": "job-re-1"}
    await client.post("/resend/emails", json=RESEND_MAIL, headers=headers)
    other = {**RESEND_MAIL, "subject": "Changed"}
    response = await client.post("/resend/emails", json=other, headers=headers)
    assert response.status_code == 409
    assert response.json()["name"] == "invalid_idempotent_request"
    assert len(await recorded(client, "resend")) == 1


async def test_resend_domains_lists(client: httpx.AsyncClient) -> None:
    response = await client.get("/resend/domains", headers=bearer("re_good"))
    assert response.status_code == 200
    assert response.json()["object"] == "list"


async def test_postmark_send_answers_error_code_zero(client: httpx.AsyncClient) -> None:
    headers = {"X-Postmark-Server-Token": "pm-good", "Accept": "application/json"}
    response = await client.post("/postmark/email", json=POSTMARK_MAIL, headers=headers)
    assert response.status_code == 200
    body = response.json()
    assert (body["ErrorCode"], body["Message"]) == (0, "OK")
    [message] = await recorded(client, "postmark")
    assert message["message_id"] == body["MessageID"]
    assert message["to"] == ["ada@example.com", "grace@example.com"]
    assert message["job_id"] == "job-pm-1"


async def test_postmark_bad_request_is_422_with_error_code_300(client: httpx.AsyncClient) -> None:
    mail = {key: value for key, value in POSTMARK_MAIL.items() if key != "TextBody"}
    headers = {"X-Postmark-Server-Token": "pm-good"}
    response = await client.post("/postmark/email", json=mail, headers=headers)
    assert response.status_code == 422
    assert response.json()["ErrorCode"] == 300


async def test_postmark_server_check(client: httpx.AsyncClient) -> None:
    response = await client.get("/postmark/server", headers={"X-Postmark-Server-Token": "pm"})
    assert response.status_code == 200
    assert response.json()["Name"]


async def test_mailgun_form_send_returns_bracketed_id(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/mailgun/v3/mg.example.com/messages", data=MAILGUN_FORM, auth=("api", "key-good")
    )
    assert response.status_code == 200
    body = response.json()
    assert body["message"] == "Queued. Thank you."
    assert body["id"].startswith("<") and body["id"].endswith("@mg.example.com>")
    [message] = await recorded(client, "mailgun")
    assert message["message_id"] == body["id"]
    assert message["to"] == ["ada@example.com", "grace@example.com"]
    assert message["job_id"] == "job-mg-1"


async def test_mailgun_multipart_send_is_parsed(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/mailgun/v3/mg.example.com/messages",
        data={**MAILGUN_FORM, "html": "<p>Hello Ada</p>"},
        files={"attachment": ("note.txt", b"attached")},
        auth=("api", "key-good"),
    )
    assert response.status_code == 200
    [message] = await recorded(client, "mailgun")
    assert (message["subject"], message["html"]) == ("Welcome", "<p>Hello Ada</p>")


async def test_mailgun_domains_check(client: httpx.AsyncClient) -> None:
    response = await client.get(
        "/mailgun/v3/domains", params={"limit": 1}, auth=("api", "key-good")
    )
    assert response.status_code == 200
    assert response.json()["total_count"] == 1


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status"),
    [
        ("POST", "/sendgrid/v3/mail/send", {"json": SENDGRID_MAIL}, 401),
        ("GET", "/sendgrid/v3/scopes", {}, 401),
        ("POST", "/resend/emails", {"json": RESEND_MAIL}, 401),
        ("GET", "/resend/domains", {}, 400),
    ],
)
async def test_bearer_key_containing_invalid_is_rejected(
    client: httpx.AsyncClient, method: str, path: str, kwargs: dict[str, Any], status: int
) -> None:
    response = await client.request(method, path, headers=bearer("key-invalid"), **kwargs)
    assert response.status_code == status
    body = response.json()
    assert "errors" in body if path.startswith("/sendgrid") else body["message"]
    assert (await client.get("/_sandbox/stats")).json()["total_received"] == 0


@pytest.mark.parametrize("path", ["/postmark/email", "/postmark/server"])
async def test_postmark_invalid_token_is_401_error_code_10(
    client: httpx.AsyncClient, path: str
) -> None:
    headers = {"X-Postmark-Server-Token": "pm-invalid"}
    if path.endswith("email"):
        response = await client.post(path, json=POSTMARK_MAIL, headers=headers)
    else:
        response = await client.get(path, headers=headers)
    assert response.status_code == 401
    assert response.json()["ErrorCode"] == 10


@pytest.mark.parametrize("path", ["/mailgun/v3/mg.example.com/messages", "/mailgun/v3/domains"])
async def test_mailgun_invalid_key_is_plain_text_forbidden(
    client: httpx.AsyncClient, path: str
) -> None:
    if path.endswith("messages"):
        response = await client.post(path, data=MAILGUN_FORM, auth=("api", "key-invalid"))
    else:
        response = await client.get(path, auth=("api", "key-invalid"))
    assert response.status_code == 401
    assert response.text == "Forbidden"
    assert response.headers["content-type"].startswith("text/plain")


async def test_slack_webhook_answers_ok_and_is_listed(client: httpx.AsyncClient) -> None:
    response = await client.post("/slack/T000/B000/alerts", json={"text": "3 jobs dead"})
    assert (response.status_code, response.text) == (200, "ok")
    [post] = (await client.get("/_sandbox/slack")).json()
    assert post["path"] == "/T000/B000/alerts"
    assert post["payload"] == {"text": "3 jobs dead"}


async def test_slack_webhook_without_text_is_refused(client: httpx.AsyncClient) -> None:
    response = await client.post("/slack/T000/B000/alerts", json={"channel": "#ops"})
    assert (response.status_code, response.text) == (400, "no_text")


async def test_messages_filter_clear_and_stats(client: httpx.AsyncClient) -> None:
    await client.post("/sendgrid/v3/mail/send", json=SENDGRID_MAIL, headers=bearer("SG.good"))
    await client.post("/resend/emails", json=RESEND_MAIL, headers=bearer("re_good"))
    everything = (await client.get("/_sandbox/messages")).json()
    assert [message["provider"] for message in everything] == ["sendgrid", "resend"]
    by_job = await client.get("/_sandbox/messages", params={"job_id": "job-re-1"})
    assert [message["provider"] for message in by_job.json()] == ["resend"]
    stats = (await client.get("/_sandbox/stats")).json()
    assert stats["received"]["sendgrid"] == stats["received"]["resend"] == 1
    assert stats["total_received"] == 2
    assert (await client.delete("/_sandbox/messages")).status_code == 204
    assert (await client.get("/_sandbox/messages")).json() == []
    assert (await client.get("/_sandbox/stats")).json()["total_received"] == 0


async def test_recorder_keeps_only_the_newest_messages() -> None:
    recorder = Recorder(capacity=2)
    for index in range(3):
        recorder.record(
            RecordedMessage(
                provider="smtp",
                to=("a@b.c",),
                sender="x@y.z",
                subject=None,
                text=None,
                html=None,
                message_id=str(index),
            )
        )
    assert [message.message_id for message in recorder.messages()] == ["1", "2"]
    assert recorder.stats()["received"]["smtp"] == 3
