"""Homing writes an SMTP subject itself (``homing.email_headers.unstructured``) and
checks the serialised header section (``homing.vendors.smtp.adapter.serialise``), so no
tenant text becomes a field of its own whatever the interpreter's ``email`` package
does with encoded words (CVE-2024-6923: 3.11 before 3.11.10, 3.12 before 3.12.5)."""

from __future__ import annotations

import re
from email.header import decode_header, make_header
from email.message import EmailMessage
from email.policy import SMTP

import pytest
from hypothesis import given
from hypothesis import strategies as st

from homing.email_headers import unstructured
from homing.models import EmailContent, FailureClass
from homing.providers.base import OutgoingEmail, ProviderFailure
from homing.vendors.smtp.adapter import build_message, serialise

ENCODED_BREAK = "=?utf-8?q?Invoice=0D=0AReply-To=3A_evil=40attacker.example?="
PRINTABLE = re.compile(r"[ -~]*")


def _shown(value: str) -> str:
    """What a reader shows for the unstructured value ``value``."""
    return str(make_header(decode_header(value)))


@given(st.text(max_size=400))
def test_the_value_is_printable_ascii_that_shows_the_text_exactly(text: str) -> None:
    value = unstructured("Subject", text)
    lines = value.split("\r\n")
    assert all(PRINTABLE.fullmatch(line) for line in lines)
    assert all(line.startswith(" ") for line in lines[1:])
    if value != text:
        assert len("Subject: ") + len(lines[0]) <= 76
        assert all(len(line) <= 76 for line in lines)
        assert _shown(value) == text.encode("utf-8", "replace").decode("utf-8")


@pytest.mark.parametrize(
    "text",
    [ENCODED_BREAK, "Grüße ✓", "a\tb", "x" * 990, "\u2028", "a =?utf-8?q?b?= c", "🎉" * 30],
)
def test_text_a_reader_would_decode_or_that_is_not_plain_is_encoded(text: str) -> None:
    value = unstructured("Subject", text)
    assert value.startswith("=?utf-8?b?") and _shown(value) == text


def test_plain_text_goes_as_it_is() -> None:
    assert unstructured("Subject", "Your receipt, #42 (paid)") == "Your receipt, #42 (paid)"
    assert unstructured("Subject", "") == ""


def test_a_subject_that_decodes_to_a_field_reaches_the_wire_as_one_field() -> None:
    content = EmailContent(to="a@example.com", from_="b@example.com", subject=ENCODED_BREAK)
    message, _ = build_message(OutgoingEmail("job", content))
    head = serialise(message).partition(b"\r\n\r\n")[0].decode("ascii")
    assert "Reply-To" not in head and "attacker" not in head
    assert message["Subject"] == ENCODED_BREAK


def test_a_field_that_would_not_serialise_intact_is_refused() -> None:
    message = EmailMessage(policy=SMTP.clone(refold_source="none"))
    message["To"] = "a@example.com"
    message.set_raw("X-A", "v\r\nBcc: victim@example.test")
    with pytest.raises(ProviderFailure) as caught:
        serialise(message)
    assert caught.value.failure_class is FailureClass.MESSAGE_PERMANENT
    assert "victim" not in caught.value.detail


def test_the_standard_librarys_own_decoding_never_reaches_the_wire() -> None:
    # On 3.11.7 the header object writes the decoded CR LF raw and serialise refuses it;
    # on a fixed interpreter it is encoded again (or refused): never a field of its own.
    message = EmailMessage(policy=SMTP.clone(refold_source="none"))
    message["Subject"] = ENCODED_BREAK
    try:
        data = serialise(message)
    except ProviderFailure as refused:
        assert refused.failure_class is FailureClass.MESSAGE_PERMANENT
    else:
        assert b"\r\nReply-To:" not in data
