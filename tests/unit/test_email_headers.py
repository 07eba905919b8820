"""The rules an email's extra header fields keep (``homing.email_headers``), and the
dispatcher refusing a stored payload that breaks them before any provider is called."""

from __future__ import annotations

from typing import Any

import pytest

from homing.dispatch.batching import batchable
from homing.dispatch.senders import EmailSender
from homing.email_headers import MAX_HEADERS, MAX_TOTAL, InvalidHeaders, email_headers
from homing.managers.retention import SCRUBBED, scrub_payload
from homing.models import (
    EmailContent,
    FailureClass,
    Job,
)
from homing.providers.base import ProviderFailure
from tests.job_values import a_job

RFC_8058 = [
    ["List-Unsubscribe", "<https://example.test/u/abc>, <mailto:u@example.test>"],
    ["List-Unsubscribe-Post", "List-Unsubscribe=One-Click"],
]


def test_rfc_8058_fields_pass_in_order() -> None:
    assert email_headers(RFC_8058) == tuple(tuple(pair) for pair in RFC_8058)
    assert email_headers(None) == email_headers([]) == ()


@pytest.mark.parametrize(
    "fields",
    [
        [["X-A", "one\r\nBcc: victim@example.test"]],  # header injection
        [["X-A", "one\n two"]],  # folding by hand
        [["X-A", "nul\x00"]],
        [["X-A", "caf\u00e9"]],  # non-ASCII value
        [["X-\u00c4", "v"]],  # non-ASCII name
        [["X A", "v"]],
        [["X:A", "v"]],
        [["", "v"]],
        [["X-" + "a" * 80, "v"]],
        [["X-A", "v" * 901]],
        [["X-A", "v"], ["x-a", "w"]],  # twice, ignoring case
        [["X-A"]],
        [["X-A", 1]],
        "X-A: v",
        {"X-A": "v"},
    ],
)
def test_malformed_fields_are_refused(fields: Any) -> None:
    with pytest.raises(InvalidHeaders):
        email_headers(fields)


@pytest.mark.parametrize(
    "name",
    [
        "From",
        "to",
        "BCC",
        "Subject",
        "Date",
        "Message-ID",
        "Content-Type",
        "content-transfer-encoding",
        "MIME-Version",
        "DKIM-Signature",
        "Received",
        "Return-Path",
        "Reply-To",
        "X-Homing-Job-Id",
        "X-SG-ID",
        "ARC-Seal",
        "Resent-From",
        "X-Mailgun-Variables",
    ],
)
def test_fields_homing_or_the_vendor_owns_are_refused(name: str) -> None:
    with pytest.raises(InvalidHeaders, match="set by Homing or the vendor"):
        email_headers([[name, "v"]])


def test_count_and_total_size_are_bounded() -> None:
    email_headers([[f"X-{n}", "v"] for n in range(MAX_HEADERS)])
    with pytest.raises(InvalidHeaders):
        email_headers([[f"X-{n}", "v"] for n in range(MAX_HEADERS + 1)])
    with pytest.raises(InvalidHeaders):
        email_headers([["X-1000", "v"]] * 1000)
    with pytest.raises(InvalidHeaders, match="in all"):
        email_headers([[f"X-{n}", "v" * 890] for n in range(MAX_TOTAL // 890 + 1)])


def test_no_email_content_holds_refused_fields() -> None:
    with pytest.raises(InvalidHeaders):
        EmailContent(to="a@b.test", from_="c@d.test", subject="s", headers=(("To", "x@y.test"),))


def _job(payload: dict[str, Any]) -> Job:
    return a_job(id="job-1", tenant_id="t1", payload=payload)


PAYLOAD = {"to": "ada@example.com", "from": "a@acme.test", "subject": "s", "text": "t"}


def test_the_sender_reads_the_payload_fields_and_a_headed_job_still_batches() -> None:
    job = _job({**PAYLOAD, "headers": RFC_8058})
    assert EmailSender.outgoing(job).content.headers == tuple(tuple(p) for p in RFC_8058)
    assert batchable(job)


def test_a_stored_payload_breaking_the_rules_is_message_permanent() -> None:
    job = _job({**PAYLOAD, "headers": [["X-A", "v\r\nBcc: victim@example.test"]]})
    with pytest.raises(ProviderFailure) as info:
        EmailSender.outgoing(job)
    assert info.value.failure_class is FailureClass.MESSAGE_PERMANENT
    assert "victim" not in info.value.detail


def test_retention_scrubs_the_fields_with_the_bodies() -> None:
    # An unsubscribe link names its recipient; a redrive of the scrubbed job is refused.
    scrubbed = scrub_payload({**PAYLOAD, "headers": RFC_8058})
    assert scrubbed["headers"] == SCRUBBED
    with pytest.raises(ProviderFailure):
        EmailSender.outgoing(_job(scrubbed))
