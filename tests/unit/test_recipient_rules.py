"""The pure rules of recipients: time zone and locale shapes, what a send by recipient
is addressed to, and what its Idempotency-Key fingerprint covers."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from homing.api.routes.email import hashed_fields
from homing.api.schemas.email import EmailCreate
from homing.domain.categories import Category
from homing.domain.preferences import PreferenceCheck
from homing.domain.recipients import Recipient
from homing.errors import RecipientUnreachable, UnknownCategory, UnknownRecipient
from homing.managers.recipients import Addressed, Ask, _addressed, check_locale, check_timezone

NOW = datetime(2026, 1, 1, tzinfo=UTC)
ADA = Recipient(
    id="r1",
    tenant_id="t1",
    external_id="ada",
    email="ada@example.com",
    phone=None,
    telegram_chat_id=None,
    slack_channel=None,
    locale=None,
    timezone=None,
    data=None,
    created_at=NOW,
    updated_at=NOW,
)
NEWS = Category(
    tenant_id="t1",
    key="news",
    name="News",
    kind="marketing",
    defaults={"email": False},
    frequency_cap=None,
    quiet_hours=None,
    created_at=NOW,
    updated_at=NOW,
)


@pytest.mark.parametrize("zone", ["UTC", "Europe/Paris", "Etc/GMT+5", "America/Port-au-Prince"])
def test_iana_zones_are_kept(zone: str) -> None:
    assert check_timezone(zone) == zone


@pytest.mark.parametrize(
    "zone", ["../../etc/passwd", "/UTC", "Etc/../UTC", "Nope/Zone", "a" * 65, "Europe/Paris/"]
)
def test_names_that_are_paths_or_no_zone_are_refused(zone: str) -> None:
    with pytest.raises(ValueError, match="IANA"):
        check_timezone(zone)


@pytest.mark.parametrize("tag", ["en", "pt-BR", "zh-Hant-TW", "es-419"])
def test_language_tags_are_kept(tag: str) -> None:
    assert check_locale(tag) == tag


@pytest.mark.parametrize("tag", ["e", "en_US", "en-", "x" * 36, "en-a-b"])
def test_what_is_no_language_tag_is_refused(tag: str) -> None:
    with pytest.raises(ValueError, match="BCP 47"):
        check_locale(tag)


def test_a_send_by_recipient_takes_its_address_and_its_preference() -> None:
    found = _addressed(Ask("ada", "news", "email"), {"ada": ADA}, {"news": NEWS})
    assert found == Addressed(
        address="ada@example.com",
        preference=PreferenceCheck("r1", "news"),
        kind="marketing",
        recipient_id="r1",
    )
    assert _addressed(Ask("ada", None, "email"), {"ada": ADA}, {}) == Addressed(
        address="ada@example.com", preference=None, kind=None, recipient_id="r1"
    )


def test_what_cannot_be_addressed_is_refused_with_its_own_error() -> None:
    assert isinstance(_addressed(Ask("bob", None, "email"), {"ada": ADA}, {}), UnknownRecipient)
    assert isinstance(_addressed(Ask("ada", None, "phone"), {"ada": ADA}, {}), RecipientUnreachable)
    assert isinstance(_addressed(Ask(None, "gone", "email"), {}, {}), UnknownCategory)
    # An address-only send in a category: its kind (marketing sends carry a link), and
    # the check of that address's opt-outs and of the category's cap.
    assert _addressed(Ask(None, "news", "email"), {}, {"news": NEWS}) == Addressed(
        preference=PreferenceCheck(None, "news"), kind="marketing"
    )


def test_a_send_by_recipient_is_fingerprinted_by_the_recipient_not_its_address() -> None:
    body = EmailCreate.model_validate(
        {"recipient": "ada", "from": "a@acme.example", "subject": "s", "text": "t"}
    )
    names = set(EmailCreate.model_fields)
    assert "to" not in hashed_fields(body, names)
    assert "recipient" in hashed_fields(body, names)


def test_a_plain_send_is_fingerprinted_as_before_the_new_fields() -> None:
    body = EmailCreate.model_validate(
        {"to": "ada@example.com", "from": "a@acme.example", "subject": "s", "text": "t"}
    )
    covered = hashed_fields(body, set(EmailCreate.model_fields))
    assert {"recipient", "category", "ttl_seconds"}.isdisjoint(covered)
    assert "to" in covered
