"""The sandbox's SendGrid and Mailgun batch requests keep the vendors' limits: more
than 1,000 personalizations or recipients, an address twice, substitutions or custom
args over 10,000 bytes, unreadable recipient variables: one 400, nothing recorded."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import pytest

from homing.sandbox.server import SandboxServer

SG = {"Authorization": "Bearer SG.key"}
MG = ("api", "key-1")


@pytest.fixture
async def http() -> AsyncIterator[tuple[httpx.AsyncClient, SandboxServer]]:
    async with (
        SandboxServer(port=0, smtp_port=None) as server,
        httpx.AsyncClient(base_url=server.base_url) as client,
    ):
        yield client, server


def personalization(n: int, **extra: object) -> dict[str, object]:
    return {"to": [{"email": f"u{n}@example.com"}], "custom_args": {"hjid": f"j{n}"}, **extra}


def mail(personalizations: list[dict[str, object]]) -> dict[str, object]:
    return {
        "personalizations": personalizations,
        "from": {"email": "a@acme.example"},
        "subject": "Hi -name-",
        "content": [{"type": "text/plain", "value": "Hello -name-"}],
    }


async def test_sendgrid_refuses_a_request_beyond_its_limits(
    http: tuple[httpx.AsyncClient, SandboxServer],
) -> None:
    client, server = http
    send = "/sendgrid/v3/mail/send"
    over = await client.post(send, json=mail([personalization(n) for n in range(1001)]), headers=SG)
    assert over.status_code == 400
    assert "limited to 1000 personalizations" in over.json()["errors"][0]["message"]
    twice = await client.post(send, json=mail([personalization(1), personalization(1)]), headers=SG)
    assert twice.status_code == 400
    assert "only be included once" in twice.json()["errors"][0]["message"]
    large = personalization(1, substitutions={"-name-": "x" * 10_000})
    too_big = await client.post(send, json=mail([large]), headers=SG)
    assert too_big.status_code == 400
    assert too_big.json()["errors"][0]["field"] == "personalizations.0.substitutions"
    assert server.state.messages("sendgrid") == []


async def test_sendgrid_records_one_message_per_personalization_substituted(
    http: tuple[httpx.AsyncClient, SandboxServer],
) -> None:
    client, server = http
    items = [personalization(n, substitutions={"-name-": f"N{n}"}) for n in range(3)]
    answer = await client.post("/sendgrid/v3/mail/send", json=mail(items), headers=SG)
    assert answer.status_code == 202
    recorded = server.state.messages("sendgrid")
    assert [(m.job_id, m.subject, m.text) for m in recorded] == [
        (f"j{n}", f"Hi N{n}", f"Hello N{n}") for n in range(3)
    ]
    assert {m.message_id for m in recorded} == {answer.headers["X-Message-Id"]}


async def test_mailgun_refuses_too_many_recipients_or_bad_variables(
    http: tuple[httpx.AsyncClient, SandboxServer],
) -> None:
    client, server = http
    send = "/mailgun/v3/mg.acme.test/messages"
    base = {"from": "a@acme.example", "subject": "s", "text": "t"}
    many = {**base, "to": [f"u{n}@example.com" for n in range(1001)]}
    over = await client.post(send, data=many, auth=MG)
    assert over.status_code == 400
    bad = {**base, "to": "u@example.com", "recipient-variables": "[1]"}
    assert (await client.post(send, data=bad, auth=MG)).status_code == 400
    assert server.state.messages("mailgun") == []


async def test_mailgun_records_one_message_per_recipient_with_its_variables(
    http: tuple[httpx.AsyncClient, SandboxServer],
) -> None:
    client, server = http
    variables = {f"u{n}@example.com": {"hjid": f"j{n}", "name": f"N{n}"} for n in range(3)}
    form = {
        "from": "a@acme.example",
        "to": list(variables),
        "subject": "Hi %recipient.name%",
        "text": "Hello %recipient.name% %recipient.missing%",
        "v:hjid": "%recipient.hjid%",
        "recipient-variables": json.dumps(variables),
    }
    answer = await client.post("/mailgun/v3/mg.acme.test/messages", data=form, auth=MG)
    assert answer.status_code == 200
    recorded = server.state.messages("mailgun")
    assert [(m.to, m.job_id, m.subject, m.text) for m in recorded] == [
        ((f"u{n}@example.com",), f"j{n}", f"Hi N{n}", f"Hello N{n} %recipient.missing%")
        for n in range(3)
    ]
    assert {m.message_id for m in recorded} == {answer.json()["id"]}
