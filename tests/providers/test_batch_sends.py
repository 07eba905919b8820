"""``send_batch`` of the Resend and Postmark adapters: the request, and one outcome per
message classified by the same tables as a single send."""

from __future__ import annotations

import json

import httpx
import pytest

from homing.models import EmailContent, FailureClass
from homing.providers.base import OutgoingEmail, ProviderFailure, SendResult
from homing.vendors.postmark.adapter import PostmarkProvider
from homing.vendors.resend.adapter import ResendProvider
from tests.providers.replying import replying

KEY = "re_secret_key_123"


def email(n: int) -> OutgoingEmail:
    return OutgoingEmail(
        job_id=f"job-{n}",
        content=EmailContent(
            to=f"user{n}@example.com", from_="Acme <a@acme.test>", subject="s", text="t"
        ),
    )


EMAILS = [email(n) for n in range(3)]


async def test_resend_posts_one_array_with_the_batch_key_and_reads_one_id_each() -> None:
    ids = [{"id": f"id-{n}"} for n in range(3)]
    async with replying(httpx.Response(200, json={"data": ids})) as (http, requests):
        outcomes = await ResendProvider({"api_key": KEY}, {}, http).send_batch(
            EMAILS, idempotency_key="homing-batch-x"
        )
    assert [o.provider_message_id for o in outcomes if isinstance(o, SendResult)] == [
        "id-0",
        "id-1",
        "id-2",
    ]
    (request,) = requests
    assert request.url.path == "/emails/batch"
    assert request.headers["Idempotency-Key"] == "homing-batch-x"
    assert request.headers["x-batch-validation"] == "permissive"
    body = json.loads(request.content)
    assert [item["to"] for item in body] == [[f"user{n}@example.com"] for n in range(3)]
    assert body[0]["tags"] == [{"name": "hjid", "value": "job-0"}]


async def test_a_resend_email_refused_in_permissive_mode_fails_alone() -> None:
    body = {"data": [{"id": "id-0"}, {"id": "id-2"}], "errors": [{"index": 1, "message": KEY}]}
    async with replying(httpx.Response(200, json=body)) as (http, _):
        outcomes = await ResendProvider({"api_key": KEY}, {}, http).send_batch(EMAILS)
    first, second, third = outcomes
    assert isinstance(first, SendResult) and first.provider_message_id == "id-0"
    assert isinstance(second, ProviderFailure)
    assert second.failure_class is FailureClass.MESSAGE_PERMANENT
    assert KEY not in second.detail
    assert isinstance(third, SendResult) and third.provider_message_id == "id-2"


@pytest.mark.parametrize(
    ("status", "name", "expected"),
    [
        (422, "validation_error", FailureClass.MESSAGE_PERMANENT),
        (429, "rate_limit_exceeded", FailureClass.THROTTLED),
        (403, "invalid_api_key", FailureClass.PROVIDER_PERMANENT),
        (500, "application_error", FailureClass.TRANSIENT),
    ],
)
async def test_a_resend_refusal_is_the_single_send_class_for_every_item(
    status: int, name: str, expected: FailureClass
) -> None:
    reply = httpx.Response(status, json={"statusCode": status, "name": name, "message": KEY})
    async with replying(reply) as (http, _):
        outcomes = await ResendProvider({"api_key": KEY}, {}, http).send_batch(EMAILS)
    assert len(outcomes) == 3
    assert all(isinstance(o, ProviderFailure) and o.failure_class is expected for o in outcomes)
    assert all(KEY not in o.detail for o in outcomes if isinstance(o, ProviderFailure))


@pytest.mark.parametrize(
    "body",
    [
        {"data": [{"id": "a"}]},
        {"data": "x"},
        [],
        {"data": [{"id": "a"}, {}, {"id": "c"}]},
        {"data": [{"id": "a"}, {"id": "b"}], "errors": [{"index": 7, "message": "?"}]},
        {"data": [{"id": "a"}, {"id": "b"}], "errors": [{"message": "no index"}]},
        {"data": [{"id": "a"}], "errors": [{"index": 1, "message": "?"}]},
    ],
)
async def test_an_unreadable_resend_answer_is_uncertain_for_every_item(body: object) -> None:
    async with replying(httpx.Response(200, json=body)) as (http, _):
        outcomes = await ResendProvider({"api_key": KEY}, {}, http).send_batch(EMAILS)
    assert [o.failure_class for o in outcomes if isinstance(o, ProviderFailure)] == [
        FailureClass.UNCERTAIN
    ] * 3


async def test_a_transport_failure_is_that_failure_for_every_item() -> None:
    async with replying(httpx.ReadTimeout("slow")) as (http, _):
        outcomes = await PostmarkProvider({"api_key": KEY}, {}, http).send_batch(EMAILS)
    classes = {o.failure_class for o in outcomes if isinstance(o, ProviderFailure)}
    assert len(outcomes) == 3 and classes == {FailureClass.UNCERTAIN}


async def test_postmark_classifies_each_item_by_its_error_code() -> None:
    answer = [
        {"ErrorCode": 0, "Message": "OK", "MessageID": "m-0", "To": "user0@example.com"},
        {"ErrorCode": 406, "Message": f"inactive {KEY}", "To": "user1@example.com"},
        {"ErrorCode": 429, "Message": "slow down", "To": "user2@example.com"},
    ]
    async with replying(httpx.Response(200, json=answer)) as (http, requests):
        outcomes = await PostmarkProvider({"api_key": KEY}, {}, http).send_batch(EMAILS)
    assert isinstance(outcomes[0], SendResult) and outcomes[0].provider_message_id == "m-0"
    assert isinstance(outcomes[1], ProviderFailure)
    assert outcomes[1].failure_class is FailureClass.MESSAGE_PERMANENT
    assert KEY not in outcomes[1].detail
    assert isinstance(outcomes[2], ProviderFailure)
    assert outcomes[2].failure_class is FailureClass.THROTTLED
    (request,) = requests
    assert request.url.path == "/email/batch"
    assert [item["Metadata"]["hjid"] for item in json.loads(request.content)] == [
        "job-0",
        "job-1",
        "job-2",
    ]


@pytest.mark.parametrize(
    "body",
    [
        [{"ErrorCode": 0}],
        {"ErrorCode": 0},
        [{"ErrorCode": 0}, {"Message": "?"}, {"ErrorCode": 0}],
        [{"ErrorCode": True}] * 3,
    ],
)
async def test_an_unreadable_postmark_answer_is_uncertain_for_every_item(body: object) -> None:
    async with replying(httpx.Response(200, json=body)) as (http, _):
        outcomes = await PostmarkProvider({"api_key": KEY}, {}, http).send_batch(EMAILS)
    assert [o.failure_class for o in outcomes if isinstance(o, ProviderFailure)] == [
        FailureClass.UNCERTAIN
    ] * 3


async def test_a_batch_beyond_the_vendor_limit_is_never_sent() -> None:
    async with replying(httpx.Response(200, json=[])) as (http, requests):
        with pytest.raises(ValueError):
            await ResendProvider({"api_key": KEY}, {}, http).send_batch([email(0)] * 101)
        with pytest.raises(ValueError):
            await PostmarkProvider({"api_key": KEY}, {}, http).send_batch([])
    assert requests == []
