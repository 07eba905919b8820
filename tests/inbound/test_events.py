"""Reading each vendor's events, the forward-only status, billing and the p95."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from homing.inbound import billing
from homing.inbound.billing import paystack
from homing.inbound.events import EventError, EventType, delivery_status
from homing.inbound.report import p95, summarize
from homing.models import Plan
from homing.vendors.mailgun import parse as mailgun
from homing.vendors.postmark import parse as postmark
from homing.vendors.resend import parse as resend
from homing.vendors.sendgrid import parse as sendgrid


def test_sendgrid_batch_is_split_and_read() -> None:
    body = json.dumps(
        [
            {
                "event": "delivered",
                "email": "a@x.io",
                "timestamp": 1700000000,
                "sg_event_id": "e1",
                "sg_message_id": "MSG1.filterdrecv-1",
                "hjid": "job-1",
            },
            {"event": "bounce", "type": "blocked", "email": "a@x.io", "sg_event_id": "e2"},
            {"event": "dropped", "reason": "Bounced Address", "sg_event_id": "e3"},
            {"event": "dropped", "reason": "Unsubscribed Address", "sg_event_id": "e4"},
        ]
    ).encode()
    entries = sendgrid.split(body, {})
    assert [e.event_id for e in entries] == ["e1", "e2", "e3", "e4"]
    first = sendgrid.interpret(entries[0].payload)
    assert (first.type, first.job_hint, first.message_ids) == (
        EventType.DELIVERED,
        "job-1",
        ("MSG1",),
    )
    assert first.occurred_at == datetime.fromtimestamp(1700000000, UTC)
    kinds = [sendgrid.interpret(e.payload).type for e in entries[1:]]
    assert kinds == [EventType.DEFERRED, EventType.BOUNCED, EventType.INFO]


def test_an_unreadable_body_is_one_entry_with_its_error() -> None:
    [entry] = sendgrid.split(b"not json", {})
    assert entry.error == "the body is not JSON"
    assert entry.raw == "not json"
    assert entry.event_id.startswith("body:")


def test_resend_bounce_type_decides_hard_or_soft() -> None:
    def event(bounce_type: str) -> bytes:
        data = {
            "email_id": "r1",
            "to": ["a@x.io"],
            "tags": {"hjid": "job-1"},
            "bounce": {"type": bounce_type},
        }
        return json.dumps(
            {"type": "email.bounced", "created_at": "2026-05-01T10:00:00Z", "data": data}
        ).encode()

    [hard] = resend.split(event("Permanent"), {"svix-id": "msg_1"})
    assert hard.event_id == "msg_1"
    parsed = resend.interpret(hard.payload)
    assert (parsed.type, parsed.address, parsed.job_hint) == (
        EventType.BOUNCED,
        "a@x.io",
        "job-1",
    )
    [soft] = resend.split(event("Transient"), {"svix-id": "msg_2"})
    assert resend.interpret(soft.payload).type is EventType.DEFERRED
    other = resend.interpret({"type": "contact.updated", "data": {}})
    assert other.type is EventType.OTHER


def test_postmark_records_and_their_ids() -> None:
    bounce = {
        "RecordType": "Bounce",
        "ID": 42,
        "Type": "HardBounce",
        "Email": "a@x.io",
        "BouncedAt": "2026-05-01T10:00:00Z",
        "MessageID": "pm-1",
        "Metadata": {"hjid": "j"},
    }
    [entry] = postmark.split(json.dumps(bounce).encode(), {})
    assert entry.event_id == "Bounce:42"
    parsed = postmark.interpret(entry.payload)
    assert (parsed.type, parsed.address, parsed.message_ids) == (
        EventType.BOUNCED,
        "a@x.io",
        ("pm-1",),
    )
    soft = postmark.interpret({**bounce, "Type": "SoftBounce", "Inactive": False})
    assert soft.type is EventType.DEFERRED
    delivery = {
        "RecordType": "Delivery",
        "MessageID": "pm-1",
        "Recipient": "a@x.io",
        "DeliveredAt": "2026-05-01T10:00:00Z",
    }
    [entry] = postmark.split(json.dumps(delivery).encode(), {})
    assert entry.event_id == "Delivery:pm-1:a@x.io:2026-05-01T10:00:00Z"


def test_mailgun_ids_are_per_day_and_message_ids_lose_brackets() -> None:
    data = {
        "event": "failed",
        "severity": "permanent",
        "id": "abc",
        "timestamp": 1700000000.5,
        "recipient": "a@x.io",
        "message": {"headers": {"message-id": "2024.x@mg.example"}},
    }
    body = json.dumps({"signature": {}, "event-data": data}).encode()
    [entry] = mailgun.split(body, {})
    assert entry.event_id == "2023-11-14:abc"
    parsed = mailgun.interpret(entry.payload)
    assert parsed.type is EventType.BOUNCED
    assert parsed.message_ids == ("<2024.x@mg.example>", "2024.x@mg.example")
    assert mailgun.interpret({**data, "severity": "temporary"}).type is EventType.DEFERRED


def test_interpret_refuses_what_it_cannot_read() -> None:
    with pytest.raises(EventError):
        sendgrid.interpret(["not", "an", "object"])
    with pytest.raises(EventError):
        resend.interpret({"data": {}})


@pytest.mark.parametrize(
    ("types", "expected"),
    [
        ([EventType.BOUNCED, EventType.DELIVERED], EventType.BOUNCED),
        ([EventType.DELIVERED, EventType.BOUNCED], EventType.BOUNCED),
        ([EventType.OPENED, EventType.DELIVERED, EventType.DEFERRED], EventType.OPENED),
        ([EventType.DEFERRED], EventType.DEFERRED),
        ([EventType.INFO], None),
        ([], None),
    ],
)
def test_delivery_status_only_moves_forward(
    types: list[EventType], expected: EventType | None
) -> None:
    assert delivery_status(types) is expected


def test_billing_prices_parse_and_guard_the_amount() -> None:
    prices = billing.parse_prices("INDIE:ngn:500000, STARTUP:USD:2900")
    assert prices == {(Plan.INDIE, "NGN"): 500000, (Plan.STARTUP, "USD"): 2900}
    with pytest.raises(ValueError):
        billing.parse_prices("INDIE:500000")
    payment = billing.Payment("t", Plan.INDIE, 499999, "NGN", "ref")
    with pytest.raises(EventError, match="below"):
        billing.check_price(payment, prices)
    with pytest.raises(EventError, match="no price"):
        billing.check_price(billing.Payment("t", Plan.INDIE, 10, "USD", "r"), prices)


def test_paystack_charge_success_is_a_payment_in_minor_units() -> None:
    body = json.dumps(
        {
            "event": "charge.success",
            "data": {
                "id": 302961,
                "status": "success",
                "reference": "ref-1",
                "amount": 500000,
                "currency": "NGN",
                "paid_at": "2026-05-01T10:00:00Z",
                "metadata": json.dumps({"tenant_id": "t-1", "plan": "indie"}),
            },
        }
    ).encode()
    [entry] = paystack.split(body, {})
    assert entry.event_id == "charge.success:302961"
    event = paystack.interpret(entry.payload)
    assert event.payment == billing.Payment("t-1", Plan.INDIE, 500000, "NGN", "ref-1")
    with pytest.raises(EventError, match="whole number"):
        paystack.interpret(
            {
                "event": "charge.success",
                "data": {
                    "status": "success",
                    "amount": 5000.5,
                    "currency": "NGN",
                    "metadata": {"tenant_id": "t", "plan": "INDIE"},
                },
            }
        )


def test_p95_is_nearest_rank() -> None:
    assert p95([float(n) for n in range(1, 21)]) == 19.0
    assert p95([5.0]) == 5.0
    assert p95([]) is None


async def test_summarize_groups_by_hour_and_type() -> None:
    hour = datetime(2026, 5, 1, 10, tzinfo=UTC)

    async def rows() -> AsyncIterator[tuple[datetime, datetime | None, str | None, str]]:
        for n in range(1, 21):
            received = hour + timedelta(minutes=n)
            yield received, received - timedelta(seconds=n), "delivered", "applied"
        yield hour + timedelta(hours=1), None, None, "quarantined"

    report = await summarize(rows())
    assert [(r.hour, r.type, r.count, r.p95_lag_seconds, r.errors) for r in report] == [
        (hour, "delivered", 20, 19.0, 0),
        (hour + timedelta(hours=1), "unknown", 1, None, 1),
    ]
