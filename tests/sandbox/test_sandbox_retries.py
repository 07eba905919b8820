"""The sandbox retries a refused event post as its vendor does: the same signed body again,
on the vendor's schedule, on a clock the test moves; each vendor's schedule fits inside
the age Homing accepts its signatures for."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from homing.inbound.sources import MAX_AGE, RETRY_WINDOWS
from homing.inbound.verification import RETRY_MARGIN
from homing.sandbox import SandboxServer
from homing.sandbox.retries import MAX_CLOCK_SECONDS, SCHEDULES, Pending, RetryBook
from homing.sandbox.state import RecordedMessage
from tests.fixtures import serving


@dataclass
class Receiver:
    """Answers each post with the next scripted status (then 200) and keeps what came."""

    statuses: list[int] = field(default_factory=list)
    posts: list[tuple[bytes, dict[str, str]]] = field(default_factory=list)

    async def endpoint(self, request: Request) -> Response:
        self.posts.append((await request.body(), dict(request.headers)))
        status = self.statuses.pop(0) if self.statuses else 200
        return JSONResponse({"ok": status < 300}, status_code=status)


@dataclass
class Rig:
    http: httpx.AsyncClient
    server: SandboxServer
    receiver: Receiver
    url: str

    async def event(self, provider: str, kind: str = "bounce") -> dict[str, Any]:
        message = RecordedMessage(
            provider=provider,
            to=("ada@example.com",),
            sender="hello@acme.example",
            subject="Welcome",
            text="Hi",
            html=None,
            message_id="<m-1@sandbox>",
            job_id="job-1",
        )
        self.server.state.recorder.record(message)
        payload = {
            "provider": provider,
            "type": kind,
            "target_url": self.url,
            "message_to": "ada@example.com",
        }
        response = await self.http.post("/_sandbox/events", json=payload)
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()
        return result

    async def advance(self, seconds: float) -> dict[str, Any]:
        response = await self.http.post("/_sandbox/events/retry", json={"advance_seconds": seconds})
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()
        return result


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    receiver = Receiver()
    app = Starlette(routes=[Route("/hook", receiver.endpoint, methods=["POST"])])
    async with serving(app) as base, SandboxServer(smtp_port=None) as server:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as http:
            yield Rig(http, server, receiver, base + "/hook")


async def test_a_refused_mailgun_event_is_posted_again_unchanged_on_mailguns_schedule(
    rig: Rig,
) -> None:
    rig.receiver.statuses = [503, 429, 500]
    first = await rig.event("mailgun")
    assert first["status"] == 503 and first["retry_at"] is not None
    assert (await rig.advance(299))["posted"] == [], "Mailgun's first retry is after 5 minutes"
    assert [p["status"] for p in (await rig.advance(1))["posted"]] == [429]
    assert [p["status"] for p in (await rig.advance(600))["posted"]] == [500]
    third = await rig.advance(900)
    assert [(p["status"], p["attempts"], p["retry_at"]) for p in third["posted"]] == [
        (200, 4, None)
    ]
    assert third["pending"] == []
    assert len({body for body, _ in rig.receiver.posts}) == 1, "the same signed body each time"
    assert (await rig.advance(10 * 3600))["posted"] == []
    attempts = [p["attempt"] for p in (await rig.http.get("/_sandbox/events")).json()]
    assert attempts == [1, 2, 3, 4]


async def test_mailgun_stops_at_406_and_does_not_retry_delivered(rig: Rig) -> None:
    rig.receiver.statuses = [406, 500]
    assert (await rig.event("mailgun"))["retry_at"] is None
    assert (await rig.event("mailgun", "delivered"))["retry_at"] is None
    assert (await rig.advance(8 * 3600))["posted"] == []


async def test_resend_retries_are_signed_anew_with_the_same_svix_id(rig: Rig) -> None:
    rig.receiver.statuses = [500]
    await rig.event("resend")
    assert [p["status"] for p in (await rig.advance(5))["posted"]] == [200]
    (body1, first), (body2, retry) = rig.receiver.posts
    assert body1 == body2 and first["svix-id"] == retry["svix-id"]
    assert int(retry["svix-timestamp"]) - int(first["svix-timestamp"]) in (5, 6)
    assert first["svix-signature"] != retry["svix-signature"]


async def test_an_unreachable_receiver_is_retried_and_vonage_stops_at_a_401(rig: Rig) -> None:
    refused = await rig.http.post(
        "/_sandbox/events",
        json={"provider": "sendgrid", "type": "bounce", "target_url": "http://127.0.0.1:9/x"},
    )
    assert refused.status_code == 404, "no sendgrid message recorded yet"
    rig.server.state.recorder.record(
        RecordedMessage(
            provider="sendgrid",
            to=("ada@example.com",),
            sender="a@acme.example",
            subject="s",
            text="t",
            html=None,
            message_id="m",
        )
    )
    unreachable = {"target_url": "http://127.0.0.1:9/x", "message_to": "ada@example.com"}
    down = await rig.http.post(
        "/_sandbox/events", json={"provider": "sendgrid", "type": "bounce", **unreachable}
    )
    assert down.status_code == 502
    [pending] = (await rig.http.get("/_sandbox/events/retry")).json()
    assert pending["provider"] == "sendgrid" and pending["attempts"] == 1
    rig.receiver.statuses = [401]
    await rig.event("vonage", "delivered")
    assert [p["provider"] for p in (await rig.http.get("/_sandbox/events/retry")).json()] == [
        "sendgrid"
    ]


async def test_the_clock_can_start_in_the_past_and_refuses_nonsense(rig: Rig) -> None:
    set_back = await rig.http.post("/_sandbox/clock", json={"offset_seconds": -3600})
    assert set_back.json()["offset_seconds"] == -3600
    await rig.event("sendgrid")
    body, headers = rig.receiver.posts[0]
    stamp = int(headers["x-twilio-email-event-webhook-timestamp"])
    assert abs(stamp - (set_back.json()["now"])) < 5
    assert json.loads(body)[0]["timestamp"] == stamp
    for bad in (
        {"advance_seconds": -1},
        {"advance_seconds": MAX_CLOCK_SECONDS + 1},
        {"advance_seconds": "10"},
        {"advance_seconds": True},
        [],
    ):
        response = await rig.http.post("/_sandbox/events/retry", json=bad)
        assert response.status_code == 400, bad
    bad_offset = await rig.http.post("/_sandbox/clock", json={"offset_seconds": 10**12})
    assert bad_offset.status_code == 400
    assert (await rig.http.post("/_sandbox/reset")).status_code == 204
    assert (await rig.http.get("/_sandbox/clock")).json()["offset_seconds"] == 0


def test_pending_retries_are_bounded_oldest_dropped() -> None:
    book = RetryBook(capacity=3)
    for n in range(5):
        pending = Pending(
            provider="mailgun",
            kind="bounce",
            url=f"http://x/{n}",
            body=b"{}",
            headers={},
            job_id=None,
            first_at=0.0,
            due_at=0.0,
        )
        assert book.after_failure(pending, 500, float(n))
    assert [p["url"] for p in book.listing()] == ["http://x/2", "http://x/3", "http://x/4"]


@pytest.mark.parametrize("vendor", sorted(RETRY_WINDOWS))
def test_each_vendors_retries_fit_the_age_homing_accepts_its_signature_for(vendor: str) -> None:
    window = SCHEDULES[vendor].window
    assert 0 < window <= RETRY_WINDOWS[vendor], "the sandbox retries as long as the vendor"
    assert MAX_AGE[vendor] >= window + RETRY_MARGIN


def test_every_vendor_that_retries_with_its_first_timestamp_has_a_window() -> None:
    untimed = {"postmark", "twilio", "telegram"}  # HTTP Basic, URL + form, a header
    first_signature = {
        vendor for vendor, schedule in SCHEDULES.items() if schedule.delays and not schedule.resigns
    }
    assert first_signature - untimed == set(RETRY_WINDOWS)
    assert "resend" not in MAX_AGE, "Svix signs each attempt: its own five minutes hold"
